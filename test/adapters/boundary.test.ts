/**
 * Platform SDKs stay inside their platform's folder: no file outside src/adapters/<platform>/
 * imports grammy, @slack/*, discord.js or @discordjs/*, and nothing under src/adapters/ imports
 * ioredis (Redis-backed pieces live in src/gateway and are injected through interfaces).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");

const SDKS: Array<{ pattern: RegExp; folder: string }> = [
  { pattern: /^grammy(\/|$)|^@grammyjs\//, folder: "src/adapters/telegram/" },
  { pattern: /^@slack\//, folder: "src/adapters/slack/" },
  { pattern: /^discord\.js(\/|$)|^@discordjs\//, folder: "src/adapters/discord/" },
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|mts|cts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** Module specifiers of static imports, re-exports, dynamic imports and requires. */
function importsOf(code: string): string[] {
  const specs: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const p of patterns) for (const m of code.matchAll(p)) if (m[1]) specs.push(m[1]);
  return specs;
}

describe("adapter boundaries", () => {
  const files = sourceFiles(SRC).map((f) => ({
    path: relative(ROOT, f).split(sep).join("/"),
    code: readFileSync(f, "utf8"),
  }));

  it("finds imports in every syntax the checks rely on", () => {
    expect(
      importsOf(
        `import { Bot } from "grammy";\nimport type { X } from 'discord.js';\nexport * from "@slack/bolt";\nconst m = await import("@discordjs/ws");\nimport "grammy/web";`,
      ).sort(),
    ).toEqual(["@discordjs/ws", "@slack/bolt", "discord.js", "grammy", "grammy/web"]);
  });

  it("imports each platform SDK only inside that platform's adapter folder", () => {
    const offenders: string[] = [];
    for (const f of files) {
      for (const spec of importsOf(f.code)) {
        const sdk = SDKS.find((s) => s.pattern.test(spec));
        if (sdk && !f.path.startsWith(sdk.folder)) offenders.push(`${f.path} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("keeps ioredis out of src/adapters", () => {
    const offenders = files
      .filter((f) => f.path.startsWith("src/adapters/"))
      .flatMap((f) =>
        importsOf(f.code)
          .filter((s) => s === "ioredis")
          .map((s) => `${f.path} imports ${s}`),
      );
    expect(offenders).toEqual([]);
  });
});
