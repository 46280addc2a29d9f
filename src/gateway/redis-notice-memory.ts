/**
 * `NoticeMemory` shared by every gateway process through Redis, so someone who is not allowed gets
 * one notice per thread however many processes receive their messages.
 */

import type { NoticeMemory } from "../extensions/access/notices.js";
import type { RedisClient } from "../queue/redis/client.js";

/** `SET NX PX` under `${prefix}{<thread key>}:access-notice` (the thread's hash tag, for Redis Cluster). */
export class RedisNoticeMemory implements NoticeMemory {
  /** `redis` is shared and owned by the caller; this memory never closes it. */
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = "sb:",
  ) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const reply = await this.redis.set(
      `${this.prefix}{${key}}:access-notice`,
      "1",
      "PX",
      Math.max(1, Math.ceil(ttlMs)),
      "NX",
    );
    return reply === "OK";
  }
}
