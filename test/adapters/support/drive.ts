/** Helpers to run time-driven code under a `ManualClock` without real sleeps. */
import type { ManualClock } from "../../support/manual-clock.js";

/** Resolve once `busy()` stays false across a few event-loop turns (bounded). */
export async function settle(busy: () => boolean, maxTurns = 5000): Promise<void> {
  let quiet = 0;
  for (let i = 0; i < maxTurns; i++) {
    await new Promise<void>((r) => setImmediate(r));
    quiet = busy() ? 0 : quiet + 1;
    if (quiet >= 3) return;
  }
  throw new Error("settle: still busy after many turns");
}

/** Advance the clock in steps (settling between them) until `promise` settles. */
export async function driveUntil<T>(
  clock: ManualClock,
  promise: Promise<T>,
  opts: { stepMs?: number; maxSteps?: number; busy?: () => boolean } = {},
): Promise<T> {
  let done = false;
  const tracked = promise.finally(() => {
    done = true;
  });
  for (let i = 0; i < (opts.maxSteps ?? 10_000) && !done; i++) {
    if (opts.busy) await settle(opts.busy);
    if (done) break;
    await clock.advance(opts.stepMs ?? 100);
  }
  if (!done) throw new Error("driveUntil: the promise did not settle");
  return tracked;
}

/** Wait (bounded, polling) until `cond()` holds. For conditions that depend on real I/O. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
