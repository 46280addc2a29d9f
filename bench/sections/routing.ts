/**
 * Routing throughput of one gateway: `RedisRuntime.deliver` (no worker running, so only the
 * gateway's side is measured: dedupe claim, pending ZADD, APPEND, BullMQ job add, done mark) with
 * a fixed number of deliveries in flight, next to the raw BullMQ `Queue.add` rate of the same
 * connection measured in the same run (the floor: a gateway cannot route faster than it adds jobs).
 * Every delivery goes to a new thread, so every one adds a job (the worst case).
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { InboundMessage } from "../../src/adapters/types.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { nowMs } from "../lib/paced-model.js";

export interface RoutingSample {
  deliverPerSec: number;
  bullAddPerSec: number;
  ratio: number;
}

async function pump(count: number, inFlight: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = nowMs();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await op(next++);
    }),
  );
  return (count * 1000) / (nowMs() - t0);
}

function message(i: number, run: string): InboundMessage {
  return {
    platform: "telegram",
    threadKey: `telegram:${run}:${i}`,
    eventId: `telegram:update:${run}:${i}`,
    messageId: `telegram:${run}:${i}`,
    channelId: `${i}`,
    user: { id: "u1", name: "Ada", isBot: false },
    text: `hello ${i}`,
    attachments: [],
    mentioned: true,
    isDirect: true,
    timestamp: Date.now(),
  };
}

export async function runRouting(redisUrl: string, count: number, inFlight = 64): Promise<RoutingSample> {
  const run = Math.random().toString(36).slice(2, 8);
  const prefix = `sbr:${run}:`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const runtime = new RedisRuntime({
    redis,
    prefix,
    store: new RedisSessionStore({ redis, prefix }),
    sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
    sweepIntervalMs: 3_600_000,
  });
  const queue = new Queue(`raw-${run}`, { connection: redis, prefix: `sbr-raw-${run}` });
  try {
    // Warm both paths (script loading, connection).
    await pump(200, inFlight, (i) => runtime.deliver(message(1_000_000 + i, run)));
    await pump(200, inFlight, (i) => queue.add("wake", { thread: `w${i}` }, { jobId: `w${i}` }));
    const bullAddPerSec = await pump(count, inFlight, (i) =>
      queue.add("wake", { thread: `t${i}` }, { jobId: `j${i}`, attempts: 1 }),
    );
    const deliverPerSec = await pump(count, inFlight, (i) => runtime.deliver(message(i, run)));
    return { deliverPerSec, bullAddPerSec, ratio: deliverPerSec / bullAddPerSec };
  } finally {
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    await runtime.stop({ graceMs: 0 });
    // Leave no keys behind on a shared REDIS_URL.
    for (const pattern of [`${prefix}*`, `sbr-raw-${run}*`]) {
      let cursor = "0";
      do {
        const [c, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = c;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== "0");
    }
    await redis.quit().catch(() => {});
  }
}
