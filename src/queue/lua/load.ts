/**
 * The one loader of Switchboard's Lua: every script Redis runs is a file in this folder, read once
 * (at the first use of its name) and run by `runScript` (../redis/run-script.ts: by SHA1, with the
 * text when the server does not know it yet). The build copies the folder beside the compiled
 * modules, so dist/ finds the files where src/ does.
 *
 * File names: `<name>.<keys>.lua` is a script taking `<keys>` KEYS, either a count (`take.4.lua`)
 * or a range `<fewest>-<most>` when its last keys are optional (`session-append.4-5.lua`: the
 * fence's lease key comes only with a fence). `<name>.lua`, without a count, is a fragment (Lua
 * functions several scripts share): a line `--#include <name>` in a script is replaced by that
 * file's text, so the script Redis runs is whole.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { LuaScript } from "../redis/run-script.js";

const folder = new URL("./", import.meta.url);
const SCRIPT_FILE = /^(.+)\.(\d+)(?:-(\d+))?\.lua$/;
const INCLUDE = /^--#include (\S+)[ \t]*$/gm;

let files: Map<string, string> | undefined;
const loaded = new Map<string, LuaScript>();

/** Script name → file name, of every script in the folder (read once). */
function scriptFiles(): Map<string, string> {
  if (!files) {
    files = new Map();
    for (const file of readdirSync(folder)) {
      const m = SCRIPT_FILE.exec(file);
      if (m?.[1]) files.set(m[1], file);
    }
  }
  return files;
}

/** `text` with each `--#include` line replaced by its fragment (fragments may include others). */
function expand(text: string, seen: readonly string[]): string {
  return text.replace(INCLUDE, (_, name: string) => {
    if (seen.includes(name)) throw new Error(`Lua fragment ${name} includes itself (${seen.join(" → ")}).`);
    const fragment = readFileSync(new URL(`${name}.lua`, folder), "utf8");
    return expand(fragment, [...seen, name]).replace(/\n$/, "");
  });
}

/**
 * The script `name` (its file `<name>.<keys>.lua` here), with its fragments included and its KEYS
 * count from the file name; the same object on every call. Throws when no such file exists (a
 * typo: at the import of the module that names it).
 */
export function luaScript(name: string): LuaScript {
  const cached = loaded.get(name);
  if (cached) return cached;
  const file = scriptFiles().get(name);
  const m = file ? SCRIPT_FILE.exec(file) : null;
  if (!file || !m) throw new Error(`No Lua script ${name} (a file ${name}.<keys>.lua) in src/queue/lua/.`);
  const fewest = Number(m[2]);
  const script: LuaScript = {
    name,
    lua: expand(readFileSync(new URL(file, folder), "utf8"), []),
    keys: { fewest, most: m[3] === undefined ? fewest : Number(m[3]) },
  };
  loaded.set(name, script);
  return script;
}
