/**
 * The parts of a process that exist only in Redis mode and load heavy packages (ioredis, BullMQ:
 * about 250 modules, 20+ MB resident). `createGateway` imports this module only when
 * `runtime.redisUrl` or `runtime.redisCluster` is set, so the embedded mode starts without them;
 * every Redis-backed store is reached through it, never imported by the gateway directly.
 */

import { Queue } from "bullmq";
import { errorMessage } from "../../agent/errors.js";
import { createRedisClient, type RedisClient, type RedisTarget } from "../../queue/redis/client.js";
import { describeRedisTarget } from "../config/redis-target.js";
import type { Logger } from "../log.js";

export { RedisApprovalStore } from "../../queue/approvals/redis-store.js";
export { RedisBudgetLedger } from "../../queue/budgets/redis-ledger.js";
export { isCluster } from "../../queue/redis/client.js";
export { RedisRuntime } from "../../queue/redis/redis-runtime.js";
export { BullScheduleTimer } from "../../queue/schedules/bull-timer.js";
export { RedisScheduleStore } from "../../queue/schedules/redis-store.js";
export { RedisSessionStore } from "../../queue/store/redis-store.js";
export { RedisWebAuthStore } from "../../queue/store/web-auth-redis.js";
export { RedisWebChatStore } from "../../queue/store/web-redis-store.js";
export { RedisWebUploadStore } from "../../queue/store/web-redis-uploads.js";
export { RedisNoticeMemory } from "../redis-notice-memory.js";
export { RedisRateLimiter } from "../redis-rate-limiter.js";

/**
 * The process's shared Redis connection (one server, or a cluster client that follows failovers).
 * Connection errors before Redis first answered are left to `reachRedis` (one clear message instead
 * of a log line per retry); later ones are logged.
 */
export function connectRedis(target: RedisTarget, logger: Logger): RedisClient {
  // disconnectTimeout: a socket that never connected is destroyed at once, not after ioredis's 2 s.
  const redis = createRedisClient(target, { maxRetriesPerRequest: null, disconnectTimeout: 100 });
  let ready = false;
  redis.once("ready", () => {
    ready = true;
  });
  redis.on("error", (err: unknown) => {
    if (ready) logger.warn({ err }, "redis connection error");
  });
  return redis;
}

/**
 * Resolves once Redis answers PING. When it does not within `ms` (default 1 s: a Redis that is
 * still starting gets a moment, and with start-up and loading BullMQ a person at the terminal hears
 * within 2 s of launching), throws one error that says where Redis was expected, the last
 * connection error, and what to fix.
 */
export async function reachRedis(redis: RedisClient, target: RedisTarget, ms = 1000): Promise<void> {
  let lastError: string | undefined;
  const onError = (err: unknown) => {
    lastError = errorMessage(err);
  };
  redis.on("error", onError);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(lastError ?? `no answer within ${ms / 1000} s`)), ms);
  });
  try {
    await Promise.race([redis.ping(), timeout]);
  } catch (err) {
    throw new Error(
      "url" in target
        ? `${describeRedisTarget(target)} is not reachable (${errorMessage(err)}). ` +
            "Start Redis, or fix runtime.redisUrl / REDIS_URL."
        : `${describeRedisTarget(target)} is not reachable (${errorMessage(err)}). ` +
            "Start the cluster, or fix runtime.redisCluster / REDIS_CLUSTER.",
    );
  } finally {
    clearTimeout(timer);
    redis.off("error", onError);
  }
}

/** Samples the number of wake jobs waiting in the runs queue (`queuePrefix`: the runtime's BullMQ prefix). */
export function queueDepthSampler(
  redis: RedisClient,
  queuePrefix: string,
  queueName = "runs",
): { sample: () => Promise<number>; close: () => Promise<void> } {
  const queue = new Queue(queueName, { connection: redis, prefix: queuePrefix });
  queue.on("error", () => {});
  return {
    sample: () => queue.getWaitingCount(),
    close: () => queue.close(),
  };
}
