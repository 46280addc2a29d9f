import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/adapters/render/clock.js";
import { MemoryRateLimiter } from "../../src/adapters/render/rate-limiter.js";
import { RedisRateLimiter } from "../../src/gateway/redis-rate-limiter.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";

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

const rule = { limit: 20, windowMs: 60_000 };

describe("RedisRateLimiter", () => {
  it("makes two processes share one channel budget: a burst of 20, then one per 3 s", async () => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const p1 = new RedisRateLimiter({ redis: r1, prefix, clock });
    const p2 = new RedisRateLimiter({ redis: r2, prefix, clock });
    const waits: number[] = [];
    for (let i = 0; i < 24; i++) waits.push(await (i % 2 ? p1 : p2).acquire("telegram:-100", rule));
    expect(waits.slice(0, 20)).toEqual(Array(20).fill(0));
    expect(waits.slice(20)).toEqual([3000, 6000, 9000, 12000]);
    // Other channels are not affected.
    expect(await p1.acquire("telegram:-200", rule)).toBe(0);
  });

  it("computes the same waits as the in-memory limiter", async () => {
    const clock = new ManualClock();
    const redis = new RedisRateLimiter({ redis: r1, prefix: uniquePrefix(), clock });
    const memory = new MemoryRateLimiter(clock);
    const r = { limit: 3, windowMs: 3000 };
    for (let i = 0; i < 10; i++) {
      expect(await redis.acquire("c", r)).toBe(await memory.acquire("c", r));
      await clock.advance(i % 3 === 0 ? 400 : 100);
    }
  });

  it("holds every process back after a 429 until the retry-after has passed", async () => {
    const clock = new ManualClock();
    const prefix = uniquePrefix();
    const p1 = new RedisRateLimiter({ redis: r1, prefix, clock });
    const p2 = new RedisRateLimiter({ redis: r2, prefix, clock });
    expect(await p1.acquire("chan", rule)).toBe(0);
    await p1.penalize("chan", 7000);
    expect(await p2.acquire("chan", rule)).toBe(7000);
    // That reservation went out at +7 s; the next one is spaced one interval (3 s) after it.
    await clock.advance(8000);
    expect(await p1.acquire("chan", rule)).toBe(2000);
  });
});
