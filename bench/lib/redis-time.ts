/**
 * Redis's own time for a phase of the bench, and which scripts it went to.
 *
 * `INFO commandstats` gives each command's calls and `usec` (the time Redis spent executing it,
 * counted from `CONFIG RESETSTAT` at the phase's start). It counts a command that a script ran both
 * under its own name and inside the script's `evalsha`, and it groups every script under `evalsha`.
 * `SLOWLOG` with a threshold of 0 logs every command with its duration, its arguments (a script's
 * SHA1 and keys) and its client (the scripts' own client, `?:0`, for a command a script ran); but
 * logging a command a script ran happens inside the script's run, about 1.5 µs each (measured:
 * docs/performance.md), which would swell the scripts' time. So a phase runs twice:
 *
 * - clean (`startClean`, nothing else on): commandstats' calls and `usec`;
 * - profiled (`startProfile`, SLOWLOG on): which calls were sent and which a script ran, and each
 *   script's calls, duration and inner commands.
 *
 * Redis time (`redisTime`) = the clean `usec` of the scripts (whole, their commands in them) + the
 * clean `usec` of every other command times the share of its calls that were sent, not run by a
 * script (from the profiled run). A script's time (`scriptTimes`) is its profiled duration less
 * the slow log's cost of its inner commands, that cost per command being what the profiled run's
 * scripts took over the clean run's, over their inner commands; so the scripts' times add up to
 * the clean run's. Scripts are named by SHA1: BullMQ's by BullMQ's names, Switchboard's by their
 * file in src/queue/lua/ (the loader's text, so the same SHA1 the runtime sends), else by SHA1;
 * with their keys (prefix cut, a thread's hash tag as `{t}`).
 */
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { luaScript } from "../../src/queue/lua/load.js";
import type { RedisClient } from "../../src/queue/redis/client.js";

export type Counts = Map<string, number>;

/** The bench's own commands, never part of a figure. */
function isOwn(command: string): boolean {
  const c = command.toLowerCase();
  return c === "info" || c === "scan" || c === "monitor" || c.startsWith("config") || c.startsWith("slowlog");
}

const SCRIPT_COMMANDS = new Set(["evalsha", "eval", "fcall", "evalsha_ro", "eval_ro", "fcall_ro"]);

/** One script's share of a phase: its runs, their time (µs) and the commands they ran. */
export interface ScriptTime {
  name: string;
  calls: number;
  usec: number;
  inner: number;
}

/** A clean phase: commandstats' calls and `usec` by command. */
export interface CleanPhase {
  calls: Counts;
  usec: Counts;
}

/** A profiled phase: calls sent and calls run by scripts, by command; the scripts' runs. */
export interface ProfiledPhase {
  sent: Counts;
  inScripts: Counts;
  scripts: Map<string, ScriptTime>;
}

const LUA_FOLDER = fileURLToPath(new URL("../../src/queue/lua/", import.meta.url));

/** SHA1 → a script's name. */
export class ScriptNames {
  private readonly names = new Map<string, string>();

  /** Knows BullMQ's scripts by their names (it loads each one's text as is, so its SHA1 is the text's). */
  async loadBullmq(): Promise<void> {
    const require = createRequire(import.meta.url);
    const dir = join(dirname(require.resolve("bullmq")), "scripts");
    for (const file of readdirSync(dir)) {
      if (!file.endsWith(".js") || file === "index.js") continue;
      const mod = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
      for (const v of Object.values(mod)) {
        const s = v as { name?: unknown; content?: unknown };
        if (typeof s?.name === "string" && typeof s.content === "string")
          this.names.set(sha1(s.content), `BullMQ ${s.name}`);
      }
    }
  }

  /** Knows Switchboard's scripts by their file names (`take.4.lua`), as the one loader reads them. */
  loadOwn(): void {
    for (const file of readdirSync(LUA_FOLDER)) {
      const name = /^(.+)\.\d+(?:-\d+)?\.lua$/.exec(file)?.[1];
      if (name) this.names.set(sha1(luaScript(name).lua), file);
    }
  }

  /** BullMQ's name, or the script's file and the keys, or the SHA1 and the keys. */
  nameOf(sha: string, keys: readonly string[], prefix: string): string {
    const known = this.names.get(sha);
    if (known?.startsWith("BullMQ ")) return known;
    return `${known ?? `script ${sha.slice(0, 8)}`} [${keys.map((k) => keyShape(k, prefix)).join(" ")}]`;
  }
}

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A key without the bench's prefix, its hash tag (a thread) as `{t}`, ids as `<id>`, numbers as `<n>`. */
function keyShape(key: string, prefix: string): string {
  return (key.startsWith(prefix) ? key.slice(prefix.length) : key)
    .replace(/\{[^}]*\}/, "{t}")
    .replace(UUID, "<id>")
    .replace(/:\d+(?=:|$)/g, ":<n>");
}

async function configGet(redis: RedisClient, name: string): Promise<string> {
  const reply = (await redis.config("GET", name)) as unknown as string[];
  return String(reply[1] ?? "");
}

