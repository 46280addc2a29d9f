/**
 * Argument parsing of `switchboard` with `node:util` parseArgs: strict (unknown options are usage
 * errors), one option table per command, and a command name that defaults to `start`. Options may
 * come before or after the command (`switchboard --config x.yaml check`): the command is the first
 * word that is neither an option nor an option's value.
 */

import { type ParseArgsConfig, parseArgs } from "node:util";
import { SwitchboardError } from "../../agent/errors.js";
import type { Env } from "../config/env.js";
import { closest } from "../config/errors.js";
import type { HttpOverrides } from "../config/loader.js";
import { COMMANDS, type CommandName } from "./help.js";
import { COMMAND_PLATFORMS, type CommandPlatform, ROLES, type Role } from "./types.js";
import { parseWhen, USAGE_FORMATS, type UsageFormat, type When } from "./usage.js";

export type ParsedCommand =
  | { kind: "help"; topic?: CommandName }
  | { kind: "version" }
  | { kind: "start"; config?: string; role: Role; http?: HttpOverrides }
  | { kind: "check"; config?: string; offline: boolean; role: Role; http?: HttpOverrides }
  | { kind: "health"; config?: string; http?: HttpOverrides }
  | { kind: "export"; config?: string; threadKey: string; sessionId?: string; output?: string }
  | { kind: "import"; config?: string; file: string; threadKey?: string }
  | { kind: "usage"; config?: string; since: When; until?: When; format: UsageFormat }
  | { kind: "register-commands"; config?: string; platforms: CommandPlatform[] };

/** A command line that cannot be run as written; `command` picks the help to point at. */
export class UsageError extends SwitchboardError {
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super("cli.usage", message);
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

const COMMON: Options = {
  config: { type: "string", short: "c" },
  help: { type: "boolean", short: "h" },
};

/** Where the HTTP server listens; overrides `http.port` / `http.host` of the file and `PORT`. */
const LISTEN: Options = {
  port: { type: "string" },
  host: { type: "string" },
};

const OPTIONS: Record<CommandName, Options> = {
  start: { ...COMMON, ...LISTEN, role: { type: "string", short: "r" } },
  check: { ...COMMON, ...LISTEN, offline: { type: "boolean" }, role: { type: "string", short: "r" } },
  health: { ...COMMON, ...LISTEN },
  export: { ...COMMON, session: { type: "string", short: "s" }, output: { type: "string", short: "o" } },
  import: { ...COMMON, thread: { type: "string", short: "t" } },
  usage: {
    ...COMMON,
    since: { type: "string" },
    until: { type: "string" },
    format: { type: "string", short: "f" },
  },
  "register-commands": { ...COMMON, platform: { type: "string", short: "p", multiple: true } },
};

const POSITIONALS: Record<CommandName, string[]> = {
  start: [],
  check: [],
  health: [],
  export: ["thread"],
  import: ["file"],
  usage: [],
  "register-commands": [],
};

/** Names (`--config`, `-c`) of every option that takes a value, in any command. */
const VALUE_OPTIONS = new Set(
  Object.values(OPTIONS).flatMap((table) =>
    Object.entries(table)
      .filter(([, o]) => o.type === "string")
      .flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]),
  ),
);

/** Index of the command word in `args`: the first token that is no option and no option's value. */
function commandIndex(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--") return i + 1 < args.length ? i + 1 : -1;
    if (!a.startsWith("-") || a === "-") return i;
    if (!a.includes("=") && VALUE_OPTIONS.has(a)) i++;
  }
  return -1;
}

function parseFor(command: CommandName, args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS[command], allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs messages are clear ("Unknown option '--rol'"); drop its generic advice.
    const text = (err as Error).message.split(". To specify a positional")[0] ?? String(err);
    throw new UsageError(text, command);
  }
}

