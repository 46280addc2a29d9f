import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisConnectionLease } from "../../src/gateway/connection-lease.js";
import { ManualClock } from "../support/manual-clock.js";
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
    await until(() => log.includes("b:start"), 30_000, "takeover");
    expect(Date.now() - diedAt).toBeLessThan(2000);
    await until(() => aLost?.aborted === true, 30_000, "A noticing the loss");
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
    await until(() => bStarted, 30_000, "B after A released (long before A's 10 s TTL)");
    stopB.abort();
    await holdB;
  });
});

/** A lease whose renewals never answer once `stuck` is set (an unreachable Redis that queues commands). */
class StuckLease extends RedisConnectionLease {
  stuck = false;
  renewals = 0;
  answered = 0;
  override renew(): Promise<boolean> {
    this.renewals++;
    if (this.stuck) return new Promise<boolean>(() => {});
    return super.renew().finally(() => {
      this.answered++;
    });
  }
}

describe("RedisConnectionLease on a fake clock", () => {
  async function holding(ttlMs: number) {
    const prefix = uniquePrefix();
    const clock = new ManualClock();
    const a = new StuckLease({ redis: r1, prefix, name: "discord:app:shard:0", holderId: "a", ttlMs, clock });
    const stop = new AbortController();
    const events: string[] = [];
    let lostAt: number | undefined;
    const held = a.hold(
      async (lost) => {
        events.push("held");
        await new Promise<void>((r) =>
          lost.addEventListener(
            "abort",
            () => {
              lostAt = clock.now();
              r();
            },
            { once: true },
          ),
        );
      },
      { signal: stop.signal },
    );
    await until(() => events.includes("held"));
    return { a, clock, stop, held, start: clock.now(), lostAt: () => lostAt };
  }

  it("counts the lease as lost ⅔ of the TTL after the last successful renewal, even while a renewal hangs", async () => {
    const h = await holding(3000);
    // Renewals succeed every fifth of the TTL for a while (each one answered before time moves on):
    // the lease stays held.
    for (let i = 1; i <= 10; i++) {
      await h.clock.advance(600);
      await until(() => h.a.answered === i);
    }
    expect(h.lostAt()).toBeUndefined();
    const lastOk = h.start + 6000;
    // Redis stops answering: the next renewal hangs forever.
    h.a.stuck = true;
    await h.clock.advance(lastOk + 1999 - h.clock.now());
    expect(h.lostAt()).toBeUndefined();
    await h.clock.advance(1);
    expect(h.lostAt()).toBe(lastOk + 2000);
    // The key is still there (Redis keeps it for the whole TTL), so no standby can have taken it yet.
    expect(await r1.get(h.a.key)).toBe("a");
    h.stop.abort();
    await h.clock.advance(1000);
    await h.held;
  });

  it("counts it as lost at once when a renewal is refused", async () => {
    const h = await holding(3000);
    await r1.set(h.a.key, "b");
    await h.clock.advance(600);
    await until(() => h.lostAt() !== undefined);
    expect(h.lostAt()).toBe(h.start + 600);
    h.stop.abort();
    await h.clock.advance(1000);
    await h.held;
    expect(await r1.get(h.a.key)).toBe("b");
  });
});
