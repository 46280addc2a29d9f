import { describe, expect, it } from "vitest";
import type { AssistantMessage, Context, Model, UserMessage } from "../../src/agent/llm/types.js";
import {
  type CompleteFn,
  compact,
  compactionEntryInput,
} from "../../src/agent/session/compaction/compact.js";
import { branchBeforeFailure } from "../../src/agent/session/compaction/overflow.js";
import { prepareCompaction } from "../../src/agent/session/compaction/prepare.js";
import { serializeConversation } from "../../src/agent/session/compaction/prompts.js";
import {
  DEFAULT_COMPACTION_SETTINGS,
  estimateContextTokens,
  estimateTokens,
  IMAGE_TOKENS,
  shouldCompact,
} from "../../src/agent/session/compaction/tokens.js";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import { assistant, texts, toolResult, user } from "./fixtures.js";

const model: Model = {
  id: "summariser",
  name: "Summariser",
  api: "scripted",
  provider: "test",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 10_000,
  maxTokens: 1000,
};

/** A completeFn that records each request and answers from a script. */
function scripted(
  replies: (string | AssistantMessage)[],
): CompleteFn & { requests: { context: Context; maxTokens?: number }[] } {
  const requests: { context: Context; maxTokens?: number }[] = [];
  const fn = async (_m: Model, context: Context, options?: { maxTokens?: number }) => {
    const entry: { context: Context; maxTokens?: number } = { context };
    if (options?.maxTokens !== undefined) entry.maxTokens = options.maxTokens;
    requests.push(entry);
    const next = replies.shift() ?? "unexpected";
    return typeof next === "string"
      ? assistant(next, { usage: { input: 50, output: 20, cost: 0.01 } })
      : next;
  };
  return Object.assign(fn, { requests });
}

