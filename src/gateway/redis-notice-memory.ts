/**
 * `NoticeMemory` shared by every gateway process through Redis, so someone who is not allowed gets
 * one notice per thread however many processes receive their messages.
 */

import type { NoticeMemory } from "../extensions/access/notices.js";
import type { RedisClient } from "../queue/redis/client.js";
import { accessNoticeKey, DEFAULT_KEY_PREFIX } from "../redis-keys.js";

/** `SET NX PX` under `accessNoticeKey` (the thread's hash tag, for Redis Cluster). */
export class RedisNoticeMemory implements NoticeMemory {
  /** `redis` is shared and owned by the caller; this memory never closes it. */
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = DEFAULT_KEY_PREFIX,
  ) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const reply = await this.redis.set(
      accessNoticeKey(this.prefix, key),
      "1",
      "PX",
      Math.max(1, Math.ceil(ttlMs)),
      "NX",
    );
    return reply === "OK";
  }
}
