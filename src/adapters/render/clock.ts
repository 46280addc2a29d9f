/**
 * Time as a dependency. The renderer, the rate limiter and the adapters' retry waits read the time
 * and wait only through a `Clock`, so tests drive them with `ManualClock` deterministically, without
 * real sleeps.
 */

import { abortReason, type Clock } from "../../agent/clock.js";

export { type Clock, systemClock } from "../../agent/clock.js";

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that moves only when told to. `advance(ms)` fires due sleeps in time order and lets the
 * work they wake run (a few event-loop turns) before moving on, so code that sleeps again in
 * response sees consistent time.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
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
      const timer: Timer = {
        at: this.current + Math.max(0, ms),
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.timers = this.timers.filter((t) => t !== timer);
        reject(signal ? abortReason(signal) : new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  /** Number of sleeps waiting. */
  get pending(): number {
    return this.timers.length;
  }

  /** Time of the next sleep to end, if any. */
  nextAt(): number | undefined {
    let min: number | undefined;
    for (const t of this.timers) if (min === undefined || t.at < min) min = t.at;
    return min;
  }

  /** Move time forward by `ms`, firing every sleep that ends on the way, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushTurns();
      const next = this.nextDue(target);
      if (!next) break;
      this.current = Math.max(this.current, next.at);
      this.timers = this.timers.filter((t) => t !== next);
      next.resolve();
    }
    this.current = target;
    await flushTurns();
  }

  private nextDue(target: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers) {
      if (t.at > target) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Let promise chains and immediate callbacks run. */
async function flushTurns(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}
