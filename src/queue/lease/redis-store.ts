/**
 * `LeaseStore` on Redis: a lease is a string key holding its owner, with a `PX` expiry, so it runs
 * out on Redis's own clock whatever the clocks of the processes say. Each step is one script on one
 * key, so it runs on Redis Cluster (the caller's key carries the hash tag it needs: `{<thread>}`,
 * `{connection:<name>}`).
 */
import type { RedisClient } from "../redis/client.js";
import { type LuaScript, runScript, type ScriptReply } from "../redis/run-script.js";
import type { LeaseAcquire, LeaseStore } from "./store.js";

/**
 * The lease's acquire rule as a Lua function, so a script that takes a lease as part of a larger
 * step (the worker's wake acquire) takes it exactly as `lease.acquire` does: set it if nobody holds
 * it, renew it if the caller already does. Returns {1} or {0, holder, remaining ttl in ms}.
 */
export const ACQUIRE_LEASE_LUA = `
local function acquire_lease(key, owner, ttl)
  if redis.call('SET', key, owner, 'NX', 'PX', ttl) then return {1} end
  local holder = redis.call('GET', key)
  if holder == owner then
    redis.call('PEXPIRE', key, ttl)
    return {1}
  end
  return {0, holder or '', redis.call('PTTL', key)}
end
`;

const ACQUIRE: LuaScript = {
  name: "lease.acquire",
  numberOfKeys: 1,
  lua: `--[[
  Takes a lease if nobody holds it; renews it if the caller already does.
  KEYS[1] lease
  ARGV[1] owner  ARGV[2] ttl in ms
  Returns {1} acquired; {0, holder, remaining ttl in ms} held by someone else
]]
${ACQUIRE_LEASE_LUA}
return acquire_lease(KEYS[1], ARGV[1], ARGV[2])
`,
};

const RENEW: LuaScript = {
  name: "lease.renew",
  numberOfKeys: 1,
  lua: `--[[
  Extends the lease of its owner.
  KEYS[1] lease
  ARGV[1] owner  ARGV[2] ttl in ms
  Returns 1 extended; 0 the caller does not hold the lease (lost)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`,
};

const RELEASE: LuaScript = {
  name: "lease.release",
  numberOfKeys: 1,
  lua: `--[[
  Deletes the lease of its owner.
  KEYS[1] lease
  ARGV[1] owner
  Returns 1 deleted; 0 not the owner's (nothing changed)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`,
};

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
