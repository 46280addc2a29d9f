/**
 * The seam between the CLI frame and the runtime. The frame parses arguments, loads and checks the
 * config, creates the logger and prints results; what each command does with the running system is a
 * handler the wiring code (`src/main.ts`) passes in. So this folder depends on no runtime layer, and
 * a command whose handler is missing says so instead of pretending.
 */

import { BUILT_IN_CHANNELS } from "../../adapters/registry.js";
import type { Platform } from "../../adapters/types.js";
import { SwitchboardError } from "../../agent/errors.js";
import type { Env } from "../config/env.js";
import type { ConfigIssue } from "../config/errors.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { ProbeResult } from "../http/readiness.js";
import type { Logger } from "../log.js";

/** Which parts one process runs: adapters, dispatcher and HTTP (`gateway`), BullMQ workers (`worker`), or both. */
export type Role = "all" | "gateway" | "worker";
export const ROLES: readonly Role[] = ["all", "gateway", "worker"];

/** A platform that has a command menu to fill (`commandMenu` in its channel definition). */
export type CommandPlatform = Platform;
export const COMMAND_PLATFORMS: readonly CommandPlatform[] = (
  Object.keys(BUILT_IN_CHANNELS) as Platform[]
).filter((p) => BUILT_IN_CHANNELS[p]?.commandMenu);

/** Where the CLI writes; each call is whole text (include the newline). */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What every handler receives: the resolved config (never invalid), the process logger, the output. */
export interface CommandContext {
  config: SwitchboardConfig;
  /** The file loaded; undefined when running on defaults. */
  configFile: string | undefined;
  warnings: readonly string[];
  logger: Logger;
  io: CliIO;
  env: Env;
}

/** `check`'s context: the role whose needs it checks (`--role`, else $SWITCHBOARD_ROLE, else all). */
export interface CheckContext extends CommandContext {
  role: Role;
}

export interface StartContext extends CommandContext {
  role: Role;
  /**
   * Aborted at the first SIGINT/SIGTERM. The handler then shuts down (drains within
   * `config.runtime.shutdownGraceMs`) and resolves; a second signal exits at once with code 1.
   */
  signal: AbortSignal;
}

export interface ExportContext extends CommandContext {
  threadKey: string;
  /** A specific session of the thread; absent means its current one. */
  sessionId: string | undefined;
}

export interface ImportContext extends CommandContext {
  /** The file, for messages. */
  file: string;
  /** Parsed JSONL lines; the first is the session header (`type: "session"`). */
  entries: readonly Record<string, unknown>[];
  /** The file's text as read, so the stored lines (the header first) are the file's own bytes. */
  text?: string;
  /** Thread to import into; absent means the handler picks a new web chat thread. */
  threadKey: string | undefined;
}

export interface RegisterCommandsContext extends CommandContext {
  /** Platforms to register on: those named with `--platform`, else every enabled one. */
  platforms: readonly CommandPlatform[];
}

/** `usage`'s context: the range asked for, as instants (the CLI has read the dates in `budgets.timeZone`). */
export interface UsageContext extends CommandContext {
  /** First instant asked about (ms). */
  sinceMs: number;
  /** First instant no longer asked about (ms); after `sinceMs`. */
  untilMs: number;
}

/**
 * One row of `switchboard usage`: what one member of a scope (`user`, `channel`, `deployment`)
 * spent on one model on one day of `budgets.timeZone` (`YYYY-MM-DD`), in USD, tokens and calls.
 */
export interface UsageExportRow {
  day: string;
  scope: string;
  key: string;
  model: string;
  usd: number;
  tokens: number;
  calls: number;
}

/** What one reachability check of `switchboard check` found. */
export interface CheckResult extends ProbeResult {
  /**
   * The service answered and refused the configured credentials (a revoked or mistyped token): a
   * config error, so `check` exits 2. Unset when it could not be reached (exit 1).
   */
  refused?: boolean;
}

/** One reachability check of `switchboard check` (Redis, a platform's API with its token, a model). */
export interface CheckProbe {
  name: string;
  /** How long it may take (default 5 s); after that it is "unreachable" and `signal` aborts. */
  timeoutMs?: number;
  /** May throw: a throw counts as unreachable, with the error's first line as detail. */
  check(signal?: AbortSignal): Promise<CheckResult>;
}

/**
 * An error a handler raises with a message written for the person at the terminal (naming CLI
 * commands and options, not functions); the CLI prints it as is and exits with `exitCode`.
 */
export class CliError extends SwitchboardError {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super("cli.failed", message);
  }
}

/**
 * Command implementations supplied by the wiring code. Each may throw: a `ConfigError` is printed
 * like `check` prints config problems (exit 2), a `CliError` as its message with its exit code, and
 * anything else as its message (secrets redacted) with exit 1.
 */
export interface CliHandlers {
  /** Runs the process in `role` until `signal` aborts and shutdown completes. */
  start?(ctx: StartContext): Promise<void>;
  /**
   * Problems of a schema-valid config that `start` in `ctx.role` would refuse, found by the same
   * code `start` runs (the role's needs, directories, the port, extension modules, model ids, tool
   * names…), with paths and hints. Contacts no remote service.
   */
  validateConfig?(ctx: CheckContext): Promise<readonly ConfigIssue[]>;
  /**
   * Lines `check` adds to its summary of a valid config (after `validateConfig`): what the wiring
   * decides, such as the model new threads get. A line starting with "! " is a warning.
   */
  describeConfig?(ctx: CheckContext): Promise<readonly string[]>;
  /**
   * Reachability checks `switchboard check` runs once the config is valid: Redis, each platform's
   * API, each configured model (a one-token request).
   */
  checkProbes?(ctx: CheckContext): readonly CheckProbe[] | Promise<readonly CheckProbe[]>;
  /** The thread's session as pi JSONL lines (header first, no trailing newlines); the CLI writes them. */
  exportThread?(ctx: ExportContext): Promise<Iterable<string> | AsyncIterable<string>>;
  /** Stores an imported session; returns where it landed (and a line about where to see it). */
  importSession?(ctx: ImportContext): Promise<{ threadKey: string; sessionId?: string; note?: string }>;
  /**
   * The budget ledger's usage rows of every day overlapping [sinceMs, untilMs), from the ledger of
   * the config's mode (the embedded mode's file, or Redis); starts nothing else.
   */
  usage?(ctx: UsageContext): Promise<readonly UsageExportRow[]>;
  /** Registers native commands; returns one line per platform to print (`telegram: 9 commands set`). */
  registerCommands?(ctx: RegisterCommandsContext): Promise<readonly string[]>;
}

/** Everything `runCli` needs from outside; all optional with process defaults. */
export interface CliDeps {
  handlers?: CliHandlers;
  io?: CliIO;
  env?: Env;
  cwd?: string;
  version?: string;
  /** Install SIGINT/SIGTERM handlers for `start` (default true; tests pass false and a `shutdown` signal). */
  handleSignals?: boolean;
  /** Used as `StartContext.signal` when `handleSignals` is false. */
  shutdown?: AbortSignal;
  /** Creates the process logger (tests inject one that writes to memory). */
  createLogger?: (opts: {
    level: SwitchboardConfig["logging"]["level"];
    secrets: string[];
    toStderr: boolean;
  }) => Logger;
}

/** Exit codes of the `switchboard` command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
