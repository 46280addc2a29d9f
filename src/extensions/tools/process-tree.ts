/**
 * Runs a program as the leader of its own process group, so that everything it starts (pipelines,
 * background jobs, subshells) can be killed at once on abort, on timeout, and when it exits leaving
 * children behind. A process that leaves the group itself (`setsid`) escapes this group kill; the
 * sandbox (`sandbox/bwrap.ts`) closes that gap with a PID namespace, whose processes all die with it,
 * and outside a sandbox `killMarked` finds such processes by a variable of the call's environment.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import type { Writable } from "node:stream";

export interface GroupRunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput(chunk: Buffer): void;
  /** Time between SIGTERM and SIGKILL. Default 250 ms. */
  killGraceMs?: number;
  /** Run as this user and group (the gateway must be root to use them). */
  uid?: number;
  gid?: number;
  /** Bytes the program reads from file descriptor 3 (bubblewrap's seccomp program). */
  extraInput?: Buffer;
  /**
   * Ends what left the process group (`killMarked`), called when the program exits: those processes
   * may hold its output open, and the run ends only when the output does. Awaited before resolving.
   */
  sweep?: () => Promise<unknown>;
}

export interface GroupRunResult {
  exitCode: number | null;
  /** The signal that ended the program, if any. */
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

/**
 * `file` as the leader of a new process group (so the group can be killed at once), stdout and
 * stderr piped, stdin as asked, and `extraInput` written to its file descriptor 3.
 */
function spawnLeader(
  file: string,
  args: readonly string[],
  o: Pick<GroupStartOptions, "cwd" | "env" | "uid" | "gid" | "extraInput">,
  stdin: "ignore" | "pipe",
): ChildProcess {
  const child = spawn(file, args, {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: o.extraInput ? [stdin, "pipe", "pipe", "pipe"] : [stdin, "pipe", "pipe"],
    ...(o.uid !== undefined ? { uid: o.uid } : {}),
    ...(o.gid !== undefined ? { gid: o.gid } : {}),
  });
  if (o.extraInput) {
    const input = child.stdio[3] as Writable;
    // A program that exits before reading it closes the other end: not an error of ours.
    input.on("error", () => {});
    input.end(o.extraInput);
  }
  return child;
}

/** Sends `signal` to the whole process group led by `pid`; a group already gone is fine. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ESRCH" && code !== "EPERM") throw e;
  }
}

/**
 * Runs `file` with `args` and resolves when it and its output streams have ended. Abort and timeout
 * send SIGTERM to the group, then SIGKILL after the grace time. Never rejects for the program's own
 * failure (that is in the result); rejects only when it cannot be started.
 */
export function runProgramInGroup(
  file: string,
  args: readonly string[],
  options: GroupRunOptions,
): Promise<GroupRunResult> {
  const started = performance.now();
  const grace = options.killGraceMs ?? 250;
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawnLeader(file, args, options, "ignore");
    } catch (e) {
      reject(e);
      return;
    }
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const pid = child.pid;
    const terminate = () => {
      if (pid === undefined || killTimer) return;
      killGroup(pid, "SIGTERM");
      killTimer = setTimeout(() => killGroup(pid, "SIGKILL"), grace);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      terminate();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout?.on("data", options.onOutput);
    child.stderr?.on("data", options.onOutput);
    child.on("error", (e) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      reject(e);
    });
    let swept: Promise<unknown> = Promise.resolve();
    child.on("exit", () => {
      // Background jobs would keep the pipes open (and run on unattended): end the whole group.
      if (pid !== undefined) killGroup(pid, "SIGKILL");
      if (options.sweep) swept = options.sweep().catch(() => undefined);
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      const durationMs = performance.now() - started;
      void swept.then(() => resolve({ exitCode: code, exitSignal: sig, timedOut, aborted, durationMs }));
    });
  });
}

/**
 * SIGKILLs every process whose environment holds `name=value` (read from /proc/<pid>/environ; only
 * processes this one may read are seen). Outside a sandbox this ends what a call started even after
 * it left the process group (`setsid`, a double fork), as long as it kept the variable. Resolves
 * with how many processes it signalled; never rejects.
 */
export async function killMarked(name: string, value: string): Promise<number> {
  const needle = Buffer.from(`${name}=${value}\0`);
  let pids: string[];
  try {
    pids = (await readdir("/proc")).filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  let killed = 0;
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
    if (!environ?.includes(needle)) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
      killed++;
    } catch {
      // gone already, or not ours to signal
    }
  }
  return killed;
}

export interface GroupStartOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Run as this user and group (the gateway must be root to use them). */
  uid?: number;
  gid?: number;
  /** Bytes the program reads from file descriptor 3 (bubblewrap's seccomp program). */
  extraInput?: Buffer;
  /** Time between SIGTERM and SIGKILL when stopped. Default 1000 ms. */
  killGraceMs?: number;
  /** Ends what left the process group (`killMarked`) once the program exited or was stopped. */
  sweep?: () => Promise<unknown>;
}

/** A long-lived program started with `startProgramInGroup`. */
export interface GroupProcess {
  /** Its stdin, stdout and stderr are pipes. */
  readonly child: ChildProcess;
  /** Resolves when the program has exited (never rejects; a failed spawn is an exit with `error`). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  /** SIGTERM to the group, SIGKILL after the grace time; resolves once the program exited. */
  stop(): Promise<void>;
}

/**
 * Starts `file` as the leader of its own process group with piped stdio and leaves it running (an
 * MCP server speaking on stdin/stdout). When the leader exits, the rest of its group is killed, as
 * with `runProgramInGroup`. Never throws for a program that cannot start: `exited` reports it.
 */
export function startProgramInGroup(
  file: string,
  args: readonly string[],
  o: GroupStartOptions,
): GroupProcess {
  let child: ChildProcess;
  try {
    child = spawnLeader(file, args, o, "pipe");
  } catch (error) {
    // Refused at once (an argument Node rejects): the same as a program that could not start.
    const failed: GroupProcess = {
      child: new EventEmitter() as ChildProcess,
      exited: Promise.resolve({ code: null, signal: null, error: error as Error }),
      stop: async () => {},
    };
    return failed;
  }
  // A peer that went away mid-write is the exit's business, not an uncaught error.
  child.stdin?.on("error", () => {});
  const pid = child.pid;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
      child.once("exit", (code, signal) => {
        if (pid !== undefined) killGroup(pid, "SIGKILL");
        const swept = o.sweep ? o.sweep().catch(() => undefined) : Promise.resolve();
        void swept.then(() => resolve({ code, signal }));
      });
    },
  );
  let stopping: Promise<void> | undefined;
  return {
    child,
    exited,
    stop() {
      stopping ??= (async () => {
        if (pid === undefined || child.exitCode !== null || child.signalCode !== null) {
          await exited;
          return;
        }
        killGroup(pid, "SIGTERM");
        const timer = setTimeout(() => killGroup(pid, "SIGKILL"), o.killGraceMs ?? 1000);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
