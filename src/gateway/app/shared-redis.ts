/**
 * The process's connection to the Redis it shares with other processes, and the stores that live in
 * it or, without Redis, in this process's memory: the first steps of `createGateway`.
 */
import { MemoryRateLimiter } from "../../adapters/render/rate-limiter.js";
import type { RateLimiter } from "../../adapters/types.js";
import { MemoryNoticeMemory, type NoticeMemory } from "../../extensions/access/notices.js";
import type { ApprovalStore } from "../../extensions/approval/types.js";
import { MemoryApprovalStore } from "../../queue/approvals/memory-store.js";
import type { RedisClient } from "../../queue/redis/client.js";
import { defaultQueuePrefix } from "../../redis-keys.js";
import { redisTargetOf } from "../config/redis-target.js";
import type { RuntimeConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import type { Logger } from "../log.js";
import { meteredApprovalStore } from "./extensions.js";
import type * as RedisKitModule from "./redis-kit.js";

/** A connected Redis and the Redis-only code (loaded only in Redis mode: the embedded mode starts without ioredis and BullMQ). */
export interface SharedRedis {
  redis: RedisClient;
  kit: typeof RedisKitModule;
  /** The runs queue's BullMQ prefix: on a cluster it needs a hash tag (`{sb-runs}` by default). */
  queuePrefix: string;
}

/**
 * The shared Redis of `runtime` once it answers PING, or undefined in the embedded mode. Throws
 * the one clear error of `reachRedis` when it does not answer, leaving nothing connected.
 */
export async function openSharedRedis(
  runtime: RuntimeConfig,
  logger: Logger,
): Promise<SharedRedis | undefined> {
  const target = redisTargetOf(runtime);
  if (!target) return undefined;
  const kit = await import("./redis-kit.js");
  const redis = kit.connectRedis(target, logger);
  try {
    // Before anything else connects (the runs queue, the workers): Redis down is one clear error.
    await kit.reachRedis(redis, target);
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  const queuePrefix = runtime.queuePrefix ?? defaultQueuePrefix(runtime.keyPrefix, kit.isCluster(redis));
  return { redis, kit, queuePrefix };
}

/** The small stores every process shares with the others: in Redis when there is one, else in memory. */
export interface SharedStores {
  approvals: ApprovalStore;
  /** One notice per thread: "you are not allowed", "this model cannot see pictures". */
  notices: NoticeMemory;
  /** The platforms' rate limits, which every process posting to a platform shares. */
  limiter: RateLimiter;
}

/** The `SharedStores` of a process with `shared` Redis (undefined: embedded), keys under `prefix`. */
export function sharedStores(
  shared: SharedRedis | undefined,
  prefix: string,
  metrics: SwitchboardMetrics,
): SharedStores {
  if (!shared)
    return {
      approvals: meteredApprovalStore(new MemoryApprovalStore(), metrics),
      notices: new MemoryNoticeMemory(),
      limiter: new MemoryRateLimiter(),
    };
  const { redis, kit } = shared;
  return {
    approvals: meteredApprovalStore(new kit.RedisApprovalStore(redis, { prefix }), metrics),
    notices: new kit.RedisNoticeMemory(redis, prefix),
    limiter: new kit.RedisRateLimiter({ redis, prefix }),
  };
}
