/**
 * `LeaseStore` on Redis: a lease is a string key holding its owner, with a `PX` expiry, so it runs
 * out on Redis's own clock whatever the clocks of the processes say. Each step is one script on one
 * key, so it runs on Redis Cluster (the caller's key carries the hash tag it needs: `{<thread>}`,
 * `{connection:<name>}`). Its scripts are files in src/queue/lua/ (lease-*.lua; the acquire rule is
 * the fragment acquire-lease.lua, which the worker's wake acquire includes too).
 */

import { luaScript } from "../lua/load.js";
import type { RedisClient } from "../redis/client.js";
import { runScript, type ScriptReply } from "../redis/run-script.js";
import type { LeaseAcquire, LeaseStore } from "./store.js";

/** Takes a lease if nobody holds it; renews it if the caller already does (lease-acquire.1.lua). */
const ACQUIRE = luaScript("lease-acquire");
/** Extends the lease of its owner (lease-renew.1.lua). */
const RENEW = luaScript("lease-renew");
/** Deletes the lease of its owner (lease-release.1.lua). */
const RELEASE = luaScript("lease-release");

const num = (reply: ScriptReply | undefined): number =>
  typeof reply === "number" ? reply : Number(reply ?? 0);

/** Leases as Redis keys; `name` is the full key. Uses (does not own) `redis`. */
export class RedisLeaseStore implements LeaseStore {
  constructor(private readonly redis: RedisClient) {}

  async acquire(name: string, owner: string, ttlMs: number): Promise<LeaseAcquire> {
    const r = (await runScript(this.redis, ACQUIRE, [name], [owner, ttlMs])) as ScriptReply[];
    if (num(r[0]) === 1) return { acquired: true };
    return { acquired: false, holder: String(r[1] ?? ""), pttl: num(r[2]) };
  }

  async renew(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return num(await runScript(this.redis, RENEW, [name], [owner, ttlMs])) === 1;
  }

  async release(name: string, owner: string): Promise<boolean> {
    return num(await runScript(this.redis, RELEASE, [name], [owner])) === 1;
  }
}
