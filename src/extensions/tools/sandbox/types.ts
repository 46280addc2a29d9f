/**
 * The seam between the `bash` tool and the way its command runs: a `CommandRunner`. Two
 * implementations: `createBwrapRunner` (a bubblewrap sandbox per call) and `createDirectRunner`
 * (a plain child process, for hosts without a sandbox; then every call needs an admin's approval).
 * Both run one contract suite (test/extensions/command-runner-contract.ts).
 */
import type { GroupProcess } from "../process-tree.js";
import type { LimitKind, SandboxLimits } from "./limits.js";

export type SandboxMode = "auto" | "bwrap" | "none";
export type SandboxNetwork = "none" | "host";

/** The `tools.sandbox` config slice. */
export interface SandboxOptions {
  /** `auto`: bubblewrap when it works here (probed once at start), else none. */
  mode: SandboxMode;
  /** `none`: no network at all (loopback of its own only); `host`: the host's network. */
  network: SandboxNetwork;
  /** Names of variables passed from the gateway's environment into tool processes. */
  env: readonly string[];
  /** Extra host paths tool processes see read-only, at the same path. */
  readOnlyPaths: readonly string[];
  limits: SandboxLimits;
}

/** A user and group id. */
export interface Account {
  uid: number;
  gid: number;
}

export interface CommandRunOptions {
  /** The thread's workspace on the host (absolute, symlink-free). */
  workspace: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output as it arrives; stderr is interleaved with stdout. */
  onOutput(chunk: Buffer): void;
  /** A file size limit for this call below the runner's (what the workspace quota leaves), in MB. */
  fileSizeMb?: number | undefined;
}

export interface CommandRunResult {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Limits the call ran into (see `describeLimits`). */
  limits: LimitKind[];
  /** Set when the sandbox itself could not be set up; the command did not run. */
  setupError?: string;
}

/** How `CommandRunner.start` starts a long-lived program. */
export interface ProcessStartOptions {
  /** The thread's workspace on the host (absolute, symlink-free). */
  workspace: string;
  /** The network of this program; default the runner's. Only a sandbox can take it away. */
  network?: SandboxNetwork;
  /** Variables for this program only (an MCP server's own credentials), added to the allowlisted ones. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Runs one shell command for a tool call.
 *
 * Contract: `run` executes `command` with bash in the workspace (as `workspacePath`), with an
 * environment built from an allowlist, under `limits`; resolves when the command and every process
 * it started have ended, and kills them all on timeout, on `signal` and when the command exits
 * (background jobs do not outlive the call). It never rejects for the command's failure; it
 * rejects only when the runner cannot start a process at all.
 */
export interface CommandRunner {
  readonly kind: "bwrap" | "none";
  /** The workspace as the command sees it (`/workspace` in the sandbox, the host path without). */
  readonly workspacePath: (hostWorkspace: string) => string;
  readonly limits: SandboxLimits;
  /**
   * The account commands run as when it differs from the gateway's (a root gateway runs every
   * command as `nobody`, sandboxed or not): the tools give the workspace and the files they create
   * to it.
   */
  readonly owner: Account | undefined;
  run(command: string, options: CommandRunOptions): Promise<CommandRunResult>;
  /**
   * Starts `argv` (program and arguments, looked up in PATH as the workspace sees it) as a long-lived
   * process in the workspace, with the same sandbox, account, environment allowlist (plus
   * `options.env`) and per-process limits as `run`, stdin/stdout/stderr as pipes. It runs until
   * `stop()` or its own exit; every process it started ends with it. Never throws for a program
   * that cannot start: `exited` says so.
   */
  start(argv: readonly string[], options: ProcessStartOptions): GroupProcess;
  /** Releases what the runner prepared (the sandbox's copy of /etc); no runs after it. */
  close?(): void;
}
