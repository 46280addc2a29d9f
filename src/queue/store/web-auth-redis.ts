/**
 * The web chat's sign-ins on Redis, shared by every gateway. Keys (`WebChatKeys` in src/redis-keys.ts),
 * each used by single-key commands only, so they work on a cluster:
 *
 * | key | type | holds |
 * |---|---|---|
 * | `<prefix>web:signin:<sha256>` | string + PX | a one-time sign-in token's digest; `GETDEL` redeems it |
 * | `<prefix>web:session:<sha256>` | string + PX | a browser session's digest; each use extends it |
 *
 * Only digests are stored: reading Redis gives nothing that signs in. Writing Redis is another
 * matter (whoever can write it can also queue messages and decide approvals), so Redis must be
 * reachable only by Switchboard (docs/security.md).
 */

import type { WebAuthStore } from "../../adapters/web/auth-store.js";
import { WebChatKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";

export class RedisWebAuthStore implements WebAuthStore {
  private readonly keys: WebChatKeys;

  /** `prefix`: the key prefix (default `DEFAULT_KEY_PREFIX`). */
  constructor(
    private readonly redis: RedisClient,
    prefix?: string,
  ) {
    this.keys = new WebChatKeys(prefix);
  }

  async addSignIn(digest: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.signIn(digest), "1", "PX", Math.max(1, Math.round(ttlMs)));
  }

  async redeemSignIn(digest: string): Promise<boolean> {
    return (await this.redis.getdel(this.keys.signIn(digest))) !== null;
  }

  async addSession(digest: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.session(digest), "1", "PX", Math.max(1, Math.round(ttlMs)));
  }

  async touchSession(digest: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.pexpire(this.keys.session(digest), Math.max(1, Math.round(ttlMs)))) === 1;
  }

  async endSession(digest: string): Promise<void> {
    await this.redis.del(this.keys.session(digest));
  }
}
