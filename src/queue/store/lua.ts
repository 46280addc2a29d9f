/**
 * The store's Lua scripts (files in ./lua/), run by SHA with a fallback to the full text when
 * Redis does not have the script cached yet (first call, restart, SCRIPT FLUSH).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { RedisClient } from "../redis/client.js";

/** What a script returns: nested arrays of strings and integers. */
export type LuaReply = string | number | null | LuaReply[];

export class LuaScript {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  static load(name: string): LuaScript {
    return new LuaScript(name, readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8"));
  }

  async run(redis: RedisClient, keys: string[], args: (string | number)[]): Promise<LuaReply[]> {
    try {
      return (await redis.evalsha(this.sha, keys.length, ...keys, ...args)) as LuaReply[];
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return (await redis.eval(this.source, keys.length, ...keys, ...args)) as LuaReply[];
    }
  }
}

export const scripts = {
  append: LuaScript.load("append"),
  createSession: LuaScript.load("create-session"),
  readBranch: LuaScript.load("read-branch"),
  setLeaf: LuaScript.load("set-leaf"),
};