function promptOf(request: { context: Context }): string {
  const c = request.context.messages[0]?.content;
  return typeof c === "string" ? c : (c ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
}

const small = { enabled: true, reserveTokens: 1000, keepRecentTokens: 300 };

describe("token estimate", () => {
  it("uses the last assistant usage plus ~4 characters per token after it", () => {
    const messages = [
      user("x".repeat(4000)),
      assistant("ok", { usage: { input: 1200, output: 100, cacheRead: 500 } }),
      user("y".repeat(400)),
      toolResult("c", "z".repeat(40)),
    ];
    expect(estimateContextTokens(messages)).toEqual({
      tokens: 1800 + 110,
      usageTokens: 1800,
      trailingTokens: 110,
      lastUsageIndex: 1,
    });
  });

  it("ignores usage of failed replies and usage from before a compaction summary", () => {
    const failed = assistant("", { usage: { input: 9999 }, stopReason: "error" });
    expect(estimateContextTokens([user("abcd"), failed]).usageTokens).toBe(0);
    const summary = {
      role: "compactionSummary" as const,
      summary: "s".repeat(400),
      tokensBefore: 150_000,
      timestamp: 2000,
    };
    const kept = { ...assistant("kept", { usage: { input: 150_000 } }), timestamp: 1000 };
    // The kept reply's usage describes the context before compaction: estimate by characters.
    expect(estimateContextTokens([summary, user("q"), kept]).tokens).toBe(100 + 1 + 1);
    const fresh = { ...assistant("new", { usage: { input: 3000 } }), timestamp: 3000 };
    expect(estimateContextTokens([summary, user("q"), kept, fresh]).tokens).toBe(3000);
  });

  it("compacts above contextWindow − reserveTokens, unless disabled", () => {
    expect(DEFAULT_COMPACTION_SETTINGS).toMatchObject({ reserveTokens: 16_384, keepRecentTokens: 20_000 });
    expect(shouldCompact(183_616, 200_000)).toBe(false);
    expect(shouldCompact(183_617, 200_000)).toBe(true);
    expect(shouldCompact(199_999, 200_000, { ...DEFAULT_COMPACTION_SETTINGS, enabled: false })).toBe(false);
  });
});

describe("prepareCompaction and compact", () => {
  function longSession(): EntryChain {
    const chain = new EntryChain(null);
    for (let i = 0; i < 6; i++) {
      chain.add({ type: "message", message: user(`task ${i} ${"u".repeat(400)}`) });
      chain.add({
        type: "message",
        message: assistant(`step ${i}`, {
          toolCalls: [
            { id: `r${i}`, name: "read", args: { path: `src/file${i}.ts` } },
            { id: `e${i}`, name: i % 2 === 0 ? "edit" : "write", args: { path: `src/out${i}.ts` } },
          ],
          usage: { input: 2000 + i * 100, output: 50 },
        }),
      });
      chain.add({ type: "message", message: toolResult(`r${i}`, "c".repeat(400)) });
      chain.add({ type: "message", message: toolResult(`e${i}`, "done") });
      chain.add({
        type: "message",
        message: assistant(`finished ${i}`, { usage: { input: 2300 + i * 100, output: 20 } }),
      });
    }
    return chain;
  }

  it("summarises the old part with the structured prompt, keeps the recent part and tracks files", async () => {
    const chain = longSession();
    const prep = prepareCompaction(chain.entries, small);
    if (!prep) throw new Error("expected a compaction plan");
    expect(prep.previousSummary).toBeUndefined();
    expect(prep.tokensBefore).toBe(2800 + 20);
    const complete = scripted(["## Goal\nrefactor"]);
    const out = await compact(prep, model, {}, complete);
    if (!out.ok) throw new Error(out.errorMessage);
    expect(complete.requests).toHaveLength(prep.isSplitTurn ? 2 : 1);
    const prompt = promptOf(complete.requests[0] as { context: Context });
    expect(complete.requests[0]?.context.systemPrompt).toMatch(/Do not continue the conversation/);
    expect(prompt).toMatch(/^<conversation>\n\[User\]: task 0/);
    for (const section of [
      "## Goal",
      "## Constraints & Preferences",
      "## Progress",
      "## Key Decisions",
      "## Next Steps",
      "## Critical Context",
    ])
      expect(prompt).toContain(section);
    expect(prompt).not.toContain("<previous-summary>");
    expect(complete.requests[0]?.maxTokens).toBe(800);
    expect(out.compaction.summary.startsWith("## Goal\nrefactor")).toBe(true);
    expect(out.compaction.details.readFiles).toContain("src/file0.ts");
    expect(out.compaction.details.modifiedFiles).toContain("src/out0.ts");
    expect(out.compaction.summary).toContain("<modified-files>\nsrc/out0.ts");
    expect(out.usage.input).toBeGreaterThan(0);

    const entry = new EntryChain(chain.leafId).add(compactionEntryInput(out.compaction));
    const context = buildSessionContext([...chain.entries, entry]);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary" });
    const keptIndex = chain.entries.findIndex((e) => e.id === prep.firstKeptEntryId);
    expect(context.messages.length).toBe(1 + chain.entries.length - keptIndex);
  });

  it("summarises the beginning of a split turn separately", async () => {
    const chain = new EntryChain(null);
    chain.add({ type: "message", message: user("small start") });
    chain.add({ type: "message", message: assistant("ok") });
    chain.add({ type: "message", message: user("one huge task") });
    for (let i = 0; i < 5; i++) {
      chain.add({
        type: "message",
        message: assistant("", { toolCalls: [{ id: `b${i}`, name: "bash", args: { command: "ls" } }] }),
      });
      chain.add({ type: "message", message: toolResult(`b${i}`, "o".repeat(800)) });
    }
    const prep = prepareCompaction(chain.entries, small);
    if (!prep) throw new Error("expected a compaction plan");
    expect(prep.isSplitTurn).toBe(true);
    expect(texts(prep.messagesToSummarize)).toEqual(["user:small start", "assistant:ok"]);
    expect(texts(prep.turnPrefixMessages)[0]).toBe("user:one huge task");
    const complete = scripted(["history summary", "prefix summary"]);
    const out = await compact(prep, model, {}, complete);
    if (!out.ok) throw new Error(out.errorMessage);
    expect(promptOf(complete.requests[1] as { context: Context })).toMatch(/BEGINNING of one turn/);
    expect(complete.requests[1]?.maxTokens).toBe(500);
    expect(out.compaction.summary).toMatch(/^history summary\n\n---\n\n.*\n\nprefix summary$/s);
    const kept = chain.entries.find((e) => e.id === out.compaction.firstKeptEntryId);
    expect(kept?.type === "message" && kept.message.role).toBe("assistant");
  });

  it("updates the previous summary on the next compaction and carries the file lists", async () => {
    const chain = longSession();
    const first = prepareCompaction(chain.entries, small);
    if (!first) throw new Error("expected a compaction plan");
    const out1 = await compact(first, model, {}, scripted(["first summary", "prefix"]));
    if (!out1.ok) throw new Error(out1.errorMessage);
    chain.add(compactionEntryInput(out1.compaction));
    for (let i = 0; i < 4; i++) {
      chain.add({ type: "message", message: user(`more ${i} ${"m".repeat(600)}`) });
      chain.add({ type: "message", message: assistant(`reply ${i}`, { usage: { input: 900, output: 10 } }) });
    }
    const keptBefore = chain.entries.findIndex((e) => e.id === out1.compaction.firstKeptEntryId);
    const second = prepareCompaction(chain.entries.slice(keptBefore), small);
    if (!second) throw new Error("expected a second compaction plan");
    expect(second.previousSummary).toBe(out1.compaction.summary);
    // The entries the first compaction kept verbatim are summarised now, not dropped.
    expect(texts(second.messagesToSummarize)[0]).toBe(
      texts([buildSessionContext(chain.entries).messages[1] as never])[0],
    );
    const complete = scripted(["second summary"]);
    const out2 = await compact(second, model, { customInstructions: "the file names" }, complete);
    if (!out2.ok) throw new Error(out2.errorMessage);
    const prompt = promptOf(complete.requests[0] as { context: Context });
    expect(prompt).toContain(`<previous-summary>\n${out1.compaction.summary}\n</previous-summary>`);
    expect(prompt).toMatch(/SINCE then/);
    expect(prompt).toMatch(/Also focus on: the file names$/);
    // Files of the first summary carry over; those read in its kept range join them.
    expect(out2.compaction.details.readFiles).toEqual(
      expect.arrayContaining(out1.compaction.details.readFiles),
    );
    expect(out2.compaction.details.readFiles.length).toBeGreaterThan(
      out1.compaction.details.readFiles.length,
    );
  });

  it("returns a model failure as data and has nothing to do for a short branch", async () => {
    const chain = longSession();
    const prep = prepareCompaction(chain.entries, small);
    if (!prep) throw new Error("expected a compaction plan");
    const failed = assistant("", { stopReason: "error" });
    failed.errorMessage = "overloaded_error: try again";
    const out = await compact(prep, model, {}, scripted([failed]));
    expect(out).toMatchObject({ ok: false, errorMessage: "overloaded_error: try again", aborted: false });
    expect(prepareCompaction(chain.entries.slice(0, 2), small)).toBeUndefined();
    const compacted = new EntryChain(chain.leafId).add({
      type: "compaction",
      summary: "s",
      firstKeptEntryId: "x",
      tokensBefore: 1,
    });
    expect(prepareCompaction([...chain.entries, compacted], small)).toBeUndefined();
  });

  it("after an overflow, compacts the branch without the failed reply so the retry resends the question", () => {
    const chain = longSession();
    const question = chain.add({ type: "message", message: user("the question that overflowed") });
    const failed = assistant("", { stopReason: "error" });
    failed.errorMessage = "prompt is too long: 213462 tokens > 200000 maximum";
    chain.add({ type: "message", message: failed });
    const { entries, leafId } = branchBeforeFailure(chain.entries);
    expect(leafId).toBe(question.id);
    expect(entries).toHaveLength(chain.entries.length - 1);
    const prep = prepareCompaction(entries, small);
    expect(prep).toBeDefined();
  });
});

describe("pictures in compaction", () => {
  it("counts a picture at the tokens of the largest one Switchboard shows, and marks it in the summary's transcript", () => {
    const image = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };
    const user: UserMessage = {
      role: "user",
      content: [
        { type: "text", text: "what is this? [picture: a.png at attachments/m1/a.png; shown below]" },
        image,
      ],
      timestamp: 1,
    };
    expect(estimateTokens(user)).toBe(Math.ceil(67 / 4) + IMAGE_TOKENS);
    const transcript = serializeConversation([user]);
    expect(transcript).toContain("[a picture was shown here]");
    expect(transcript).not.toContain("iVBORw0KGgo");
  });
});
