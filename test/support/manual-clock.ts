/**
 * The tests' clock: time moves only when a test says so. `advance(ms)` fires the sleeps that end on
 * the way, in time order, and lets the work each one wakes run (a few event-loop turns) before the
 * next fires, so code that sleeps again in response sees consistent time. A test can wait until the
 * code under test waits on the clock (`sleeping`) before moving it, so nothing depends on how fast
 * the machine is. The one manual `Clock` (src/agent/clock.ts) of every test.
 */
import { abortReason, type Clock } from "../../src/agent/clock.js";

interface Sleeper {
  at: number;
  ms: number;
  seq: number;
  resolve: () => void;
}

interface SleepWaiter {
  match: (ms: number) => boolean;
  resolve: () => void;
}

export class ManualClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];
  private waiters: SleepWaiter[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const duration = Math.max(0, ms);
      const sleeper: Sleeper = {
        at: this.current + duration,
        ms: duration,
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal ? abortReason(signal) : new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.sleepers.push(sleeper);
      for (const w of this.waiters.filter((x) => x.match(duration))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  }

  /** Resolves once a sleep of `ms` (any length when omitted) is pending: now, or when one starts. */
  sleeping(ms?: number): Promise<void> {
    const match = (d: number) => ms === undefined || d === ms;
    if (this.sleepers.some((s) => match(s.ms))) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Whether a sleep of `ms` is pending now. */
  isSleeping(ms: number): boolean {
    return this.sleepers.some((s) => s.ms === ms);
  }

  /** Sleeps pending now. */
  get pending(): number {
    return this.sleepers.length;
  }

  /** Time of the next sleep to end, if any. */
  nextAt(): number | undefined {
    let min: number | undefined;
    for (const s of this.sleepers) if (min === undefined || s.at < min) min = s.at;
    return min;
  }

  /** Moves time forward by `ms`, firing every sleep that ends on the way, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await turns();
      const next = this.nextDue(target);
      if (!next) break;
      this.current = Math.max(this.current, next.at);
      this.sleepers = this.sleepers.filter((s) => s !== next);
      next.resolve();
    }
    this.current = target;
    await turns();
  }

  private nextDue(target: number): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.sleepers) {
      if (s.at > target) continue;
      if (!best || s.at < best.at || (s.at === best.at && s.seq < best.seq)) best = s;
    }
    return best;
  }
}

/** Lets promise chains and immediate callbacks run (no timers, no time). */
async function turns(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}
