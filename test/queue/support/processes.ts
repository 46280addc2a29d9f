/**
 * Spawning worker processes for the multi-process tests and following what they do: each writes
 * one JSON line per event to stdout (see worker-process.ts), which arrives here in order per
 * worker, so a test waits on the workers' own events and never on time.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoggedLeaseEvent } from "./lease-overlaps.js";

const SCRIPT = fileURLToPath(new URL("./worker-process.ts", import.meta.url));

/** A line a worker wrote: a lease event, or `ready`, `notice`, `saved`, `tool`, `dying`. */
export type WorkerEvent = { worker: string; type: string; threadKey?: string } & Record<string, unknown>;

export interface WorkerHandle {
  name: string;
  child: ChildProcess;
  stderr: string[];
  /** Resolves once the worker takes jobs. */
  ready: Promise<void>;
  /** Resolves when the process has exited (with the signal that ended it, if any). */
  exited: Promise<NodeJS.Signals | null>;
}

/** Every worker's events, in arrival order, with a way to wait for one. */
export class WorkerEvents {
  readonly all: WorkerEvent[] = [];
  private listeners: ((e: WorkerEvent) => void)[] = [];

  add(e: WorkerEvent): void {
    this.all.push(e);
    for (const l of [...this.listeners]) l(e);
  }

  /** Calls `fn` with every event from now on; returns the function that stops it. */
  on(fn: (e: WorkerEvent) => void): () => void {
    this.listeners.push(fn);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== fn);
    };
  }

  /** The first event (so far, or from now on) that matches. */
  seen(match: (e: WorkerEvent) => boolean): Promise<WorkerEvent> {
    const found = this.all.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const off = this.on((e) => {
        if (!match(e)) return;
        off();
        resolve(e);
      });
    });
  }

  /** The lease events, for the overlap check. */
  leases(): LoggedLeaseEvent[] {
    return this.all.filter((e) => typeof e.token === "string") as unknown as LoggedLeaseEvent[];
  }
}

/** Starts a worker process (`node --import tsx`, so the pid is the worker itself and SIGKILL hits it). */
export function spawnWorker(name: string, env: Record<string, string>, events: WorkerEvents): WorkerHandle {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    env: { ...process.env, ...env, SB_WORKER: name },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  child.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    child.once("exit", (code) =>
      reject(new Error(`worker ${name} exited (${code}) before ready: ${stderr.join("")}`)),
    );
  });
  let buffered = "";
  child.stdout?.on("data", (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      const e = JSON.parse(line) as WorkerEvent;
      if (e.type === "ready") resolveReady();
      events.add(e);
    }
  });
  return { name, child, stderr, ready, exited };
}
