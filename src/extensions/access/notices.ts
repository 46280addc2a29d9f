/**
 * Remembers which threads were already told "you are not allowed", so that someone who keeps
 * writing gets one notice per thread (per TTL) instead of one per message. In memory for one
 * process, in Redis when several gateway processes share the work.
 */
import type { RedisClient } from "../../queue/redis/client.js";
import { type Clock, systemClock } from "../clock.js";

/** `claim` resolves true the first time for `key` within `ttlMs` (across every process sharing it), false after. */
export interface NoticeMemory {
  claim(key: string, ttlMs: number): Promise<boolean>;
}

export class MemoryNoticeMemory implements NoticeMemory {
  private readonly until = new Map<string, number>();

  constructor(private readonly clock: Clock = systemClock) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    if (this.until.size > 10_000) {
      for (const [k, t] of this.until) if (t <= now) this.until.delete(k);
    }
    const taken = this.until.get(key);
    if (taken !== undefined && taken > now) return false;
    this.until.set(key, now + ttlMs);
    return true;
  }
}

/** `SET NX PX` under `${prefix}{<key>}:access-notice`, where `key` is a thread key. */
export class RedisNoticeMemory implements NoticeMemory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = "sb:",
  ) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const reply = await this.redis.set(
      `${this.prefix}{${key}}:access-notice`,
      "1",
      "PX",
      Math.max(1, ttlMs),
      "NX",
    );
    return reply === "OK";
  }
}
