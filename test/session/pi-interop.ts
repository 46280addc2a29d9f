/**
 * Pieces of the pi interop tests: a session written by pi's own `SessionManager` with everything a
 * pi session holds, entries Switchboard adds the way its worker and compactor add them, and the
 * comparison of what pi and Switchboard make of a session at every leaf.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildSessionContext as piBuildSessionContext,
  convertToLlm as piConvertToLlm,
  SessionManager,
} from "@mariozechner/pi-coding-agent";
import { expect } from "vitest";
import type {
  AssistantMessage,
  Context,
  ImageContent,
  Model,
  UserMessage,
} from "../../src/agent/llm/types.js";
import { compact, compactionEntryInput } from "../../src/agent/session/compaction/compact.js";
import { prepareCompaction } from "../../src/agent/session/compaction/prepare.js";
import { branchContext } from "../../src/agent/session/context.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import { type RecordedSettings, recordSettings } from "../../src/agent/session/settings.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import type { SessionStore } from "../../src/queue/store/types.js";
import { assistant, toolResult, user } from "./fixtures.js";

/** A 1×1 PNG. */
const PNG: ImageContent = {
  type: "image",
  data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  mimeType: "image/png",
};

export const REASONING_MODEL = {
  provider: "anthropic",
  id: "claude-a",
  reasoning: true,
  thinkingLevels: ["off", "minimal", "low", "medium", "high"],
} as const satisfies Pick<Model, "provider" | "id" | "reasoning"> & { thinkingLevels: readonly string[] };

export const PLAIN_MODEL = { provider: "openai", id: "gpt-plain", reasoning: false } as const;

