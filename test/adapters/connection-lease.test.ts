import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisConnectionLease, RedisEventDeduper } from "../../src/gateway/connection-lease.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { until } from "./support/drive.js";

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

const lease = (redis: Redis, prefix: string, holderId: string, ttlMs = 400) =>
  new RedisConnectionLease({ redis, prefix, name: "telegram:polling:1", holderId, ttlMs, retryMs: 50 });

describe("RedisConnectionLease", () => {
  it("is held by one holder at a time and only its holder can renew or release it", async () => {
    const prefix = uniquePrefix();
    const a = lease(r1, prefix, "a");
    const b = lease(r2, prefix, "b");
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await b.renew()).toBe(false);
    await b.release();
    expect(await r1.get(a.key)).toBe("a");
    expect(await a.renew()).toBe(true);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
    expect(a.key).toBe(`${prefix}{connection:telegram:polling:1}:lease`);
  });

  it("runs the session only while held, and a standby takes over within the TTL when the holder dies", async () => {
    const prefix = uniquePrefix();
    const dyingRedis = connectRedis();
    const a = lease(dyingRedis, prefix, "a");
    const b = lease(r2, prefix, "b");
    const log: string[] = [];
    const stopA = new AbortController();
    const stopB = new AbortController();
    let aLost: AbortSignal | undefined;
    const holdA = a.hold(
      async (lost) => {
        aLost = lost;
        log.push("a:start");
        await new Promise<void>((r) => lost.addEventListener("abort", () => r(), { once: true }));
        log.push("a:lost");
      },
      { signal: stopA.signal },
    );
    await until(() => log.includes("a:start"));
    const states: string[] = [];
    const holdB = b.hold(
      async (lost) => {
        log.push("b:start");
        await new Promise<void>((r) => lost.addEventListener("abort", () => r(), { once: true }));
      },
      { signal: stopB.signal, onState: (s) => states.push(s) },
    );
    await until(() => states.includes("standby"));
    const diedAt = Date.now();
    dyingRedis.disconnect();
    await until(() => log.includes("b:start"), 5000, "takeover");
    expect(Date.now() - diedAt).toBeLessThan(2000);
    await until(() => aLost?.aborted === true, 5000, "A noticing the loss");
    expect(log.indexOf("b:start")).toBeGreaterThan(log.indexOf("a:start"));
    stopA.abort();
    stopB.abort();
    await Promise.all([holdA, holdB]);
    // B released its lease on stop.
    expect(await r1.get(b.key)).toBeNull();
  });

  it("hands the lease over at once when the holder stops gracefully", async () => {
    const prefix = uniquePrefix();
    const a = lease(r1, prefix, "a", 10_000);
    const b = lease(r2, prefix, "b", 10_000);
    const stopA = new AbortController();
    const stopB = new AbortController();
    let bStarted = false;
    const holdA = a.hold(
      async (lost) => new Promise((r) => lost.addEventListener("abort", () => r(), { once: true })),
      {
        signal: stopA.signal,
      },
    );
    await until(async () => (await r1.get(a.key)) === "a");
    const holdB = b.hold(
      async (lost) => {
        bStarted = true;
        await new Promise<void>((r) => lost.addEventListener("abort", () => r(), { once: true }));
      },
      { signal: stopB.signal },
    );
    stopA.abort();
    await holdA;
    await until(() => bStarted, 3000, "B after A released (long before A's 10 s TTL)");
    stopB.abort();
    await holdB;
  });
});

describe("RedisEventDeduper", () => {
  it("claims an event once across processes and can release a failed claim", async () => {
    const prefix = uniquePrefix();
    const d1 = new RedisEventDeduper({ redis: r1, prefix });
    const d2 = new RedisEventDeduper({ redis: r2, prefix });
    expect(await d1.claim("telegram:update:1")).toBe(true);
    expect(await d2.claim("telegram:update:1")).toBe(false);
    await d1.release("telegram:update:1");
    expect(await d2.claim("telegram:update:1")).toBe(true);
  });
});
