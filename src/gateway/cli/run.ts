/**
 * `runCli`: the whole `switchboard` command as one function returning the exit code. It parses the
 * arguments and answers `--help`/`--version` at once; every other command loads the rest of the
 * frame (config, logger, dispatch to the wiring code's handlers) on demand, so help stays instant.
 * `src/main.ts` calls it and sets `process.exitCode`.
 */
import { readFileSync } from "node:fs";
import { type ParsedCommand, parseCommandLine, UsageError } from "./args.js";
import { helpText } from "./help.js";
import { type CliDeps, type CliIO, EXIT } from "./types.js";

/** The reader of standard output went away (`switchboard check | head -1`): nothing more is written. */
let stdoutClosed = false;

const processIO: CliIO = {
  stdout: (text) => {
    if (!stdoutClosed) process.stdout.write(text);
  },
  stderr: (text) => process.stderr.write(text),
};

/**
 * A closed pipe on standard output (`… | head`) ends a command quietly, exit 0, as it does for
 * `cat` and `ls`, instead of an EPIPE stack trace. `start` is a server: it keeps running and only
 * stops writing there (its logs and the sign-in link go nowhere).
 */
function quietOnClosedPipe(command: ParsedCommand["kind"]): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    stdoutClosed = true;
    if (command !== "start") process.exit(0);
  });
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Runs the `switchboard` command line `argv` (without `node` and the script) and returns the exit code. */
export async function runCli(argv: readonly string[], deps: CliDeps = {}): Promise<number> {
  const io = deps.io ?? processIO;
  const env = deps.env ?? process.env;

  let parsed: ParsedCommand;
  try {
    parsed = parseCommandLine(argv, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const help = err.command ? `switchboard ${err.command} --help` : "switchboard --help";
    io.stderr(`switchboard: ${err.message}\nRun "${help}" for usage.\n`);
    return EXIT.usage;
  }
  if (!deps.io) quietOnClosedPipe(parsed.kind);
  if (parsed.kind === "help") {
    io.stdout(helpText(parsed.topic));
    return EXIT.ok;
  }
  if (parsed.kind === "version") {
    io.stdout(`switchboard ${deps.version ?? packageVersion()}\n`);
    return EXIT.ok;
  }
  const { runCommand } = await import("./commands.js");
  return runCommand(parsed, { ...deps, io, env, cwd: deps.cwd ?? process.cwd() });
}
