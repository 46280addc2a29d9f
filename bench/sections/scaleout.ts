/**
 * Agent runs per second with 1 and 2 worker processes: a gateway (this process) delivers one
 * message to each of `count` new threads; worker child processes run them with the immediate
 * model and count finished runs in Redis. The ratio of the two is computed within one run.
 */
import { Redis } from "ioredis";
import type { InboundMessage } from "../../src/adapters/types.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { nowMs } from "../lib/paced-model.js";
import { spawnWorker } from "../lib/processes.js";

export function benchMessage(threadKey: string, eventId: string, text: string): InboundMessage {
  return {
    platform: "telegram",
    threadKey,
    eventId,
    messageId: eventId,
    channelId: threadKey,
    user: { id: "u1", name: "Ada", isBot: false },
    text,
    attachments: [],
    mentioned: true,
    isDirect: true,
    timestamp: Date.now(),
  };
}

async function runsPerSec(redisUrl: string, workers: number, count: number): Promise<number> {
  const prefix = `sbs:${Math.random().toString(36).slice(2, 8)}:`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const gateway = new RedisRuntime({
    redis,
    prefix,
    store: new RedisSessionStore({ redis, prefix }),
    sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
  });
  const procs = Array.from({ length: workers }, () =>
    spawnWorker({ REDIS_URL: redisUrl, SB_PREFIX: prefix, SB_CONCURRENCY: "20" }),
  );
  try {
    await Promise.all(procs.map((p) => p.ready));
    const done = async () => Number((await redis.get(`${prefix}bench:done`)) ?? 0);
    // Warm-up so every worker has loaded its modules and scripts.
    const warm = 20 * workers;
    for (let i = 0; i < warm; i++)
      await gateway.deliver(benchMessage(`telegram:w:${i}`, `w${i}`, `warm [m${i}]`));
    const warmDeadline = Date.now() + 30_000;
    while ((await done()) < warm) {
      if (Date.now() > warmDeadline) throw new Error("scale-out: warm-up runs did not finish within 30 s.");
      await new Promise((r) => setTimeout(r, 20));
    }
    const t0 = nowMs();
    const delivering = (async () => {
      for (let i = 0; i < count; i++) {
        await gateway.deliver(benchMessage(`telegram:s:${i}`, `s${i}`, `run [m${i}]`));
      }
    })();
    const deadline = Date.now() + 120_000;
    while ((await done()) < warm + count) {
      if (Date.now() > deadline) throw new Error(`scale-out: ${count} runs did not finish within 120 s.`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await delivering;
    return (count * 1000) / (nowMs() - t0);
  } finally {
    await Promise.all(procs.map((p) => p.kill("SIGTERM")));
    await gateway.stop({ graceMs: 0 });
    let cursor = "0";
    do {
      const [c, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = c;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== "0");
    await redis.quit().catch(() => {});
  }
}

export interface ScaleOutSample {
  one: number;
  two: number;
  ratio: number;
}

export async function runScaleOut(redisUrl: string, count: number): Promise<ScaleOutSample> {
  const one = await runsPerSec(redisUrl, 1, count);
  const two = await runsPerSec(redisUrl, 2, count);
  return { one, two, ratio: two / one };
}
