/**
 * Time as a dependency, the one `Clock` of every layer. Code that reads the time or waits (the
 * renderer, rate limiters, retry waits, approval timeouts, leases and their renewals) does it
 * through a `Clock`, so tests drive it with a manual clock (test/support/manual-clock.ts) instead
 * of sleeping. It lives in the engine layer because the adapters, the extensions, the queue and the
 * gateway may all import it.
 */
import { abortableSleep } from "./llm/abortable-sleep.js";

/** What a wait rejects with when its signal aborts (the manual clock of the tests rejects alike). */
export { abortReason } from "./llm/abortable-sleep.js";

/** Reads the time and waits. `sleep` rejects with the signal's reason when `signal` aborts. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `Date.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: abortableSleep,
};
