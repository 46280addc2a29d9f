/**
 * The session store's Lua scripts (files session-*.lua in src/queue/lua/), run by the one runner
 * (runScript: by SHA, with the full text when Redis does not have it cached yet: first call,
 * restart, failover).
 */
import { luaScript } from "../lua/load.js";
import type { RedisClient } from "../redis/client.js";
import { type LuaScript, runScript, type ScriptReply } from "../redis/run-script.js";

export const scripts = {
  append: luaScript("session-append"),
  createSession: luaScript("session-create"),
  readBranch: luaScript("session-read-branch"),
  setLeaf: luaScript("session-set-leaf"),
};

/** Runs one of the scripts above; they all answer with an array. */
export async function runList(
  redis: RedisClient,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<ScriptReply[]> {
  return (await runScript(redis, script, keys, args)) as ScriptReply[];
}

/** One element of a script's reply as a string ("" when absent). */
export function replyStr(v: ScriptReply | undefined): string {
  return typeof v === "string" ? v : String(v ?? "");
}
