/**
 * The `RateLimiter` contract, run against every implementation: a burst of `limit` requests goes at
 * once, then one per `ceil(windowMs / limit)`; a platform 429 holds every process back until its
 * retry-after has passed; channels are independent; and the budget is one for every process sharing
 * the limiter. `make()` returns a limiter, `other` (a second process's limiter: for the memory one the
 * same object) and the `ManualClock` both read.
 */
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/adapters/types.js";
import { subjectPerTest } from "../support/contract-subject.js";
import type { ManualClock } from "../support/manual-clock.js";

export interface Limiters {
  limiter: RateLimiter;
  other: RateLimiter;
  clock: ManualClock;
  close(): Promise<void>;
}

const perMinute = { limit: 20, windowMs: 60_000 };
let seq = 0;
const channel = () => `telegram:-100${++seq}`;

export function rateLimiterContract(name: string, make: () => Promise<Limiters>): void {
  describe(`RateLimiter contract: ${name}`, () => {
    const open = subjectPerTest(make);

    it("lets a burst of `limit` go at once, then spaces requests one interval apart, across processes", async () => {
      const { limiter, other } = await open();
      const key = channel();
      const waits: number[] = [];
      for (let i = 0; i < 24; i++) waits.push(await (i % 2 ? limiter : other).acquire(key, perMinute));
      expect(waits.slice(0, 20)).toEqual(Array(20).fill(0));
      expect(waits.slice(20)).toEqual([3000, 6000, 9000, 12_000]);
    });

    it("gives the budget back as time passes", async () => {
      const { limiter, clock } = await open();
      const key = channel();
      for (let i = 0; i < 20; i++) await limiter.acquire(key, perMinute);
      expect(await limiter.acquire(key, perMinute)).toBe(3000);
      await clock.advance(2000);
      expect(await limiter.acquire(key, perMinute)).toBe(4000);
      await clock.advance(60_000);
      expect(await limiter.acquire(key, perMinute)).toBe(0);
    });

    it("keeps channels apart", async () => {
      const { limiter, other } = await open();
      const busy = channel();
      for (let i = 0; i < 21; i++) await limiter.acquire(busy, perMinute);
      expect(await other.acquire(channel(), perMinute)).toBe(0);
      expect(await other.acquire(busy, perMinute)).toBe(6000);
    });

    it("spaces a rule whose window does not divide evenly by whole milliseconds, rounded up", async () => {
      const { limiter } = await open();
      const key = channel();
      const rule = { limit: 3, windowMs: 1000 };
      const waits = [];
      for (let i = 0; i < 5; i++) waits.push(await limiter.acquire(key, rule));
      expect(waits).toEqual([0, 0, 0, 334, 668]);
    });

    it("holds every process back after a 429 until the retry-after has passed, then spaces on from there", async () => {
      const { limiter, other, clock } = await open();
      const key = channel();
      expect(await limiter.acquire(key, perMinute)).toBe(0);
      await limiter.penalize(key, 7000);
      expect(await other.acquire(key, perMinute)).toBe(7000);
      // That reservation goes out at +7 s; the next one is spaced one interval (3 s) after it.
      await clock.advance(8000);
      expect(await limiter.acquire(key, perMinute)).toBe(2000);
    });

    it("never shortens a wait that is already longer than the retry-after", async () => {
      const { limiter } = await open();
      const key = channel();
      for (let i = 0; i < 23; i++) await limiter.acquire(key, perMinute);
      await limiter.penalize(key, 1000.2);
      expect(await limiter.acquire(key, perMinute)).toBe(12_000);
    });
  });
}
