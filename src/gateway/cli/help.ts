/** Help texts of the `switchboard` command, one per subcommand. */

export type CommandName = "start" | "check" | "health" | "export" | "import" | "usage" | "register-commands";
export const COMMANDS: readonly CommandName[] = [
  "start",
  "check",
  "health",
  "export",
  "import",
  "usage",
  "register-commands",
];

const CONFIG_OPTION =
  "  -c, --config <path>   Config file. Default: $SWITCHBOARD_CONFIG, else ./switchboard.yaml,\n" +
  "                        ./switchboard.yml or ./config/switchboard.yaml; with none, built-in defaults.";
const HELP_OPTION = "  -h, --help            Show this help.";
const LISTEN_OPTIONS =
  "      --port <port>     HTTP port (0: any free port). Default: $PORT, else http.port, else 8787.\n" +
  "      --host <address>  Address the HTTP server binds. Default: http.host, else 127.0.0.1.";
const EXIT_CODES = "Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.";

const GLOBAL_HELP = `switchboard: an LLM agent in your team chat (Slack, Discord, Telegram, web chat)

Usage: switchboard [command] [options]      (options may also come before the command)

Commands:
  start               Run Switchboard (the default when no command is given)
  check               Validate the config; check Redis and the platform APIs are reachable
  health              Ask the running Switchboard's /healthz (for container health checks)
  export <thread>     Write a thread's session as pi JSONL
  import <file>       Load a pi JSONL session file into a thread
  usage               Print what model calls spent per day, scope and model (CSV or JSON)
  register-commands   Register the native slash commands with the platforms

Options:
${CONFIG_OPTION}
${HELP_OPTION} Use "switchboard <command> --help" for a command.
  -v, --version         Print the version.

With no config file and no REDIS_URL, "switchboard start" runs everything in one process with
files under ./data and serves the web chat on http://127.0.0.1:8787.
See docs/configuration.md for every setting and environment variable.

${EXIT_CODES}
`;

const COMMAND_HELP: Record<CommandName, string> = {
  start: `Usage: switchboard start [--role all|gateway|worker] [--port <port>] [--host <address>] [--config <path>]

Runs Switchboard until SIGINT or SIGTERM, then shuts down gracefully (a second signal exits at once).

Options:
  -r, --role <role>     all (default): everything in one process; works without Redis.
                        gateway: platform connections, dispatcher and HTTP server (needs Redis).
                        worker: runs agents for every gateway (needs Redis; start as many as you like).
                        Default: $SWITCHBOARD_ROLE, else all.
${LISTEN_OPTIONS}
${CONFIG_OPTION}
${HELP_OPTION}

${EXIT_CODES}
`,
  check: `Usage: switchboard check [--role all|gateway|worker] [--config <path>] [--offline] [--port <port>] [--host <address>]

Finds everything "switchboard start" would refuse, through the code start runs, with the same
messages: each problem with the path and line of the field (e.g. "channels.telegram.mode (line 3):
must be one of ..."), token shapes, data and workspace directories that cannot be created, a port in
use, what the role needs (Redis for gateway and worker), extension modules that cannot be loaded,
unknown model ids and tool names with the closest known ones. When the config is valid, shows what
would run and checks that Redis and each enabled platform's API answer with the configured
credentials, and sends each configured model a one-token request.

Options:
  -r, --role <role>     The role to check for, as start takes it. Default: $SWITCHBOARD_ROLE, else all.
      --offline         Check the config and this machine only; contact nothing.
${LISTEN_OPTIONS}
${CONFIG_OPTION}
${HELP_OPTION}

Exit codes: 0 all good, 1 something is unreachable, 2 the config is invalid (a platform or a model
that refuses its credentials included).
`,
  health: `Usage: switchboard health [--config <path>] [--port <port>] [--host <address>]

Asks the Switchboard running with this config for /healthz, at the address "start" would listen
on (the config file, $PORT, --port), and prints the answer. For container health checks.

Options:
${LISTEN_OPTIONS}
${CONFIG_OPTION}
${HELP_OPTION}

Exit codes: 0 healthy, 1 no healthy answer, 2 usage or config error.
`,
  export: `Usage: switchboard export <thread> [--session <id>] [--output <file>] [--config <path>]

Writes the session of a thread as pi session JSONL (format v3), which pi's own tools open.
<thread> is the thread key, e.g. slack:T01:C02:1712345678.123 or telegram:-1001:0:42
(/status in the thread shows it).

Options:
  -s, --session <id>    Export this session of the thread instead of the current one
                        (each /new starts a new session; old ones are kept).
  -o, --output <file>   Write to a file instead of standard output.
${CONFIG_OPTION}
${HELP_OPTION}

${EXIT_CODES}
`,
  import: `Usage: switchboard import <file> [--thread <key>] [--config <path>]

Loads a pi session JSONL file (a header line with "type": "session", then entries) as a new
session, and prints the thread it landed in. Without --thread it becomes a new web chat
conversation, named after its first message and showing its turns, and the address that opens it
is printed.

Options:
  -t, --thread <key>    Thread to import into (its current session is kept, the import becomes
                        the current one). A web chat thread is web:c followed by 4 to 32 letters
                        or digits. Default: a new web chat conversation.
${CONFIG_OPTION}
${HELP_OPTION}

${EXIT_CODES}
`,
  usage: `Usage: switchboard usage --since <when> [--until <when>] [--format csv|json] [--config <path>]

Prints the budget ledger's usage rows (docs/budgets.md): what each user, channel and the whole
deployment spent on each model per day, in USD, tokens and calls, for every day (in
budgets.timeZone) that overlaps the range. Reads the ledger of the config's mode, the embedded
mode's <dataDir>/budgets.json or Redis; starts nothing.

<when> is a date (2026-11-01: the start of that day in budgets.timeZone), an instant with its zone
(2026-11-01T09:00:00Z, 2026-11-01T09:00+01:00) or a duration back from now (24h, 7d, 2w).

Options:
      --since <when>    Start of the range (required).
      --until <when>    End of the range, not included. Default: now.
  -f, --format <fmt>    csv (default): a header line day,scope,key,model,usd,tokens,calls, then
                        one line per row (RFC 4180 quoting); json: one array of objects.
${CONFIG_OPTION}
${HELP_OPTION}

${EXIT_CODES}
`,
  "register-commands": `Usage: switchboard register-commands [--platform slack|discord|telegram ...] [--config <path>]

Registers /model, /thinking, /new, /compact, /stop, /status, /steer, /followup and /help as native
commands where the platform has them (Discord application commands, Telegram setMyCommands).
Slack slash commands are declared in the Slack app's manifest.

Options:
  -p, --platform <name> Only this platform (repeatable). Default: every enabled platform.
${CONFIG_OPTION}
${HELP_OPTION}

${EXIT_CODES}
`,
};

/** The help of `command`, or the overview. */
export function helpText(command?: CommandName): string {
  return command ? COMMAND_HELP[command] : GLOBAL_HELP;
}
