/**
 * Per-channel request budgets for one process. The algorithm is GCRA (a leaky bucket kept as one
 * timestamp per key): requests are spaced `windowMs / limit` apart on average, with bursts of up to
 * `limit`. `RedisRateLimiter` in src/gateway runs the same arithmetic in Lua so processes share it.
 */
import type { RateLimiter, RateRule } from "../types.js";
import { type Clock, systemClock } from "./clock.js";

/**
 * One GCRA step. `tat` is the key's stored theoretical arrival time (0 when unknown). Returns how
 * long the caller waits and the new `tat` to store. Exported so the Redis script can be tested
 * against the same numbers.
 */
export function gcraReserve(tat: number, now: number, rule: RateRule): { waitMs: number; tat: number } {
  const interval = rule.windowMs / Math.max(1, rule.limit);
  const tolerance = rule.windowMs - interval;
  const base = Math.max(tat, now);
  const allowAt = base - tolerance;
  return { waitMs: Math.max(0, Math.ceil(allowAt - now)), tat: base + interval };
}

/**
 * After a platform 429, no request may go before `now + retryAfterMs`: move `tat` so the next
 * reservation's `allowAt` is at least that.
 */
export function gcraPenalize(tat: number, now: number, retryAfterMs: number, rule: RateRule): number {
  const interval = rule.windowMs / Math.max(1, rule.limit);
  const tolerance = rule.windowMs - interval;
  return Math.max(tat, now + retryAfterMs + tolerance);
}

/** The rule used for penalties when a key was never acquired (should not happen in practice). */
const FALLBACK_RULE: RateRule = { limit: 1, windowMs: 1000 };

/** `RateLimiter` in memory; good for one process (embedded mode, tests). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly state = new Map<string, { tat: number; rule: RateRule }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async acquire(key: string, rule: RateRule): Promise<number> {
    const now = this.clock.now();
    const cur = this.state.get(key);
    const { waitMs, tat } = gcraReserve(cur?.tat ?? 0, now, rule);
    this.state.set(key, { tat, rule });
    this.prune(now);
    return waitMs;
  }

  async penalize(key: string, retryAfterMs: number): Promise<void> {
    const now = this.clock.now();
    const cur = this.state.get(key);
    const rule = cur?.rule ?? FALLBACK_RULE;
    this.state.set(key, { tat: gcraPenalize(cur?.tat ?? 0, now, retryAfterMs, rule), rule });
  }

  /** Forget keys whose budget is full again, so the map stays as small as the set of busy channels. */
  private prune(now: number): void {
    if (this.state.size < 1000) return;
    for (const [k, v] of this.state) if (v.tat < now) this.state.delete(k);
  }
}

/** A limiter that never waits (platforms without per-channel limits, or tests that do not care). */
export const unlimited: RateLimiter = {
  acquire: async () => 0,
  penalize: async () => {},
};