function oneOf<T extends string>(
  value: string,
  allowed: readonly T[],
  what: string,
  command: CommandName,
): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${what} must be one of ${allowed.join(", ")} (got "${value}")`, command);
}

function httpOverrides(values: Record<string, unknown>, command: CommandName): HttpOverrides | undefined {
  const out: HttpOverrides = {};
  if (typeof values.port === "string") {
    const port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) {
      throw new UsageError(`--port must be a port number from 0 to 65535 (got "${values.port}")`, command);
    }
    out.port = port;
  }
  if (typeof values.host === "string") {
    if (values.host.trim() === "") throw new UsageError("--host must not be empty", command);
    out.host = values.host;
  }
  return out.port === undefined && out.host === undefined ? undefined : out;
}

/** Parses `argv` (without `node` and the script). Throws `UsageError` for anything it cannot run. */
export function parseCommandLine(argv: readonly string[], env: Env = {}): ParsedCommand {
  const args = [...argv];
  const at = commandIndex(args);
  const word = at === -1 ? undefined : args[at];
  if (word === undefined) {
    if (args.includes("-v") || args.includes("--version")) return { kind: "version" };
    if (args.includes("-h") || args.includes("--help")) return { kind: "help" };
  }
  if (word === "help") {
    const topic = args[at + 1];
    if (topic === undefined) return { kind: "help" };
    if ((COMMANDS as readonly string[]).includes(topic)) return { kind: "help", topic: topic as CommandName };
    throw new UsageError(`unknown command "${topic}"`);
  }
  let command: CommandName = "start";
  if (word !== undefined) {
    if (!(COMMANDS as readonly string[]).includes(word)) {
      const guess = closest(word, COMMANDS);
      throw new UsageError(`unknown command "${word}"${guess ? `; did you mean "${guess}"?` : ""}`);
    }
    command = word as CommandName;
    args.splice(at, 1);
  }

  const { values, positionals } = parseFor(command, args);
  if (values.help === true) return { kind: "help", topic: command };
  const expected = POSITIONALS[command];
  if (positionals.length > expected.length) {
    throw new UsageError(`unexpected argument "${positionals[expected.length]}"`, command);
  }
  if (positionals.length < expected.length) {
    throw new UsageError(`missing <${expected[positionals.length]}>`, command);
  }
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const config = str(values.config);
  const withConfig = config === undefined ? {} : { config };
  const http = httpOverrides(values, command);
  const withHttp = http ? { http } : {};

  switch (command) {
    case "start": {
      const raw = str(values.role) ?? (env.SWITCHBOARD_ROLE || "all");
      return { kind: "start", ...withConfig, role: oneOf(raw, ROLES, "--role", command), ...withHttp };
    }
    case "check": {
      const raw = str(values.role) ?? (env.SWITCHBOARD_ROLE || "all");
      const role = oneOf(raw, ROLES, "--role", command);
      return { kind: "check", ...withConfig, offline: values.offline === true, role, ...withHttp };
    }
    case "health":
      return { kind: "health", ...withConfig, ...withHttp };
    case "export": {
      const sessionId = str(values.session);
      const output = str(values.output);
      return {
        kind: "export",
        ...withConfig,
        threadKey: positionals[0] as string,
        ...(sessionId === undefined ? {} : { sessionId }),
        ...(output === undefined ? {} : { output }),
      };
    }
    case "import": {
      const threadKey = str(values.thread);
      return {
        kind: "import",
        ...withConfig,
        file: positionals[0] as string,
        ...(threadKey === undefined ? {} : { threadKey }),
      };
    }
    case "usage": {
      const when = (option: "since" | "until"): When | undefined => {
        const text = str(values[option]);
        if (text === undefined) return undefined;
        const w = parseWhen(text);
        if (typeof w === "string") throw new UsageError(`--${option}: ${w}`, command);
        return w;
      };
      const since = when("since");
      if (!since) throw new UsageError("--since is required, e.g. --since 2026-11-01 or --since 7d", command);
      const until = when("until");
      const format = oneOf(str(values.format) ?? "csv", USAGE_FORMATS, "--format", command);
      return { kind: "usage", ...withConfig, since, ...(until ? { until } : {}), format };
    }
    case "register-commands": {
      const names = Array.isArray(values.platform) ? values.platform.map(String) : [];
      const platforms = names.map((p) => oneOf(p, COMMAND_PLATFORMS, "--platform", command));
      return { kind: "register-commands", ...withConfig, platforms: [...new Set(platforms)] };
    }
  }
}
