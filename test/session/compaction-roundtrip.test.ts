/**
 * Compaction end to end: a Redis store, the real Anthropic provider and `complete()`, and the fake
 * LLM server answering the summary requests.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicProvider } from "../../src/agent/llm/providers/anthropic.js";
import { registerApiProvider, unregisterApiProviders } from "../../src/agent/llm/registry.js";
import type { Model } from "../../src/agent/llm/types.js";
import { compact, compactionEntryInput } from "../../src/agent/session/compaction/compact.js";
import { prepareCompaction } from "../../src/agent/session/compaction/prepare.js";
import { estimateContextTokens, shouldCompact } from "../../src/agent/session/compaction/tokens.js";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { type FakeLlmServer, type RecordedRequest, startFakeLlmServer } from "../fakes/llm-server.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { assistant, texts, toolResult, user } from "./fixtures.js";

const settings = { enabled: true, reserveTokens: 2000, keepRecentTokens: 1500 };
let llm: FakeLlmServer;
let redis: Redis;
let model: Model;

beforeAll(async () => {
  llm = await startFakeLlmServer();
  redis = connectRedis();
  registerApiProvider(anthropicProvider, "session-roundtrip");
  model = {
    id: "claude-sonnet-4-5",
    name: "Claude Sonnet 4.5",
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: llm.baseUrl("anthropic-messages"),
    reasoning: false,
    input: ["text"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 10_000,
    maxTokens: 4000,
  };
});
afterAll(async () => {
  unregisterApiProviders("session-roundtrip");
  await llm.close();
  await redis.quit();
});

/** All text the summary request sent: system prompt and the user message. */
function requestText(request: RecordedRequest | undefined): { system: string; user: string } {
  const body = request?.body as {
    system?: { text: string }[];
    messages?: { content: { type: string; text?: string }[] }[];
  };
  return {
    system: (body.system ?? []).map((b) => b.text).join(""),
    user: (body.messages?.[0]?.content ?? []).map((b) => b.text ?? "").join(""),
  };
}

/** Appends `turns` turns of work, each large enough that a few fill the window. */
function work(chain: EntryChain, from: number, turns: number): void {
  for (let i = from; i < from + turns; i++) {
    chain.add({ type: "message", message: user(`Please handle step ${i}. ${"detail ".repeat(150)}`) });
    chain.add({
      type: "message",
      message: assistant(`Reading for step ${i}`, {
        toolCalls: [{ id: `read-${i}`, name: "read", args: { path: `src/step${i}.ts` } }],
        usage: { input: 1500 + i * 1100, output: 40 },
      }),
    });
    chain.add({ type: "message", message: toolResult(`read-${i}`, "file body ".repeat(120), "read") });
    chain.add({
      type: "message",
      message: assistant(`Step ${i} done.`, { usage: { input: 2000 + i * 1100, output: 30 } }),
    });
  }
}

describe("compaction round trip", () => {
  it("writes the summary entry, rebuilds the context from it, and updates the summary the second time", async () => {
    const store = new RedisSessionStore({ redis, prefix: uniquePrefix("sbt-compact") });
    const thread = "slack:T9:C9:1700.1";
    const header = await store.createSession(thread, { model: "anthropic/claude-sonnet-4-5" });

    let branch = await store.readBranch(thread);
    let chain = new EntryChain(branch?.leafId ?? null);
    work(chain, 0, 8);
    await store.append(thread, header.id, chain.entries);

    // After the turn: the estimate passes contextWindow − reserveTokens.
    branch = await store.readBranch(thread);
    const before = estimateContextTokens(buildSessionContext(branch?.entries ?? []).messages);
    expect(shouldCompact(before.tokens, model.contextWindow, settings)).toBe(true);

    llm.enqueue("anthropic-messages", {
      text: "## Goal\nFinish steps 0-7.\n\n## Next Steps\n1. step 8",
      usage: { input: 900, output: 60 },
    });
    const prep1 = prepareCompaction(branch?.entries ?? [], settings);
    if (!prep1) throw new Error("expected something to compact");
    const out1 = await compact(prep1, model, { apiKey: "sk-ant-test" });
    if (!out1.ok) throw new Error(out1.errorMessage);
    expect(llm.requests).toHaveLength(1);
    const first = requestText(llm.requests[0]);
    expect(first.system).toMatch(/Do not continue the conversation/);
    expect(first.user).toMatch(/^<conversation>\n\[User\]: Please handle step 0\./);
    expect(first.user).toContain("## Critical Context");
    expect(first.user).not.toContain("<previous-summary>");

    const c1 = new EntryChain(branch?.leafId ?? null).add(compactionEntryInput(out1.compaction));
    await store.append(thread, header.id, [c1]);
    await store.addUsage(thread, {
      input: out1.usage.input,
      output: out1.usage.output,
      cost: out1.usage.cost.total,
    });

    branch = await store.readBranch(thread);
    expect(branch?.entries[0]?.id).toBe(out1.compaction.firstKeptEntryId);
    let context = buildSessionContext(branch?.entries ?? []);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary" });
    expect(texts(context.messages)[0]).toContain("Finish steps 0-7.");
    expect(texts(context.messages)[0]).toContain("<read-files>");
    expect(context.model).toEqual({ provider: "anthropic", modelId: "claude-test" });
    expect(estimateContextTokens(context.messages).tokens).toBeLessThan(before.tokens);

    // More work, then a second compaction: the update prompt merges into the first summary.
    chain = new EntryChain(branch?.leafId ?? null);
    work(chain, 8, 6);
    await store.append(thread, header.id, chain.entries);
    branch = await store.readBranch(thread);
    llm.enqueue("anthropic-messages", {
      text: "## Goal\nFinish steps 0-13.",
      usage: { input: 700, output: 40 },
    });
    const prep2 = prepareCompaction(branch?.entries ?? [], settings);
    if (!prep2) throw new Error("expected something to compact");
    const out2 = await compact(prep2, model, {
      apiKey: "sk-ant-test",
      customInstructions: "keep file paths",
    });
    if (!out2.ok) throw new Error(out2.errorMessage);
    const second = requestText(llm.requests[1]);
    expect(second.user).toContain(`<previous-summary>\n${out1.compaction.summary}\n</previous-summary>`);
    expect(second.user).toMatch(/SINCE then/);
    expect(second.user).toContain("Also focus on: keep file paths");
    expect(second.user).not.toContain("Please handle step 0.");

    const c2 = new EntryChain(branch?.leafId ?? null).add(compactionEntryInput(out2.compaction));
    await store.append(thread, header.id, [c2]);
    branch = await store.readBranch(thread);
    context = buildSessionContext(branch?.entries ?? []);
    expect(texts(context.messages)[0]).toMatch(/^compactionSummary:## Goal\nFinish steps 0-13\./);
    expect(branch?.entries.some((e) => e.id === c1.id)).toBe(false);
    expect(out2.compaction.details.readFiles).toEqual(
      expect.arrayContaining(["src/step0.ts", "src/step8.ts"]),
    );
    const meta = await store.getThreadMeta(thread);
    expect(meta?.usage.input).toBeGreaterThan(900);
  });
});
