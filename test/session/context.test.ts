import { describe, expect, it } from "vitest";
import { buildSessionContext, pathToLeaf } from "../../src/agent/session/context.js";
import { EntryChain, newEntryId } from "../../src/agent/session/entries.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import { assistant, texts, toolResult, user } from "./fixtures.js";

describe("buildSessionContext", () => {
  it("walks the branch from the leaf, so an abandoned branch is not in the context", () => {
    const chain = new EntryChain(null);
    const q = chain.add({ type: "message", message: user("q") });
    chain.add({ type: "message", message: assistant("first try") });
    const fork = new EntryChain(q.id);
    const retry = fork.add({ type: "message", message: assistant("second try") });
    const entries = [...chain.entries, ...fork.entries];
    expect(texts(buildSessionContext(entries, retry.id).messages)).toEqual([
      "user:q",
      "assistant:second try",
    ]);
    expect(texts(buildSessionContext(entries, chain.entries[1]?.id).messages)).toEqual([
      "user:q",
      "assistant:first try",
    ]);
    expect(buildSessionContext(entries, null).messages).toEqual([]);
    // Without a leaf id, the last entry is the leaf.
    expect(texts(buildSessionContext(entries).messages)).toEqual(["user:q", "assistant:second try"]);
  });

  it("takes the latest model and thinking level on the path", () => {
    const chain = new EntryChain(null);
    chain.add({ type: "model_change", provider: "openai", modelId: "gpt-a" });
    chain.add({ type: "thinking_level_change", thinkingLevel: "high" });
    chain.add({ type: "message", message: user("q") });
    const mid = chain.add({
      type: "message",
      message: assistant("a", { provider: "anthropic", model: "claude-b" }),
    });
    chain.add({ type: "thinking_level_change", thinkingLevel: "low" });
    chain.add({ type: "model_change", provider: "google", modelId: "gemini-c" });
    expect(buildSessionContext(chain.entries)).toMatchObject({
      model: { provider: "google", modelId: "gemini-c" },
      thinkingLevel: "low",
    });
    expect(buildSessionContext(chain.entries, mid.id)).toMatchObject({
      model: { provider: "anthropic", modelId: "claude-b" },
      thinkingLevel: "high",
    });
    expect(buildSessionContext([])).toEqual({ messages: [], model: null, thinkingLevel: "off" });
  });

  it("shows a compaction as its summary, then the kept entries, then what follows", () => {
    const chain = new EntryChain(null);
    chain.add({ type: "thinking_level_change", thinkingLevel: "medium" });
    chain.add({ type: "message", message: user("old question") });
    chain.add({ type: "message", message: assistant("old answer") });
    const kept = chain.add({ type: "message", message: user("recent question") });
    chain.add({ type: "message", message: assistant("recent answer") });
    chain.add({
      type: "compaction",
      summary: "## Goal\nanswer questions",
      firstKeptEntryId: kept.id,
      tokensBefore: 5000,
      // Settings an older compaction recorded are ignored, as pi ignores them.
      details: {
        readFiles: [],
        modifiedFiles: [],
        model: { provider: "openai", modelId: "m1" },
        thinkingLevel: "high",
      },
    });
    chain.add({ type: "message", message: user("new question") });
    const context = buildSessionContext(chain.entries);
    expect(texts(context.messages)).toEqual([
      "compactionSummary:## Goal\nanswer questions",
      "user:recent question",
      "assistant:recent answer",
      "user:new question",
    ]);
    // A change before the kept range still counts: settings are resolved over the whole path.
    expect(context).toMatchObject({
      thinkingLevel: "medium",
      model: { provider: "anthropic", modelId: "claude-test" },
    });
    // A tail of the path (a store's branch read) gets them as `inherited`.
    const tail = chain.entries.slice(3);
    expect(buildSessionContext(tail)).toMatchObject({ thinkingLevel: "off" });
    expect(buildSessionContext(tail, undefined, { thinkingLevel: "medium", model: null })).toMatchObject({
      thinkingLevel: "medium",
      model: { provider: "anthropic", modelId: "claude-test" },
    });

    const llm = convertToLlm(context.messages);
    expect(llm[0]).toMatchObject({ role: "user" });
    const first = llm[0]?.content;
    expect(Array.isArray(first) && first[0]?.type === "text" && first[0].text).toMatch(
      /<summary>\n## Goal\nanswer questions\n<\/summary>$/,
    );
  });

  it("sends custom_message entries as user messages and keeps custom entries and labels away from the model", () => {
    const chain = new EntryChain(null);
    chain.add({ type: "message", message: user("q") });
    chain.add({ type: "custom", customType: "ext:state", data: { secret: "not for the model" } });
    chain.add({
      type: "custom_message",
      customType: "ext:ctx",
      content: "extra context",
      display: false,
      details: { x: 1 },
    });
    chain.add({ type: "label", targetId: chain.entries[0]?.id as string, label: "bookmark" });
    chain.add({ type: "branch_summary", fromId: "abcd1234", summary: "tried another way" });
    const messages = buildSessionContext(chain.entries).messages;
    expect(messages.map((m) => m.role)).toEqual(["user", "custom", "branchSummary"]);
    const llm = convertToLlm(messages);
    expect(llm.map((m) => m.role)).toEqual(["user", "user", "user"]);
    expect(JSON.stringify(llm)).not.toContain("not for the model");
    expect(JSON.stringify(llm)).not.toContain('"x":1');
    expect(JSON.stringify(llm[1])).toContain("extra context");
  });

  it("drops a tool result whose call is missing (damage), never one whose call is present", () => {
    const chain = new EntryChain(null);
    chain.add({ type: "message", message: user("q") });
    chain.add({ type: "message", message: toolResult("lost-call", "orphan") });
    chain.add({ type: "message", message: assistant("", { toolCalls: [{ id: "c1", name: "bash" }] }) });
    chain.add({ type: "message", message: toolResult("c1", "ok") });
    expect(texts(buildSessionContext(chain.entries).messages)).toEqual([
      "user:q",
      "assistant:[toolCall bash]",
      "toolResult:ok",
    ]);
  });

  it("stops at a parent outside the list and survives a cycle", () => {
    const a: SessionEntry = {
      type: "message",
      id: "a",
      parentId: "b",
      timestamp: "2024-01-01T00:00:00.000Z",
      message: user("a"),
    };
    const b: SessionEntry = {
      type: "message",
      id: "b",
      parentId: "a",
      timestamp: "2024-01-01T00:00:00.000Z",
      message: user("b"),
    };
    expect(pathToLeaf([a, b], "b").map((e) => e.id)).toEqual(["a", "b"]);
    expect(pathToLeaf([b], "b").map((e) => e.id)).toEqual(["b"]);
  });
});

describe("entry ids", () => {
  it("are 8 hex characters and avoid taken ids", () => {
    const taken = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = newEntryId(taken);
      expect(id).toMatch(/^[0-9a-f]{8}$/);
      expect(taken.has(id)).toBe(false);
      taken.add(id);
    }
  });

  it("EntryChain links each entry to the one before", () => {
    const chain = new EntryChain("root0000");
    const a = chain.add({ type: "message", message: user("a") });
    const b = chain.add({ type: "thinking_level_change", thinkingLevel: "low" });
    expect(a.parentId).toBe("root0000");
    expect(b.parentId).toBe(a.id);
    expect(chain.leafId).toBe(b.id);
    expect(Number.isNaN(Date.parse(a.timestamp))).toBe(false);
  });
});
