/** The file store: the contract, and what only files can go through (a torn line, a rewrite). */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileWebChatStore } from "../../../src/adapters/web/index.js";
import { runWebStoreContract } from "./store-contract.js";

runWebStoreContract("files", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-webstore-"));
  const clock = { now: 1_700_000_000_000 };
  return {
    shared: false,
    durable: true,
    clock,
    open: (limits) => new FileWebChatStore({ ...limits, dir: join(dir, "web"), now: () => clock.now }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe("web chat file store", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), "sb-webstore-"));
    dirs.push(d);
    return join(d, "web");
  };
  const bot = { id: "web:bot", name: "Switchboard", isBot: true };

  it("reads past a line torn by a crash and warns about it", async () => {
    const dir = fresh();
    const before = new FileWebChatStore({ dir });
    const c = await before.create();
    await before.add(c.id, { from: bot, text: "kept", format: "markdown" });
    await before.close();
    appendFileSync(join(dir, `${c.id}.jsonl`), '{"t":"m","m":{"id":"m2","conv');
    const warnings: string[] = [];
    const after = new FileWebChatStore({ dir, onWarning: (m) => warnings.push(m) });
    expect((await after.messages(c.id))?.map((m) => m.text)).toEqual(["kept"]);
    expect(warnings).toEqual(["web chat: skipped an unreadable line"]);
    await after.close();
  });

  it("rewrites a file that a long streamed reply made much larger than its state", async () => {
    const dir = fresh();
    const store = new FileWebChatStore({ dir });
    const c = await store.create();
    const m = await store.add(c.id, { from: bot, text: "x", format: "markdown" });
    let text = "";
    for (let i = 0; i < 400; i++) {
      text += `line ${i} of a long answer that keeps growing\n`;
      await store.edit(c.id, m.id, text, "markdown");
    }
    await store.close();
    const file = join(dir, `${c.id}.jsonl`);
    // 400 edits of a text growing to ~18 KB would be ~3.6 MB appended; rewrites keep it near the state.
    expect(statSync(file).size).toBeLessThan(1_200_000);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    const reopened = new FileWebChatStore({ dir });
    expect((await reopened.message(c.id, m.id))?.text).toBe(text);
    expect((await reopened.message(c.id, m.id))?.version).toBe(401);
    await reopened.close();
    expect(readFileSync(file, "utf8").split("\n").length).toBeLessThan(400);
  });
});
