import { expect } from "vitest";
import { MemoryNoticeMemory } from "../../src/extensions/access/notices.js";
import { RedisNoticeMemory } from "../../src/gateway/redis-notice-memory.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { noticeMemoryContract } from "./notice-memory-contract.js";

noticeMemoryContract("memory", async () => {
  const clock = new ManualClock();
  const memory = new MemoryNoticeMemory(clock);
  return {
    memory,
    other: memory,
    lapse: async (_key, ttlMs) => {
      await clock.advance(ttlMs + 1);
    },
    close: async () => {},
  };
});

noticeMemoryContract("redis", async () => {
  const prefix = uniquePrefix();
  const a = connectRedis();
  const b = connectRedis();
  return {
    memory: new RedisNoticeMemory(a, prefix),
    other: new RedisNoticeMemory(b, prefix),
    async lapse(key) {
      // The key carries its TTL; deleting it is what the expiry does, without waiting for it.
      expect(await a.pttl(`${prefix}{${key}}:access-notice`)).toBeGreaterThan(0);
      await a.del(`${prefix}{${key}}:access-notice`);
    },
    async close() {
      await a.quit();
      await b.quit();
    },
  };
});
