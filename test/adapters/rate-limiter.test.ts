/**
 * Both `RateLimiter`s run the contract, and they are one arithmetic: for any sequence of requests,
 * 429 penalties and clock moves (fractional milliseconds included) the Redis limiter and the
 * in-memory one give the same waits.
 */
import fc from "fast-check";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../src/adapters/render/rate-limiter.js";
import { RedisRateLimiter } from "../../src/gateway/redis-rate-limiter.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { rateLimiterContract } from "./rate-limiter-contract.js";

let r1: Redis;
let r2: Redis;
beforeAll(() => {
  r1 = connectRedis();
  r2 = connectRedis();
});
afterAll(() => {
  r1.disconnect();
  r2.disconnect();
});

rateLimiterContract("memory", async () => {
  const clock = new ManualClock();
  const limiter = new MemoryRateLimiter(clock);
  return { limiter, other: limiter, clock, close: async () => {} };
});

rateLimiterContract("redis", async () => {
  const clock = new ManualClock();
  const prefix = uniquePrefix();
  return {
    limiter: new RedisRateLimiter({ redis: r1, prefix, clock }),
    other: new RedisRateLimiter({ redis: r2, prefix, clock }),
    clock,
    close: async () => {},
  };
});

type Op =
  | { kind: "acquire"; key: number; limit: number; windowMs: number }
  | { kind: "penalize"; key: number; retryAfterMs: number }
  | { kind: "advance"; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("acquire" as const),
    key: fc.integer({ min: 0, max: 2 }),
    limit: fc.integer({ min: 1, max: 7 }),
    windowMs: fc.integer({ min: 1, max: 5000 }),
  }),
  fc.record({
    kind: fc.constant("penalize" as const),
    key: fc.integer({ min: 0, max: 2 }),
    retryAfterMs: fc.double({ min: 0, max: 10_000, noNaN: true }),
  }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.double({ min: 0, max: 3000, noNaN: true }) }),
);

describe("one rate-limit arithmetic", () => {
  it("the Redis and the in-memory limiter give the same waits for any sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const clock = new ManualClock();
        await clock.advance(1_000_000.5);
        const memory = new MemoryRateLimiter(clock);
        const redis = new RedisRateLimiter({ redis: r1, prefix: uniquePrefix(), clock });
        for (const o of ops) {
          if (o.kind === "advance") await clock.advance(o.ms);
          else if (o.kind === "penalize") {
            await memory.penalize(`c${o.key}`, o.retryAfterMs);
            await redis.penalize(`c${o.key}`, o.retryAfterMs);
          } else {
            const rule = { limit: o.limit, windowMs: o.windowMs };
            expect(await redis.acquire(`c${o.key}`, rule)).toBe(await memory.acquire(`c${o.key}`, rule));
          }
        }
      }),
      { numRuns: 60, seed: 18 },
    );
  });
});
