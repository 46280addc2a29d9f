/**
 * The session store's Lua scripts (files in ./lua/), run by the one runner (runScript: by SHA, with
 * the full text when Redis does not have it cached yet: first call, restart, failover).
 */
import { readFileSync } from "node:fs";
import type { RedisClient } from "../redis/client.js";
import { type LuaScript, runScript, type ScriptReply } from "../redis/run-script.js";

function load(name: string): LuaScript {
  return { name, lua: readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8") };
}

export const scripts = {
  append: load("append"),
  createSession: load("create-session"),
  readBranch: load("read-branch"),
  setLeaf: load("set-leaf"),
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
