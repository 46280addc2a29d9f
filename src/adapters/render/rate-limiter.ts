/**
 * Per-channel request budgets, and the one rate-limit arithmetic every `RateLimiter` uses.
 *
 * The algorithm is GCRA (a leaky bucket kept as one timestamp per key, its theoretical arrival time
 * `tat`): a rule of `limit` requests per `windowMs` lets a burst of `limit` requests go at once, then
 * one every `intervalMs = ceil(windowMs / limit)`. All times are whole milliseconds (`gcraStep`
 * rounds them), so the value a limiter stores is exact wherever it is stored.
 * `MemoryRateLimiter` runs the steps in this process; `RedisRateLimiter` (src/gateway) runs the same
 * steps in Lua with the numbers `gcraStep` gives it, and test/adapters/rate-limiter.test.ts checks
 * that both give the same waits for any sequence of requests, penalties and clock moves.
 */

import { type Clock, systemClock } from "../../agent/clock.js";
import type { RateLimiter, RateRule } from "../types.js";

/** The whole-millisecond numbers of one GCRA step, as both limiters pass them on. */
export interface GcraStep {
  /** The time of the step (ms, rounded). */
  now: number;
  /** Spacing of requests once the burst is spent: `ceil(windowMs / limit)`. */
  intervalMs: number;
  /** How far `tat` may run ahead of `now` before a request must wait: `(limit - 1) × intervalMs`. */
  toleranceMs: number;
}

/** The numbers of a step of `rule` at `now`. */
export function gcraStep(rule: RateRule, now: number): GcraStep {
  const limit = Math.max(1, Math.floor(rule.limit));
  const intervalMs = Math.max(1, Math.ceil(rule.windowMs / limit));
  return { now: Math.round(now), intervalMs, toleranceMs: (limit - 1) * intervalMs };
}

/**
 * Reserves one request. `tat` is the key's stored theoretical arrival time (0 when unknown). Returns
 * how long the caller waits before sending (ms) and the new `tat` to store.
 */
function gcraReserve(tat: number, step: GcraStep): { waitMs: number; tat: number } {
  const base = Math.max(tat, step.now);
  return { waitMs: Math.max(0, base - step.toleranceMs - step.now), tat: base + step.intervalMs };
}

/**
 * After a platform 429: the new `tat`, so that no reservation is allowed before
 * `now + retryAfterMs` (rounded up). Never moves `tat` back.
 */
function gcraPenalize(tat: number, step: GcraStep, retryAfterMs: number): number {
  return Math.max(tat, step.now + Math.ceil(Math.max(0, retryAfterMs)) + step.toleranceMs);
}

/** The rule used for penalties when a key was never acquired (should not happen in practice). */
export const FALLBACK_RATE_RULE: RateRule = { limit: 1, windowMs: 1000 };

/** `RateLimiter` in memory; good for one process (embedded mode, tests). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly state = new Map<string, { tat: number; rule: RateRule }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async acquire(key: string, rule: RateRule): Promise<number> {
    const step = gcraStep(rule, this.clock.now());
    const { waitMs, tat } = gcraReserve(this.state.get(key)?.tat ?? 0, step);
    this.state.set(key, { tat, rule });
    this.prune(step.now);
    return waitMs;
  }

  async penalize(key: string, retryAfterMs: number): Promise<void> {
    const cur = this.state.get(key);
    const rule = cur?.rule ?? FALLBACK_RATE_RULE;
    const step = gcraStep(rule, this.clock.now());
    this.state.set(key, { tat: gcraPenalize(cur?.tat ?? 0, step, retryAfterMs), rule });
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
