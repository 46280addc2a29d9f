/**
 * Time as a dependency, the one `Clock` of every layer. Code that reads the time or waits (the
 * renderer, rate limiters, retry waits, approval timeouts, leases and their renewals) does it
 * through a `Clock`, so tests drive it with a manual clock (test/support/manual-clock.ts) instead
 * of sleeping. It lives in the engine layer because the adapters, the extensions, the queue and the
 * gateway may all import it.
 */

/** Reads the time and waits. `sleep` rejects with the signal's reason when `signal` aborts. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error("aborted");
}

/** The real clock: `Date.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal ? abortReason(signal) : new Error("aborted"));
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};
