/**
 * Runs a Lua script by its SHA1 (`EVALSHA`), loading it with `EVAL` the first time a server has
 * not seen it (NOSCRIPT: a restart, a failover). Scripts come from src/queue/lua/ (`luaScript`).
 */
import { createHash } from "node:crypto";
import type { RedisClient } from "./client.js";

/**
 * A Lua script: its text, and how many KEYS it takes (the runner refuses a call with another
 * count: a caller's bug). `name` says which one failed in errors and logs.
 */
export interface LuaScript {
  name: string;
  lua: string;
  /** Fewest and most KEYS (equal unless its last keys are optional). */
  keys: { fewest: number; most: number };
}

const shas = new WeakMap<LuaScript, string>();

/** The SHA1 `EVALSHA` knows `script` by. */
export function scriptSha(script: LuaScript): string {
  let sha = shas.get(script);
  if (!sha) {
    sha = createHash("sha1").update(script.lua).digest("hex");
    shas.set(script, sha);
  }
  return sha;
}

/** A reply of a script: Redis integers, bulk strings, nil and nested arrays. */
export type ScriptReply = number | string | null | ScriptReply[];

/** Runs `script` with `keys` (as many as it takes) and `args`. */
export async function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptReply> {
  const { fewest, most } = script.keys;
  if (keys.length < fewest || keys.length > most) {
    const expected = fewest === most ? `${fewest}` : `${fewest} to ${most}`;
    throw new Error(
      `The Lua script ${script.name} expects ${expected} keys but got ${keys.length}; fix the caller.`,
    );
  }
  const params = [...keys, ...args.map(String)];
  try {
    return (await redis.evalsha(scriptSha(script), keys.length, ...params)) as ScriptReply;
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e;
    return (await redis.eval(script.lua, keys.length, ...params)) as ScriptReply;
  }
}
