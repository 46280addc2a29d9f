/**
 * Runs a Lua script by its SHA1 (`EVALSHA`), loading it with `EVAL` the first time a server has
 * not seen it (NOSCRIPT: a restart, a failover).
 */
import { createHash } from "node:crypto";
import type { RedisClient } from "./client.js";

/**
 * A Lua script: its text, and how many KEYS it takes when that is fixed (the runner refuses a call
 * with another count: a caller's bug). `name` says which one failed in errors and logs.
 */
export interface LuaScript {
  lua: string;
  numberOfKeys?: number;
  name?: string;
}

const shas = new WeakMap<LuaScript, string>();

function shaOf(script: LuaScript): string {
  let sha = shas.get(script);
  if (!sha) {
    sha = createHash("sha1").update(script.lua).digest("hex");
    shas.set(script, sha);
  }
  return sha;
}

/** A reply of a script: Redis integers, bulk strings, nil and nested arrays. */
export type ScriptReply = number | string | null | ScriptReply[];

/** Runs `script` with `keys` (exactly `numberOfKeys` of them) and `args`. */
export async function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptReply> {
  if (script.numberOfKeys !== undefined && keys.length !== script.numberOfKeys) {
    throw new Error(
      `A Lua script expects ${script.numberOfKeys} keys but got ${keys.length}; fix the caller.`,
    );
  }
  const params = [...keys, ...args.map(String)];
  try {
    return (await redis.evalsha(shaOf(script), keys.length, ...params)) as ScriptReply;
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e;
    return (await redis.eval(script.lua, keys.length, ...params)) as ScriptReply;
  }
}
