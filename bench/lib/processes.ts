/** Spawning bench worker processes (`node --import tsx`, so the pid is the worker and SIGKILL hits it). */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("./bench-worker.ts", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  stderr: string[];
  ready: Promise<void>;
  exited: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `script` (default: the bench's worker) under tsx; `ready` resolves at its first "ready" line. */
export function spawnWorker(env: Record<string, string>, script: string = WORKER): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  child.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready")) resolve();
    });
    child.once("exit", (code) =>
      reject(new Error(`worker exited (${code}) before ready: ${stderr.join("")}`)),
    );
  });
  ready.catch(() => {});
  return {
    child,
    stderr,
    ready,
    exited,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
