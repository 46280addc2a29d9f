/**
 * Every Lua script is a file in src/queue/lua/ named with its KEYS count and loaded by the one
 * loader (src/queue/lua/load.ts); no TypeScript file carries Lua of its own.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { luaScript } from "../../src/queue/lua/load.js";

const src = join(import.meta.dirname, "..", "..", "src");
const lua = join(src, "queue", "lua");

describe("Lua as files", () => {
  it("leaves no Lua in TypeScript", () => {
    const found = readdirSync(src, { recursive: true, encoding: "utf8" }).filter(
      (p) => p.endsWith(".ts") && readFileSync(join(src, p), "utf8").includes("redis.call("),
    );
    expect(found, "Write the script as a file in src/queue/lua/ and load it with luaScript(name).").toEqual(
      [],
    );
  });

  it("loads every script whole, using as many KEYS as its name says", () => {
    const scripts = readdirSync(lua).flatMap((f) => /^(.+)\.\d+(-\d+)?\.lua$/.exec(f)?.[1] ?? []);
    expect(scripts.length).toBeGreaterThanOrEqual(30);
    for (const name of scripts) {
      const script = luaScript(name);
      expect(script.lua, name).not.toContain("--#include");
      const used = [...script.lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect(Math.max(0, ...used), name).toBe(script.keys.most);
    }
  });
});
