/**
 * Spawning worker processes for the multi-process tests, and checking their lease logs for overlap.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LeaseEvent } from "../../../src/queue/worker/thread-holder.js";

const SCRIPT = fileURLToPath(new URL("./worker-process.ts", import.meta.url));

export interface WorkerHandle {
  name: string;
  child: ChildProcess;
  stderr: string[];
  /** Resolves once the worker takes jobs. */
  ready: Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/** Starts a worker process (`node --import tsx`, so the pid is the worker itself and SIGKILL hits it). */
export function spawnWorker(name: string, env: Record<string, string>): WorkerHandle {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    env: { ...process.env, ...env, SB_WORKER: name },
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
      reject(new Error(`worker ${name} exited (${code}) before ready: ${stderr.join("")}`)),
    );
  });
  return { name, child, stderr, ready, exited };
}

export type LoggedLeaseEvent = LeaseEvent & { worker: string };

export function readLeaseLog(file: string): LoggedLeaseEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as LoggedLeaseEvent);
}

interface Tenure {
  token: string;
  worker: string;
  /** When the acquire reply arrived: the lease was set no later than this. */
  start: number;
  /** A time the lease certainly still held this token until (a lower bound of its end). */
  endLowerBound: number;
}

/**
 * Finds two tenures of one thread that certainly overlapped. Each tenure's end is bounded from
 * below (release/hand-over: when its request was sent; expiry: last renewal sent + TTL), and the
 * next tenure's start from above (when its acquire reply arrived), so a reported overlap is real.
 */
export function findLeaseOverlaps(events: LoggedLeaseEvent[], ttlMs: number): string[] {
  const tenures = new Map<string, Tenure & { thread: string; ended?: boolean }>();
  for (const e of events) {
    let t = tenures.get(e.token);
    if (e.type === "acquired") {
      t = {
        token: e.token,
        worker: e.worker,
        thread: e.threadKey,
        start: e.at,
        endLowerBound: (e.sentAt ?? e.at) + ttlMs,
      };
      tenures.set(e.token, t);
    } else if (t && e.type === "renewed" && !t.ended) {
      t.endLowerBound = Math.max(t.endLowerBound, e.at + ttlMs);
    } else if (t && (e.type === "released" || e.type === "handoff")) {
      // The delete ends the tenure whatever renewals were still in flight.
      t.endLowerBound = e.at;
      t.ended = true;
    }
  }
  const byThread = new Map<string, (Tenure & { thread: string })[]>();
  for (const t of tenures.values()) byThread.set(t.thread, [...(byThread.get(t.thread) ?? []), t]);
  const overlaps: string[] = [];
  for (const [thread, list] of byThread) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i] as Tenure;
        const b = list[j] as Tenure;
        if (b.start < a.endLowerBound) {
          overlaps.push(
            `${thread}: ${a.worker}/${a.token} until ≥${a.endLowerBound}, ${b.worker}/${b.token} from ≤${b.start}`,
          );
        }
      }
    }
  }
  return overlaps;
}
