/**
 * The runtime's Lua scripts (files in src/queue/lua/, whose headers name every KEYS and ARGV entry
 * and each return value). Each is one atomic step on the keys of one thread (one hash slot), so
 * they also run on Redis Cluster. docs/runtime.md explains how they fit together. The lease's own
 * steps (take, renew, force release) are `RedisLeaseStore`'s (queue/lease/redis-store.ts); the
 * steps here that read the lease key check its token the same way, and WAKE_ACQUIRE takes it by the
 * same Lua function (acquire-lease.lua).
 */
import { luaScript } from "../lua/load.js";

/** Appends one item to a thread's inbox and sets its wake flag (append.6.lua). */
export const APPEND = luaScript("append");
/** Aborts everything delivered to a thread so far (stop.4.lua). */
export const STOP = luaScript("stop");
/** Releases the lease only when nothing is left to do (release.3.lua). */
export const RELEASE = luaScript("release");
/** Moves items from the inbox head to the inflight list by a rule (take.4.lua). */
export const TAKE = luaScript("take");
/** Settles the inflight list against what the session holds (settle.3.lua). */
export const SETTLE = luaScript("settle");
/** SETTLE, TAKE "next" and RELEASE's rule as one step at the end of a run (finish.4.lua). */
export const FINISH = luaScript("finish");
/** A wake job's first step: the lease, the control state and the first take (wake-acquire.6.lua). */
export const WAKE_ACQUIRE = luaScript("wake-acquire");
/** What the sweeper and /status read, at one instant (probe.4.lua). */
export const PROBE = luaScript("probe");
/** Removes a thread from the pending set unless a delivery touched it (unpend.1.lua). */
export const UNPEND = luaScript("unpend");