/** The summariser our compactions call, answering without a network. */
const summariser: Model = {
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

async function scriptedSummary(_m: Model, context: Context): Promise<AssistantMessage> {
  const asked = context.messages.length;
  return assistant(`## Goal\nSwitchboard's summary of ${asked} request message(s)`);
}

function bash(
  command: string,
  output: string,
  more: {
    exitCode?: number;
    cancelled?: boolean;
    truncated?: boolean;
    fullOutputPath?: string;
    exclude?: boolean;
  } = {},
) {
  const message: Record<string, unknown> = {
    role: "bashExecution",
    command,
    output,
    exitCode: more.exitCode ?? 0,
    cancelled: more.cancelled ?? false,
    truncated: more.truncated ?? false,
    timestamp: 1_700_000_000_500,
  };
  if (more.fullOutputPath) message.fullOutputPath = more.fullOutputPath;
  if (more.exclude) message.excludeFromContext = true;
  return message;
}

/** pi's message shape for an assistant reply of `model`. */
function piAssistant(text: string, model: { provider: string; id: string }, toolCall?: string) {
  return assistant(text, {
    provider: model.provider,
    model: model.id,
    ...(toolCall ? { toolCalls: [{ id: toolCall, name: "read", args: { path: "notes.md" } }] } : {}),
  });
}

export interface PiSession {
  /** The file pi wrote, as text. */
  text: string;
  dir: string;
  dispose(): void;
}

/**
 * A session written by pi's `SessionManager`: settings changes (a thinking level set before a
 * compaction's kept range, a clamp to `off` on a model without reasoning), user messages with text
 * and an image, tool calls and results, `bashExecution` messages (one excluded from the context,
 * one failed and truncated, one cancelled), custom entries and messages, labels, a session name,
 * pi's compaction (no settings in `details`), a plain branch and a branch with a summary, and
 * text in several scripts.
 */
export function writePiSession(): PiSession {
  const dir = mkdtempSync(join(tmpdir(), "sb-pi-"));
  const sm = SessionManager.create("/home/ada/project", dir);
  sm.appendModelChange(REASONING_MODEL.provider, REASONING_MODEL.id);
  sm.appendThinkingLevelChange("medium");
  const first = sm.appendMessage(user("Look at the notes — naïve café, 日本語, ✓"));
  sm.appendMessage(piAssistant("Reading them.", REASONING_MODEL, "call-1"));
  sm.appendMessage(toolResult("call-1", "notes: ship on Friday", "read"));
  const answered = sm.appendMessage(piAssistant("They say Friday.", REASONING_MODEL));
  sm.appendMessage(bash("ls", "notes.md\nplan.md") as never);
  sm.appendMessage(bash("cat .env", "SECRET=1", { exclude: true }) as never);
  sm.appendMessage(
    bash("make test", "FAIL x", {
      exitCode: 2,
      truncated: true,
      fullOutputPath: "/tmp/pi-bash-1.log",
    }) as never,
  );
  sm.appendMessage(bash("sleep 100", "", { cancelled: true }) as never);
  const withImage: UserMessage = {
    role: "user",
    content: [{ type: "text", text: "What is in this picture?" }, PNG],
    timestamp: 1_700_000_000_600,
  };
  sm.appendMessage(withImage);
  sm.appendMessage(piAssistant("A single pixel.", REASONING_MODEL));
  sm.appendCustomEntry("ext:state", { counter: 3, nested: { ok: true } });
  sm.appendCustomMessageEntry("ext:note", "Remember: the deadline is Friday.", true, { hidden: "details" });
  sm.appendCustomMessageEntry("ext:pic", [{ type: "text", text: "attached" }, PNG], false);
  sm.appendLabelChange(first, "start");
  sm.appendSessionInfo("pi session");
  const kept = sm.appendMessage(user("Kept question \u2028 with a line separator"));
  sm.appendMessage(piAssistant("Kept answer.", REASONING_MODEL));
  // pi's compaction: no settings in details; the thinking level set above is before its kept range.
  sm.appendCompaction("pi summarised the start", kept, 23_456, {
    readFiles: ["notes.md"],
    modifiedFiles: [],
  });
  sm.appendMessage(user("After the compaction"));
  const tip = sm.appendMessage(piAssistant("Still medium.", REASONING_MODEL));
  sm.appendLabelChange(tip, "tip");
  sm.appendLabelChange(first, undefined);
  // A plain branch from an earlier answer, and one with a summary of what was left.
  sm.branch(answered);
  sm.appendMessage(user("Branch B question"));
  sm.appendMessage(piAssistant("Branch B answer.", REASONING_MODEL));
  sm.branchWithSummary(answered, "Tried branch B; it was a dead end.", { readFiles: [] });
  sm.appendMessage(user("Back on track"));
  // pi's clamp when switching to a model without reasoning: model change, then thinking off.
  sm.appendModelChange(PLAIN_MODEL.provider, PLAIN_MODEL.id);
  sm.appendThinkingLevelChange("off");
  sm.appendMessage(piAssistant("Answer from the plain model.", PLAIN_MODEL));
  const file = sm.getSessionFile();
  if (!file) throw new Error("pi did not persist the session");
  return {
    text: readFileSync(file, "utf8"),
    dir,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** What the model is shown and with which settings, as pi computes it for every leaf of `text`. */
export function piViews(text: string, dir: string): Map<string, unknown> {
  const file = join(dir, `reread-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, text);
  const sm = SessionManager.open(file, dir);
  const entries = sm.getEntries();
  const views = new Map<string, unknown>();
  for (const e of entries) {
    const ctx = piBuildSessionContext(entries, e.id);
    views.set(e.id, {
      model: ctx.model,
      thinkingLevel: ctx.thinkingLevel,
      llm: piConvertToLlm(ctx.messages),
    });
  }
  return views;
}

/** The same as `piViews`, as Switchboard's store reads it (branch reads from the kept range on). */
export async function switchboardView(
  store: SessionStore,
  threadKey: string,
  sessionId: string,
  leafId: string,
): Promise<unknown> {
  const read = await store.readBranch(threadKey, sessionId, leafId);
  if (!read) throw new Error(`no session ${sessionId} in ${threadKey}`);
  const ctx = branchContext(read);
  return { model: ctx.model, thinkingLevel: ctx.thinkingLevel, llm: convertToLlm(ctx.messages) };
}

/** Asserts that pi and Switchboard agree on the model, thinking level and context at every entry. */
export async function expectSameAtEveryLeaf(
  text: string,
  dir: string,
  store: SessionStore,
  threadKey: string,
  sessionId: string,
): Promise<number> {
  const views = piViews(text, dir);
  expect(views.size).toBeGreaterThan(0);
  for (const [leafId, pi] of views) {
    const ours = await switchboardView(store, threadKey, sessionId, leafId);
    expect({ leafId, ...(ours as object) }).toEqual({ leafId, ...(pi as object) });
  }
  return views.size;
}

/**
 * Continues a stored session the way Switchboard's worker does: a user message from the inbox
 * (with its mark), an image, a tool call, `/thinking high`, a `/model` switch to a model without
 * reasoning (the clamp writes `off`), our compaction, a branch, a label and extension entries.
 * Returns the ids of some of the entries written.
 */
export async function continueInSwitchboard(
  store: SessionStore,
  threadKey: string,
  sessionId: string,
): Promise<{ ids: string[] }> {
  const read = await store.readBranch(threadKey, sessionId);
  if (!read) throw new Error("no session");
  let recorded: RecordedSettings = {
    model: read.inherited.model
      ? `${read.inherited.model.provider}/${read.inherited.model.modelId}`
      : undefined,
    thinkingLevel: branchContext(read).thinkingLevel,
  };
  const append = async (build: (chain: EntryChain) => void, leaf: string | null) => {
    const chain = new EntryChain(leaf);
    build(chain);
    const r = await store.append(threadKey, sessionId, chain.entries);
    return r.entries;
  };
  const settings =
    (model: Pick<Model, "provider" | "id" | "reasoning" | "thinkingLevels">, level: string) =>
    (chain: EntryChain) => {
      const r = recordSettings(recorded, model, level as never);
      recorded = r.recorded;
      for (const input of r.entries) chain.add(input);
    };

  const written: SessionEntry[] = [];
  let leaf = read.leafId;
  const step = async (build: (chain: EntryChain) => void) => {
    const stored = await append(build, leaf);
    written.push(...stored);
    leaf = stored[stored.length - 1]?.id ?? leaf;
  };
  await step(settings({ ...REASONING_MODEL, thinkingLevels: [...REASONING_MODEL.thinkingLevels] }, "high"));
  await step((c) => {
    c.add({
      type: "message",
      message: {
        role: "user",
        content: [{ type: "text", text: "And this one?" }, PNG],
        timestamp: 1_700_000_001_000,
      },
      inbox: { first: 7, last: 7, at: 1_700_000_001_000 },
    });
    c.add({ type: "message", message: piAssistant("Let me read.", REASONING_MODEL, "call-9") });
    c.add({ type: "message", message: toolResult("call-9", "more notes", "read") });
    c.add({ type: "message", message: piAssistant("Another pixel.", REASONING_MODEL) });
  });
  const beforeSwitch = leaf;
  await step(settings(PLAIN_MODEL, "high"));
  await step((c) => {
    c.add({
      type: "message",
      message: user("Now on the plain model"),
      inbox: { first: 8, last: 8, at: 1_700_000_002_000 },
    });
    c.add({ type: "message", message: piAssistant("Plain answer.", PLAIN_MODEL) });
    c.add({ type: "custom", customType: "ext:state", data: { counter: 4 } });
    c.add({
      type: "custom_message",
      customType: "ext:note",
      content: [{ type: "text", text: "note" }, PNG],
      display: true,
    });
  });
  // Our compaction over the branch as the store reads it.
  const path = (await store.readBranch(threadKey, sessionId, leaf ?? undefined))?.entries ?? [];
  const preparation = prepareCompaction(path, { enabled: true, reserveTokens: 2000, keepRecentTokens: 60 });
  if (!preparation) throw new Error("nothing to compact");
  const outcome = await compact(preparation, summariser, {}, scriptedSummary);
  if (!outcome.ok) throw new Error(outcome.errorMessage);
  await step((c) => {
    c.add(compactionEntryInput(outcome.compaction));
  });
  await step((c) => {
    c.add({ type: "message", message: user("After our compaction") });
    c.add({ type: "message", message: piAssistant("Still plain, thinking off.", PLAIN_MODEL) });
  });
  const tip = leaf as string;
  await step((c) => {
    c.add({ type: "label", targetId: tip, label: "switchboard tip" });
  });
  // A branch from before the model switch: the reasoning model and `high` are in force there.
  await store.setLeaf(threadKey, sessionId, beforeSwitch);
  leaf = beforeSwitch;
  await step((c) => {
    c.add({ type: "message", message: user("Branch from before the switch") });
    c.add({ type: "message", message: piAssistant("Thinking high here.", REASONING_MODEL) });
  });
  return { ids: written.map((e) => e.id) };
}
