/**
 * Sessions moved between pi (`@mariozechner/pi-coding-agent`'s own `SessionManager`, format v3)
 * and Switchboard's stores read the same in both: the same model, thinking level and context
 * (what the model is sent) at every leaf, and pi's lines come back byte for byte. Runs against the
 * file store and the Redis store.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EntryChain } from "../../src/agent/session/entries.js";
import { checkPiV3 } from "../../src/agent/session/jsonl.js";
import { recordSettings } from "../../src/agent/session/settings.js";
import { FileSessionStore } from "../../src/queue/store/file-store.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { SessionStore } from "../../src/queue/store/types.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { assistant, user, warnCollector } from "./fixtures.js";
import {
  continueInSwitchboard,
  expectSameAtEveryLeaf,
  type PiSession,
  PLAIN_MODEL,
  piViews,
  REASONING_MODEL,
  switchboardView,
  writePiSession,
} from "./pi-interop.js";

let redis: Redis;
beforeAll(() => {
  redis = connectRedis();
});
afterAll(async () => {
  await redis.quit();
});

interface Harness {
  store: SessionStore;
  dispose(): Promise<void>;
}

const stores: [string, () => Promise<Harness>][] = [
  [
    "files",
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), "sb-interop-"));
      const store = new FileSessionStore({ dataDir, logger: warnCollector() });
      return { store, dispose: () => rm(dataDir, { recursive: true, force: true }) };
    },
  ],
  [
    "redis",
    async () => {
      const store = new RedisSessionStore({
        redis,
        prefix: uniquePrefix("sbt-interop"),
        logger: warnCollector(),
      });
      return { store, dispose: async () => {} };
    },
  ],
];

const HEX8 = /^[0-9a-f]{8}$/;

/** The texts of the user messages the model is sent. */
function userTexts(llm: unknown[]): string[] {
  const out: string[] = [];
  for (const m of llm as { role: string; content: string | { type: string; text?: string }[] }[]) {
    if (m.role !== "user") continue;
    if (typeof m.content === "string") out.push(m.content);
    else out.push(...m.content.filter((c) => c.type === "text").map((c) => c.text ?? ""));
  }
  return out;
}

