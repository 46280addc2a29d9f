/**
 * The session store's Lua scripts (files in ./lua/), run by the one runner (runScript: by SHA, with
 * the full text when Redis does not have it cached yet: first call, restart, failover).
 */
import { readFileSync } from "node:fs";
import type { LuaScript } from "../redis/run-script.js";

function load(name: string): LuaScript {
  return { name, lua: readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8") };
}

export const scripts = {
  append: load("append"),
  createSession: load("create-session"),
  readBranch: load("read-branch"),
  setLeaf: load("set-leaf"),
};
