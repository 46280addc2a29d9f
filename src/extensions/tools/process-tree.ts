/**
 * Runs a shell command as the leader of its own process group, so that everything it starts
 * (pipelines, background jobs, subshells) can be killed at once on abort, on timeout, and when the
 * command exits leaving children behind. Processes that leave the group themselves (`setsid`)
 * escape this; run the gateway in a container when that matters.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface GroupRunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput(chunk: Buffer): void;
  /** Time between SIGTERM and SIGKILL. Default 250 ms. */
  killGraceMs?: number;
}

export interface GroupRunResult {
  exitCode: number | null;
  /** The signal that ended the command, if any. */
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

/** Sends `signal` to the whole process group led by `pid`; a group already gone is fine. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
  }
}

/**
 * Runs `command` with `bash -c` and resolves when it and its output streams have ended. Abort and
 * timeout send SIGTERM to the group, then SIGKILL after the grace time. Never rejects for the
 * command's own failure (that is in the result); rejects only when bash cannot be started.
 */
export function runInProcessGroup(command: string, options: GroupRunOptions): Promise<GroupRunResult> {
  const started = Date.now();
  const grace = options.killGraceMs ?? 250;
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      // stderr joins stdout inside the shell, so the two stay in order as in a terminal.
      child = spawn("bash", ["-c", `exec 2>&1\n${command}`], {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
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
      options.signal?.removeEventListener("abort", onAbort);
      reject(e);
    });
    child.on("exit", () => {
      // Background jobs would keep the pipes open (and run on unattended): end the whole group.
      if (pid !== undefined) killGroup(pid, "SIGKILL");
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ exitCode: code, exitSignal: sig, timedOut, aborted, durationMs: Date.now() - started });
    });
  });
}