describe.each(stores)("pi interop: %s store", (_name, make) => {
  let h: Harness;
  let pi: PiSession;
  const thread = "slack:T1:C2:1712.33";

  beforeEach(async () => {
    h = await make();
    pi = writePiSession();
  });
  afterEach(async () => {
    pi.dispose();
    await h.dispose();
  });

  it("pi → Switchboard: the same model, thinking level and context at every leaf; the export is pi's file", async () => {
    const { sessionId } = await h.store.importJsonl(pi.text, thread);
    // The header too: its cwd stays pi's; the thread is recorded beside it.
    expect(await h.store.exportJsonl(thread, sessionId)).toBe(pi.text);
    expect(JSON.parse(pi.text.split("\n")[0] as string)).toMatchObject({ cwd: "/home/ada/project" });
    expect((await h.store.getThreadMeta(thread))?.threadKey).toBe(thread);
    const leaves = await expectSameAtEveryLeaf(pi.text, pi.dir, h.store, thread, sessionId);
    expect(leaves).toBeGreaterThan(25);
  });

  it("a thinking level set before pi's compaction is in force after it (pi says medium, so does Switchboard)", async () => {
    const { sessionId } = await h.store.importJsonl(pi.text, thread);
    const views = [...piViews(pi.text, pi.dir).entries()];
    const afterCompaction = views.find(([, v]) =>
      JSON.stringify((v as { llm: unknown }).llm).includes("Still medium."),
    );
    expect(afterCompaction).toBeDefined();
    const [leafId] = afterCompaction as [string, unknown];
    const read = await h.store.readBranch(thread, sessionId, leafId);
    // The branch read starts at the compaction's kept range, after the thinking level change.
    expect(read?.entries.some((e) => e.type === "thinking_level_change")).toBe(false);
    expect(await switchboardView(h.store, thread, sessionId, leafId)).toMatchObject({
      thinkingLevel: "medium",
      model: { provider: "anthropic", modelId: "claude-a" },
    });
    // The thread's settings after the import are those of the file's leaf (pi's clamp to off).
    expect(await h.store.getThreadMeta(thread)).toMatchObject({
      model: "openai/gpt-plain",
      thinkingLevel: "off",
    });
  });

  it("pi's bashExecution messages reach the model as pi sends them; excluded ones do not", async () => {
    const { sessionId } = await h.store.importJsonl(pi.text, thread);
    // The answer after the commands (a later compaction summarises them away).
    const line = pi.text.split("\n").find((l) => l.includes("A single pixel."));
    const leaf = (JSON.parse(line as string) as { id: string }).id;
    const view = (await switchboardView(h.store, thread, sessionId, leaf)) as { llm: unknown[] };
    const texts = userTexts(view.llm);
    expect(texts).toContain("Ran `ls`\n```\nnotes.md\nplan.md\n```");
    expect(texts).toContain(
      "Ran `make test`\n```\nFAIL x\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/pi-bash-1.log]",
    );
    expect(texts).toContain("Ran `sleep 100`\n(no output)\n\n(command cancelled)");
    expect(texts.join("\n")).not.toContain("cat .env");
  });

  it("pi → Switchboard → pi: what Switchboard appends reads the same in pi, and pi's lines come back byte for byte", async () => {
    const { sessionId } = await h.store.importJsonl(pi.text, thread);
    const { ids } = await continueInSwitchboard(h.store, thread, sessionId);
    for (const id of ids) expect(id).toMatch(HEX8);
    const text = await h.store.exportJsonl(thread, sessionId);
    expect(checkPiV3(text)).toEqual([]);
    expect(text.startsWith(pi.text)).toBe(true);
    const added = text.slice(pi.text.length).trimEnd().split("\n");
    const types = added.map((l) => (JSON.parse(l) as { type: string }).type);
    // `/thinking high` once; the `/model` switch writes the model and the clamp to off, once each.
    expect(types.filter((t) => t === "thinking_level_change")).toHaveLength(2);
    expect(added.filter((l) => l.includes('"thinkingLevel":"off"'))).toHaveLength(1);
    expect(types).toContain("compaction");
    const leaves = await expectSameAtEveryLeaf(text, pi.dir, h.store, thread, sessionId);
    expect(leaves).toBe(text.trimEnd().split("\n").length - 1);

    // Where the clamp happened and after our compaction, both say: plain model, thinking off.
    const views = [...piViews(text, pi.dir).values()] as {
      llm: unknown;
      thinkingLevel: string;
      model: unknown;
    }[];
    const afterOurs = views.find((v) => JSON.stringify(v.llm).includes("Still plain, thinking off."));
    expect(afterOurs).toMatchObject({
      thinkingLevel: "off",
      model: { provider: "openai", modelId: "gpt-plain" },
    });
    expect(userTexts(afterOurs?.llm as unknown[])[0]).toMatch(
      /^The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nSwitchboard's summary[\s\S]*\n<\/summary>$/,
    );
    const onBranch = views.find((v) => JSON.stringify(v.llm).includes("Thinking high here."));
    expect(onBranch).toMatchObject({
      thinkingLevel: "high",
      model: { provider: "anthropic", modelId: "claude-a" },
    });
  });

  it("Switchboard → pi: a session Switchboard writes reads the same in pi at every leaf", async () => {
    const header = await h.store.createSession(thread, {
      model: "anthropic/claude-a",
      thinkingLevel: "medium",
    });
    const first = await h.store.readBranch(thread);
    const chain = new EntryChain(first?.leafId ?? null);
    chain.add({
      type: "message",
      message: user("hello"),
      inbox: { first: 1, last: 1, at: 1_700_000_000_000 },
    });
    chain.add({ type: "message", message: assistant("hi", { provider: "anthropic", model: "claude-a" }) });
    await h.store.append(thread, header.id, chain.entries);
    const { ids } = await continueInSwitchboard(h.store, thread, header.id);
    for (const id of [...chain.entries.map((e) => e.id), ...ids]) expect(id).toMatch(HEX8);
    const text = await h.store.exportJsonl(thread, header.id);
    expect(checkPiV3(text)).toEqual([]);
    // Switchboard's own header: pi's fields, the thread key in cwd.
    expect(JSON.parse(text.split("\n")[0] as string)).toMatchObject({
      type: "session",
      version: 3,
      id: header.id,
      cwd: thread,
    });
    await expectSameAtEveryLeaf(text, pi.dir, h.store, thread, header.id);

    // And back: pi's export of it imports into another thread unchanged.
    const copy = await h.store.importJsonl(text, `${thread}:copy`);
    expect(await h.store.exportJsonl(`${thread}:copy`, copy.sessionId)).toBe(text);
  });

  it("a clamp is recorded once: switching to a model without reasoning writes thinking off, repeating it writes nothing", () => {
    const start = recordSettings(
      { model: undefined, thinkingLevel: undefined },
      REASONING_MODEL as never,
      "high",
    );
    expect(start.entries).toEqual([
      { type: "model_change", provider: "anthropic", modelId: "claude-a" },
      { type: "thinking_level_change", thinkingLevel: "high" },
    ]);
    const clamp = recordSettings(start.recorded, PLAIN_MODEL, "high");
    expect(clamp).toMatchObject({
      level: "off",
      entries: [
        { type: "model_change", provider: "openai", modelId: "gpt-plain" },
        { type: "thinking_level_change", thinkingLevel: "off" },
      ],
    });
    expect(recordSettings(clamp.recorded, PLAIN_MODEL, "high").entries).toEqual([]);
    expect(recordSettings(clamp.recorded, PLAIN_MODEL, "off").entries).toEqual([]);
  });
});
