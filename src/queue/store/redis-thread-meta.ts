/**
 * A thread's settings and usage in Redis, apart from its session entries: the `{t}:meta` hash
 * (model, thinking level, usage totals, updatedAt; the session scripts write its current session and
 * leaf) and the `threads` index of last activity. `RedisSessionStore` reads and patches them here.
 */

import type { SessionKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";
import { totalsFrom } from "./shared.js";
import type { ThreadMeta, ThreadMetaPatch, UsageTotals } from "./types.js";

/** The thread's metadata, or undefined when the thread has none yet. */
export async function readThreadMeta(
  redis: RedisClient,
  keys: SessionKeys,
  threadKey: string,
): Promise<ThreadMeta | undefined> {
  const h = await redis.hgetall(keys.meta(threadKey));
  if (Object.keys(h).length === 0) return undefined;
  const meta: ThreadMeta = {
    threadKey,
    leafId: h.leafId ? h.leafId : null,
    usage: totalsFrom(h),
    updatedAt: Number(h.updatedAt ?? 0),
  };
  if (h.currentSessionId) meta.currentSessionId = h.currentSessionId;
  if (h.model) meta.model = h.model;
  if (h.thinkingLevel) meta.thinkingLevel = h.thinkingLevel;
  return meta;
}

/** Sets (or with `null` removes) the model and thinking level; the thread counts as active at `now`. */
export async function patchThreadMeta(
  redis: RedisClient,
  keys: SessionKeys,
  threadKey: string,
  patch: ThreadMetaPatch,
  now: number,
): Promise<void> {
  const key = keys.meta(threadKey);
  const multi = redis.multi();
  for (const field of ["model", "thinkingLevel"] as const) {
    const value = patch[field];
    if (value === null) multi.hdel(key, field);
    else if (value !== undefined) multi.hset(key, field, value);
  }
  multi.hset(key, "updatedAt", String(now));
  await multi.exec();
  // A command of its own: the thread index is outside the thread's hash slot (Redis Cluster).
  await redis.zadd(keys.threads(), now, threadKey);
}

/** Adds `usage` to the thread's totals (integers for tokens, a float for cost). */
export async function addThreadUsage(
  redis: RedisClient,
  keys: SessionKeys,
  threadKey: string,
  usage: Partial<UsageTotals>,
  now: number,
): Promise<void> {
  const key = keys.meta(threadKey);
  const multi = redis.multi();
  for (const field of ["input", "output", "cacheRead", "cacheWrite"] as const) {
    const v = Math.round(usage[field] ?? 0);
    if (Number.isFinite(v) && v !== 0) multi.hincrby(key, field, v);
  }
  const cost = usage.cost ?? 0;
  if (Number.isFinite(cost) && cost !== 0) multi.hincrbyfloat(key, "cost", cost.toFixed(12));
  multi.hset(key, "updatedAt", String(now));
  await multi.exec();
}
