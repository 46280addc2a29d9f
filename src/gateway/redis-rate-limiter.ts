/**
 * `RateLimiter` shared by every process through Redis, so several workers posting into one channel
 * spend one budget. The arithmetic is the one of src/adapters/render/rate-limiter.ts: `gcraStep`
 * gives the whole-millisecond numbers, and the two scripts below are `gcraReserve` and
 * `gcraPenalize` run atomically in Lua; one key per channel holding its theoretical arrival time.
 */

import { FALLBACK_RATE_RULE, gcraStep } from "../adapters/render/rate-limiter.js";
import type { RateLimiter, RateRule } from "../adapters/types.js";
import { type Clock, systemClock } from "../agent/clock.js";
import type { RedisClient } from "../queue/redis/client.js";
import { DEFAULT_KEY_PREFIX, rateLimitKey } from "../redis-keys.js";

/**
 * `gcraReserve` in Lua. Every number is a whole millisecond, so Lua's doubles are exact.
 * KEYS[1] the channel's budget key (holds the theoretical arrival time, ms)
 * ARGV[1] now (ms), ARGV[2] intervalMs, ARGV[3] toleranceMs (from `gcraStep`)
 * Returns the wait in ms before the reserved request may be sent (0: now). The reservation is made
 * either way, so the caller must send after waiting.
 */
const RESERVE = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait < 0 then wait = 0 end
local newTat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', newTat), 'PX', newTat - now + 1000)
return wait
`;

/**
 * `gcraPenalize` in Lua.
 * KEYS[1] the channel's budget key
 * ARGV[1] now (ms), ARGV[2] the platform's retry-after (ms, rounded up), ARGV[3] toleranceMs of the
 * channel's rule
 * Returns 1. Moves the arrival time so that no request is allowed before now + retry-after.
 */
const PENALIZE = `
local now = tonumber(ARGV[1])
local floor = now + tonumber(ARGV[2]) + tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < floor then tat = floor end
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', tat - now + 1000)
return 1
`;

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
    const wait = await this.o.redis.eval(
      RESERVE,
      1,
      this.key(key),
      step.now,
      step.intervalMs,
      step.toleranceMs,
    );
    return Number(wait);
  }

  async penalize(key: string, retryAfterMs: number): Promise<void> {
    const step = gcraStep(this.rules.get(key) ?? FALLBACK_RATE_RULE, this.clock.now());
    await this.o.redis.eval(
      PENALIZE,
      1,
      this.key(key),
      step.now,
      Math.ceil(Math.max(0, retryAfterMs)),
      step.toleranceMs,
    );
  }
}
