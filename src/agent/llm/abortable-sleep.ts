/**
 * The one abortable wait on a real timer: the system clock's `sleep` (src/agent/clock.ts) and the
 * providers' retry backoff both wait through it. It lives in the LLM layer because that layer
 * imports nothing above it, while the clock may import from it.
 */

/** What a wait rejects with when `signal` aborts: the signal's reason, else an "aborted" error. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error("aborted");
}

/**
 * Resolves after `ms` (a negative `ms` as 0). Rejects with `abortReason(signal)` at once when
 * `signal` is already aborted, or as soon as it aborts; the timer is then cleared.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
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
}
