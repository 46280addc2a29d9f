/**
 * `KeyValueStore` over Redis (`GET`, `SET … PX`), for adapter state that several processes share:
 * which thread a bot message belongs to (Telegram, Discord), which threads the bot takes part in
 * (Slack). Adapters prefix their own keys (`keyPrefix`), so this store uses keys as given.
 */

import type { KeyValueStore } from "../adapters/types.js";
import type { RedisClient } from "../queue/redis/client.js";

export class RedisKeyValueStore implements KeyValueStore {
  /** `redis` is shared and owned by the caller; this store never closes it. */
  constructor(private readonly redis: RedisClient) {}

  async get(key: string): Promise<string | undefined> {
    const value = await this.redis.get(key);
    return value ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(key, value, "PX", Math.max(1, Math.ceil(ttlMs)));
  }
}
