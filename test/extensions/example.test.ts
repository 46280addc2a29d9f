import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { type ExtensionConfigEntry, resolveExtensionEntries } from "../../src/extensions/loader.js";
import type { ExtensionFactory } from "../../src/extensions/types.js";
import { createHarness } from "./support/harness.js";

const ROOT = join(import.meta.dirname, "..", "..");

async function load(config: ExtensionConfigEntry[], builtins: Record<string, ExtensionFactory> = {}) {
  return resolveExtensionEntries(config, { builtins, baseDir: ROOT });
}

function fakeBash(ran: string[]) {
  return {
    name: "bash",
    label: "bash",
    description: "fake bash",
    parameters: Type.Object({ command: Type.String() }),
    async execute(_id: string, params: { command: string }) {
      ran.push(params.command);
      return { content: [{ type: "text" as const, text: "ok" }], details: {} };
    },
  };
}

describe("the example extension in docs/extensions.md", () => {
  it("is the file the tests load, verbatim", () => {
    const doc = readFileSync(join(ROOT, "docs", "extensions.md"), "utf8");
    const source = readFileSync(join(ROOT, "test", "extensions", "fixtures", "notes-extension.ts"), "utf8");
    expect(doc).toContain(`\`\`\`ts\n${source}\`\`\``);
  });

  it("loads from config by module path, and its tool, command and gate work", async () => {
    const entries = await load([
      { module: "./test/extensions/fixtures/notes-extension.ts", options: { blockedCommands: ["curl"] } },
    ]);
    expect(entries.map((e) => e.name)).toEqual(["notes-extension"]);
    const ran: string[] = [];
    const h = await createHarness(entries, {
      baseTools: [fakeBash(ran)],
      replies: [
        { toolCalls: [{ name: "save_note", args: { text: "deploy on Friday" } }] },
        { toolCalls: [{ name: "bash", args: { command: "curl https://example.com" } }] },
        { toolCalls: [{ name: "bash", args: { command: "wget https://example.com" } }] },
        "done",
      ],
    });
    await h.run("remember the deploy day, then fetch the page");
    const [saved, curl, wget] = h.toolResults();
    expect(h.resultText(saved)).toBe("Saved note #1.");
    expect(h.host.entries).toEqual([{ customType: "notes:note", data: { text: "deploy on Friday" } }]);
    expect(curl?.isError).toBe(true);
    expect(h.resultText(curl)).toBe('"curl" is not allowed in this workspace.');
    expect(wget?.isError).toBe(false); // only "curl" is configured
    expect(ran).toEqual(["wget https://example.com"]);

    expect(await h.thread.runCommand("notes", "")).toBe(true);
    expect(h.host.lastReply()).toBe("1. deploy on Friday");
    expect(await h.thread.completions("notes", "cl")).toEqual([{ value: "clear" }]);
    await h.thread.runCommand("notes", "clear");
    await h.thread.runCommand("notes", "");
    expect(h.host.lastReply()).toBe("No notes yet.");
  });
});

describe("loading from config", () => {
  it("reports and disables what cannot load, and keeps the rest", async () => {
    const builtin: ExtensionFactory = (api) =>
      api.registerCommand("hello", { description: "hi", handler: async (_a, ctx) => ctx.reply("hello") });
    const entries = await load(
      [
        { builtin: "hello" },
        { builtin: "nope" },
        { module: "./test/extensions/fixtures/broken-extension.ts" },
        { module: "./test/extensions/fixtures/no-default.ts" },
        { module: "./test/extensions/fixtures/missing.ts" },
        { module: "./test/extensions/fixtures/notes-extension.ts", enabled: false },
        {},
      ],
      { hello: builtin },
    );
    const h = await createHarness(entries);
    expect(h.runner.extensions().map((e) => [e.name, e.enabled])).toEqual([
      ["hello", true],
      ["nope", false],
      ["broken-extension", false],
      ["no-default", false],
      ["missing", false],
      ["extension #7", false],
    ]);
    const errors = Object.fromEntries(h.failures.map((f) => [f.extension, f.error]));
    expect(errors.nope).toBe('Unknown built-in extension "nope". Built-ins: hello.');
    expect(errors["broken-extension"]).toBe("BROKEN_EXTENSION_TOKEN is not set");
    expect(errors["no-default"]).toMatch(/has no default export function/);
    expect(errors.missing).toMatch(
      /^Cannot load "\.\/test\/extensions\/fixtures\/missing\.ts": no such file: \/.*missing\.ts$/,
    );
    expect(errors["extension #7"]).toBe("An extension entry needs builtin or module.");
    expect(await h.thread.runCommand("broken", "")).toBe(false);
    expect(await h.thread.runCommand("hello", "")).toBe(true);
    expect(h.host.lastReply()).toBe("hello");
  });
});
