/**
 * `RateLimiter` shared by every process through Redis, so several workers posting into one channel
 * spend one budget. The arithmetic is the one of src/adapters/render/rate-limiter.ts: `gcraStep`
 * gives the whole-millisecond numbers, and the two scripts below are `gcraReserve` and
 * `gcraPenalize` run atomically in Lua (files in src/queue/lua/); one key per channel holding its
 * theoretical arrival time.
 */

import { FALLBACK_RATE_RULE, gcraStep } from "../adapters/render/rate-limiter.js";
import type { RateLimiter, RateRule } from "../adapters/types.js";
import { type Clock, systemClock } from "../agent/clock.js";
import { luaScript } from "../queue/lua/load.js";
import type { RedisClient } from "../queue/redis/client.js";
import { runScript } from "../queue/redis/run-script.js";
import { DEFAULT_KEY_PREFIX, rateLimitKey } from "../redis-keys.js";

/** `gcraReserve` run atomically (rate-reserve.1.lua): the wait before the reserved request, ms. */
const RESERVE = luaScript("rate-reserve");
/** `gcraPenalize` run atomically (rate-penalize.1.lua): no request before now + retry-after. */
const PENALIZE = luaScript("rate-penalize");

export interface RedisRateLimiterOptions {
  redis: RedisClient;
  /** Key prefix (default `DEFAULT_KEY_PREFIX`). */
  prefix?: string;
  /** Time source; processes should agree on time (NTP), as the budget is kept in their ms. */
  clock?: Clock;
}

/**
 * One budget per channel for every process on the same Redis and prefix. A penalty uses the rule
 * this process last acquired the key with (the process that got the 429 made the request, so it did).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly clock: Clock;
  /** The last rule seen per key, for penalties (the tolerance depends on it). */
  private readonly rules = new Map<string, RateRule>();

  constructor(private readonly o: RedisRateLimiterOptions) {
    this.clock = o.clock ?? systemClock;
  }

  private key(channel: string): string {
    return rateLimitKey(this.o.prefix ?? DEFAULT_KEY_PREFIX, channel);
  }

  async acquire(key: string, rule: RateRule): Promise<number> {
    this.rules.set(key, rule);
    if (this.rules.size > 10_000) this.rules.delete(this.rules.keys().next().value as string);
    const step = gcraStep(rule, this.clock.now());
    const wait = await runScript(
      this.o.redis,
      RESERVE,
      [this.key(key)],
      [step.now, step.intervalMs, step.toleranceMs],
    );
    return Number(wait);
  }

  async penalize(key: string, retryAfterMs: number): Promise<void> {
    const step = gcraStep(this.rules.get(key) ?? FALLBACK_RATE_RULE, this.clock.now());
    await runScript(
      this.o.redis,
      PENALIZE,
      [this.key(key)],
      [step.now, Math.ceil(Math.max(0, retryAfterMs)), step.toleranceMs],
    );
  }
}