/** Starts a clean phase: commandstats reset; the returned function reads them. */
export async function startClean(redis: RedisClient): Promise<() => Promise<CleanPhase>> {
  await redis.config("RESETSTAT");
  return async () => {
    const stats = (await redis.info("commandstats")) as string;
    const calls: Counts = new Map();
    const usec: Counts = new Map();
    for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      const name = m[1] as string;
      if (isOwn(name)) continue;
      calls.set(name, Number(m[2]));
      usec.set(name, Number(m[3]));
    }
    return { calls, usec };
  };
}

type SlowlogEntry = [number, number, number, string[], string, string];

/**
 * Starts a profiled phase: every command to the slow log. The returned function reads it and
 * restores the server's slow-log settings.
 */
export async function startProfile(
  redis: RedisClient,
  names: ScriptNames,
  prefix: string,
): Promise<() => Promise<ProfiledPhase>> {
  const threshold = await configGet(redis, "slowlog-log-slower-than");
  const maxLen = await configGet(redis, "slowlog-max-len");
  await redis.config("SET", "slowlog-max-len", "1000000");
  await redis.config("SET", "slowlog-log-slower-than", "0");
  await redis.slowlog("RESET");
  return async () => {
    const log = (await redis.slowlog("GET", "-1")) as unknown as SlowlogEntry[];
    await redis.config("SET", "slowlog-log-slower-than", threshold);
    await redis.config("SET", "slowlog-max-len", maxLen);
    await redis.slowlog("RESET");
    const sent: Counts = new Map();
    const inScripts: Counts = new Map();
    const scripts = new Map<string, ScriptTime>();
    // Newest first; a script's commands are logged (end) before the script itself.
    let inner = 0;
    for (const [, , duration, args, client] of [...log].reverse()) {
      const command = String(args[0] ?? "").toLowerCase();
      if (isOwn(command)) continue;
      if (String(client).startsWith("?")) {
        add(inScripts, command, 1);
        inner++;
        continue;
      }
      add(sent, command, 1);
      const ran = inner;
      inner = 0;
      if (!SCRIPT_COMMANDS.has(command)) continue;
      const numKeys = Number(args[2] ?? 0);
      const keys = args.slice(3, 3 + numKeys);
      // EVAL carries the text (a server that did not know the SHA1 yet): the same script by its SHA1.
      const id = command.startsWith("evalsha") ? String(args[1]) : sha1(String(args[1]));
      let s = scripts.get(id);
      if (!s) {
        s = { name: names.nameOf(id, keys, prefix), calls: 0, usec: 0, inner: 0 };
        scripts.set(id, s);
      }
      s.calls++;
      s.usec += duration;
      s.inner += ran;
    }
    return { sent, inScripts, scripts };
  };
}

function add(c: Counts, key: string, n: number): void {
  c.set(key, (c.get(key) ?? 0) + n);
}

const sum = (c: Counts) => [...c.values()].reduce((a, b) => a + b, 0);

/** The clean `usec` of the scripts (whole). */
function scriptsUsec(clean: CleanPhase): number {
  let t = 0;
  for (const [k, v] of clean.usec) if (SCRIPT_COMMANDS.has(k)) t += v;
  return t;
}

/** Redis's time in the phase, µs: every command sent, a script once with what it ran. */
export function redisTime(clean: CleanPhase, profiled: ProfiledPhase): number {
  let t = scriptsUsec(clean);
  for (const [k, usec] of clean.usec) {
    if (SCRIPT_COMMANDS.has(k)) continue;
    const sent = profiled.sent.get(k) ?? 0;
    const ran = profiled.inScripts.get(k) ?? 0;
    t += sent + ran === 0 ? usec : (usec * sent) / (sent + ran);
  }
  return t;
}

/** Each script's time, the slow log's cost of its inner commands taken out (see the top). */
export function scriptTimes(clean: CleanPhase, profiled: ProfiledPhase): Map<string, ScriptTime> {
  const scripts = [...profiled.scripts.values()];
  const inner = scripts.reduce((a, s) => a + s.inner, 0);
  const logged = scripts.reduce((a, s) => a + s.usec, 0);
  const perInner = inner > 0 ? Math.max(0, (logged - scriptsUsec(clean)) / inner) : 0;
  const out = new Map<string, ScriptTime>();
  for (const [id, s] of profiled.scripts)
    out.set(id, { ...s, usec: Math.max(0, s.usec - s.inner * perInner) });
  return out;
}

/** Executed commands in a clean phase. */
export function executed(clean: CleanPhase): number {
  return sum(clean.calls);
}

/**
 * The heaviest scripts, per message (`name ×calls/message µs/message`), largest time first; a
 * script run less than once per two messages is left out (in a difference of two phases, noise).
 */
export function heaviest(scripts: Map<string, ScriptTime>, per: number, count = 5): string {
  return [...scripts.values()]
    .filter((s) => s.usec > 0 && s.calls / per >= 0.5)
    .sort((a, b) => b.usec - a.usec)
    .slice(0, count)
    .map((s) => `${s.name} ×${(s.calls / per).toFixed(2)} ${(s.usec / per).toFixed(1)} µs`)
    .join("; ");
}
