/**
 * Remembers which threads were already told "you are not allowed", so that someone who keeps
 * writing gets one notice per thread (per TTL) instead of one per message. The seam is
 * `NoticeMemory`; here is the in-memory one for one process. Several gateway processes share the
 * Redis one (`RedisNoticeMemory`, src/gateway/redis-notice-memory.ts), which the wiring passes in.
 */
import { type Clock, systemClock } from "../clock.js";

/**
 * `claim` resolves true the first time for `key` (a thread key) within `ttlMs`, across every process
 * sharing the memory, and false after that until `ttlMs` has passed. Implementations pass
 * test/extensions/notice-memory-contract.ts.
 */
export interface NoticeMemory {
  claim(key: string, ttlMs: number): Promise<boolean>;
}

/** `NoticeMemory` for one process, on the injected clock. */
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
