/**
 * Argument parsing of `switchboard` with `node:util` parseArgs: strict (unknown options are usage
 * errors), one option table per command, and a command name that defaults to `start`.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Env } from "../config/env.js";
import { closest } from "../config/errors.js";
import { COMMANDS, type CommandName } from "./help.js";
import { COMMAND_PLATFORMS, type CommandPlatform, ROLES, type Role } from "./types.js";

export type ParsedCommand =
  | { kind: "help"; topic?: CommandName }
  | { kind: "version" }
  | { kind: "start"; config?: string; role: Role }
  | { kind: "check"; config?: string; offline: boolean }
  | { kind: "export"; config?: string; threadKey: string; sessionId?: string; output?: string }
  | { kind: "import"; config?: string; file: string; threadKey?: string }
  | { kind: "register-commands"; config?: string; platforms: CommandPlatform[] };

/** A command line that cannot be run as written; `command` picks the help to point at. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super(message);
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

const COMMON: Options = {
  config: { type: "string", short: "c" },
  help: { type: "boolean", short: "h" },
};

const OPTIONS: Record<CommandName, Options> = {
  start: { ...COMMON, role: { type: "string", short: "r" } },
  check: { ...COMMON, offline: { type: "boolean" } },
  export: { ...COMMON, session: { type: "string", short: "s" }, output: { type: "string", short: "o" } },
  import: { ...COMMON, thread: { type: "string", short: "t" } },
  "register-commands": { ...COMMON, platform: { type: "string", short: "p", multiple: true } },
};

const POSITIONALS: Record<CommandName, string[]> = {
  start: [],
  check: [],
  export: ["thread"],
  import: ["file"],
  "register-commands": [],
};

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

/** Parses `argv` (without `node` and the script). Throws `UsageError` for anything it cannot run. */
export function parseCommandLine(argv: readonly string[], env: Env = {}): ParsedCommand {
  const args = [...argv];
  const first = args[0];
  if (first === "-v" || first === "--version") return { kind: "version" };
  if (first === "help") {
    const topic = args[1];
    if (topic === undefined) return { kind: "help" };
    if ((COMMANDS as readonly string[]).includes(topic)) return { kind: "help", topic: topic as CommandName };
    throw new UsageError(`unknown command "${topic}"`);
  }
  let command: CommandName = "start";
  if (first !== undefined && !first.startsWith("-")) {
    if (!(COMMANDS as readonly string[]).includes(first)) {
      const guess = closest(first, COMMANDS);
      throw new UsageError(`unknown command "${first}"${guess ? `; did you mean "${guess}"?` : ""}`);
    }
    command = first as CommandName;
    args.shift();
  } else if (first === "-h" || first === "--help") return { kind: "help" };

  const { values, positionals } = parseFor(command, args);
  if (values.help === true) return { kind: "help", topic: command };
  const expected = POSITIONALS[command];
  if (positionals.length > expected.length) {
    throw new UsageError(`unexpected argument "${positionals[expected.length]}"`, command);
  }
  if (positionals.length < expected.length) {
    throw new UsageError(`missing <${expected[positionals.length]}>`, command);
  }
  const config = typeof values.config === "string" ? values.config : undefined;
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);

  switch (command) {
    case "start": {
      const raw = str(values.role) ?? (env.SWITCHBOARD_ROLE || "all");
      return { kind: "start", config, role: oneOf(raw, ROLES, "--role", command) };
    }
    case "check":
      return { kind: "check", config, offline: values.offline === true };
    case "export":
      return {
        kind: "export",
        config,
        threadKey: positionals[0] as string,
        sessionId: str(values.session),
        output: str(values.output),
      };
    case "import":
      return { kind: "import", config, file: positionals[0] as string, threadKey: str(values.thread) };
    case "register-commands": {
      const names = Array.isArray(values.platform) ? values.platform.map(String) : [];
      const platforms = names.map((p) => oneOf(p, COMMAND_PLATFORMS, "--platform", command));
      return { kind: "register-commands", config, platforms: [...new Set(platforms)] };
    }
  }
}
