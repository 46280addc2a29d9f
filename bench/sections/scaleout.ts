/**
 * Agent runs per second with 1 and 2 worker processes: a gateway (this process) delivers one
 * message to each of `count` new threads; worker child processes run them and count finished runs
 * in Redis. The ratio of the two is computed within one run. Two models:
 *
 * - I/O-bound (`streamMs` > 0): each reply streams over `streamMs`, as a real model's does, so a
 *   worker's concurrency bounds its runs/s (concurrency / streamMs), not the CPU: what scale-out
 *   is for. A worker runs `concurrency` threads at once.
 * - immediate (`streamMs` 0): runs are pure CPU, so on a machine without free cores a second
 *   worker process only competes with the first.
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

export interface ScaleOutLoad {
  count: number;
  /** 0: immediate replies; else each reply streams 20 tokens over this many ms. */
  streamMs: number;
  concurrency: number;
}

async function runsPerSec(redisUrl: string, workers: number, load: ScaleOutLoad): Promise<number> {
  const { count, streamMs } = load;
  const pace = streamMs > 0 ? ` tokens=20 ms=${streamMs}` : "";
  const prefix = `sbs:${Math.random().toString(36).slice(2, 8)}:`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const gateway = new RedisRuntime({
    redis,
    prefix,
    store: new RedisSessionStore({ redis, prefix }),
    sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
  });
  const procs = Array.from({ length: workers }, () =>
    spawnWorker({ REDIS_URL: redisUrl, SB_PREFIX: prefix, SB_CONCURRENCY: String(load.concurrency) }),
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
        await gateway.deliver(benchMessage(`telegram:s:${i}`, `s${i}`, `run [m${i}]${pace}`));
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

export async function runScaleOut(redisUrl: string, load: ScaleOutLoad): Promise<ScaleOutSample> {
  const one = await runsPerSec(redisUrl, 1, load);
  const two = await runsPerSec(redisUrl, 2, load);
  return { one, two, ratio: two / one };
}
