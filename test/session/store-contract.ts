/**
 * The SessionStore contract suite. Every store implementation runs it through a harness:
 *
 * ```ts
 * describeSessionStoreContract("redis", async () => ({ store, holdLease, injectGarbage, reopen, warnings, dispose }));
 * ```
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { branchContext, buildSessionContext } from "../../src/agent/session/context.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import { checkPiV3, parseSessionJsonl } from "../../src/agent/session/jsonl.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import { EntryNotFoundError, LeaseLostError, SessionNotFoundError } from "../../src/queue/store/errors.js";
import type { BranchRead, Fence, SessionStore } from "../../src/queue/store/types.js";
import { assistant, conversation, texts, toolResult, user } from "./fixtures.js";

export interface StoreHarness {
  /** A store whose clock (`now` option) ticks forward on every reading, so activity order is exact. */
  store: SessionStore;
  /** Makes `token` the holder of the thread's lease and returns the fence a holder would pass. */
  holdLease(threadKey: string, token: string): Promise<Fence>;
  /** Damages the stored session by adding `line` (not valid JSON) after its current entries. */
  injectGarbage(threadKey: string, sessionId: string, line: string): Promise<void>;
  /** A second store over the same storage (another process, or this one after a restart). */
  reopen(): Promise<SessionStore>;
  /** Warnings the stores logged. */
  warnings: string[];
  dispose(): Promise<void>;
}

export function describeSessionStoreContract(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(`SessionStore contract: ${name}`, () => {
    let h: StoreHarness;
    let store: SessionStore;
    let thread: string;

    beforeEach(async () => {
      h = await makeHarness();
      store = h.store;
      thread = `slack:T1:C${randomUUID().slice(0, 6)}:1712.33`;
    });
    afterEach(async () => {
      await h.dispose();
    });

    async function sessionWith(entries: SessionEntry[]): Promise<string> {
      const header = await store.createSession(thread);
      if (entries.length > 0) await store.append(thread, header.id, entries);
      return header.id;
    }

    it("creates a pi v3 session that becomes current and records model and thinking level", async () => {
      const header = await store.createSession(thread, {
        model: "anthropic/claude-x",
        thinkingLevel: "high",
      });
      expect(header).toMatchObject({ type: "session", version: 3, cwd: thread, threadKey: thread });
      const meta = await store.getThreadMeta(thread);
      expect(meta).toMatchObject({
        currentSessionId: header.id,
        model: "anthropic/claude-x",
        thinkingLevel: "high",
      });
      const branch = await store.readBranch(thread);
      expect(branch?.entries.map((e) => e.type)).toEqual(["model_change", "thinking_level_change"]);
      expect(meta?.leafId).toBe(branch?.leafId);
      expect(buildSessionContext(branch?.entries ?? [])).toMatchObject({
        model: { provider: "anthropic", modelId: "claude-x" },
        thinkingLevel: "high",
        messages: [],
      });
    });

    it("startSession returns the new session exactly as readBranch reads it back", async () => {
      const bare = await store.startSession(thread);
      expect(bare).toEqual(await store.readBranch(thread));
      expect(bare).toMatchObject({ entries: [], leafId: null });
      const set = await store.startSession(thread, { model: "anthropic/claude-x", thinkingLevel: "high" });
      expect(set).toEqual(await store.readBranch(thread));
      expect(set.entries.map((e) => e.type)).toEqual(["model_change", "thinking_level_change"]);
      expect((await store.getThreadMeta(thread))?.currentSessionId).toBe(set.header.id);
    });

    it("knows nothing of a thread never written", async () => {
      expect(await store.getThreadMeta(thread)).toBeUndefined();
      expect(await store.readBranch(thread)).toBeUndefined();
      expect(await store.listSessions(thread)).toEqual([]);
      await expect(store.readAll(thread, randomUUID())).rejects.toBeInstanceOf(SessionNotFoundError);
      await expect(store.append(thread, randomUUID(), conversation(1))).rejects.toBeInstanceOf(
        SessionNotFoundError,
      );
    });

    it("appends entries and reads the branch back as the model's context", async () => {
      const sid = await sessionWith([]);
      const first = conversation(2);
      const r1 = await store.append(thread, sid, first);
      expect(r1.leafId).toBe(first[3]?.id);
      const more = conversation(1, r1.leafId, "later");
      await store.append(thread, sid, more);
      const branch = await store.readBranch(thread);
      expect(branch?.leafId).toBe(more[1]?.id);
      expect(branch?.entries).toEqual([...first, ...more]);
      expect(texts(buildSessionContext(branch?.entries ?? []).messages)).toEqual([
        "user:question 0 x",
        "assistant:answer 0 x",
        "user:question 1 x",
        "assistant:answer 1 x",
        "user:question 0 later",
        "assistant:answer 0 later",
      ]);
      expect((await store.getThreadMeta(thread))?.leafId).toBe(more[1]?.id);
    });

    it("refuses an entry whose parent does not exist and writes nothing", async () => {
      const sid = await sessionWith(conversation(1));
      const orphan = new EntryChain("deadbeef").add({ type: "message", message: user("lost") });
      await expect(store.append(thread, sid, [orphan])).rejects.toBeInstanceOf(EntryNotFoundError);
      await expect(
        store.append(thread, sid, [{ type: "message" } as unknown as SessionEntry]),
      ).rejects.toThrow(/not a valid session entry/);
      expect((await store.readAll(thread, sid)).entries).toHaveLength(2);
    });

    it("gives a fresh id to an entry whose id is taken and relinks the batch", async () => {
      const existing = conversation(1);
      const sid = await sessionWith(existing);
      const clash = new EntryChain(existing[1]?.id ?? null);
      const a = clash.add({ type: "message", message: user("again") });
      const b = clash.add({ type: "message", message: assistant("sure") });
      const taken = existing[0]?.id as string;
      const result = await store.append(thread, sid, [
        { ...a, id: taken },
        { ...b, parentId: taken },
      ]);
      const [ra, rb] = result.entries;
      expect(ra?.id).not.toBe(taken);
      expect(rb?.parentId).toBe(ra?.id);
      expect(result.leafId).toBe(rb?.id);
      const all = await store.readAll(thread, sid);
      expect(new Set(all.entries.map((e) => e.id)).size).toBe(4);
      expect(texts(buildSessionContext((await store.readBranch(thread))?.entries ?? []).messages)).toEqual([
        "user:question 0 x",
        "assistant:answer 0 x",
        "user:again",
        "assistant:sure",
      ]);
    });

    it("branches: setLeaf moves the leaf, the next append forks there, both branches stay readable", async () => {
      const main = conversation(2);
      const sid = await sessionWith(main);
      const forkPoint = main[1]?.id as string;
      await store.setLeaf(thread, sid, forkPoint);
      expect((await store.getThreadMeta(thread))?.leafId).toBe(forkPoint);
      expect((await store.readBranch(thread))?.entries).toEqual(main.slice(0, 2));
      const fork = conversation(1, forkPoint, "fork");
      await store.append(thread, sid, fork);
      expect(texts(buildSessionContext((await store.readBranch(thread))?.entries ?? []).messages)).toEqual([
        "user:question 0 x",
        "assistant:answer 0 x",
        "user:question 0 fork",
        "assistant:answer 0 fork",
      ]);
      const old = await store.readBranch(thread, sid, main[3]?.id);
      expect(old?.entries).toEqual(main);
      expect((await store.readAll(thread, sid)).entries).toEqual([...main, ...fork]);
      await expect(store.setLeaf(thread, sid, "nothere1")).rejects.toBeInstanceOf(EntryNotFoundError);
      await expect(store.readBranch(thread, sid, "nothere1")).rejects.toBeInstanceOf(EntryNotFoundError);
      await store.setLeaf(thread, sid, null);
      expect(await store.readBranch(thread)).toMatchObject({ entries: [], leafId: null });
    });

    it("reads a branch from the latest compaction's kept range, with the settings set before it", async () => {
      const chain = new EntryChain(null);
      chain.add({ type: "thinking_level_change", thinkingLevel: "medium" });
      for (let i = 0; i < 5; i++) {
        chain.add({ type: "message", message: user(`q${i}`) });
        chain.add({ type: "message", message: assistant(`a${i}`) });
      }
      const kept = chain.entries[7] as SessionEntry;
      chain.add({
        type: "compaction",
        summary: "earlier: q0..q2",
        firstKeptEntryId: kept.id,
        tokensBefore: 999,
      });
      chain.add({ type: "message", message: user("after") });
      const sid = await sessionWith(chain.entries);
      const branch = await store.readBranch(thread, sid);
      expect(branch?.entries[0]?.id).toBe(kept.id);
      expect(branch?.entries).toHaveLength(chain.entries.length - 7);
      // The thinking level was set before the kept range and still holds (pi reads it so).
      expect(branch?.inherited).toEqual({
        thinkingLevel: "medium",
        model: { provider: "anthropic", modelId: "claude-test" },
      });
      expect(branchContext(branch as BranchRead)).toMatchObject({ thinkingLevel: "medium" });
      expect(texts(buildSessionContext(branch?.entries ?? []).messages)).toEqual([
        "compactionSummary:earlier: q0..q2",
        "user:q3",
        "assistant:a3",
        "user:q4",
        "assistant:a4",
        "user:after",
      ]);
    });

    it("starts a new session keeping the old one, with the thread's model and thinking level", async () => {
      const first = await store.createSession(thread, { model: "openai/gpt-x" });
      const conv = conversation(1, (await store.readBranch(thread))?.leafId ?? null);
      await store.append(thread, first.id, conv);
      await store.append(thread, first.id, [
        new EntryChain(conv[1]?.id ?? null).add({ type: "thinking_level_change", thinkingLevel: "low" }),
      ]);
      const second = await store.newSession(thread);
      expect(second.id).not.toBe(first.id);
      const meta = await store.getThreadMeta(thread);
      expect(meta).toMatchObject({
        currentSessionId: second.id,
        model: "openai/gpt-x",
        thinkingLevel: "low",
      });
      expect(buildSessionContext((await store.readBranch(thread))?.entries ?? [])).toMatchObject({
        messages: [],
        model: { provider: "openai", modelId: "gpt-x" },
        thinkingLevel: "low",
      });
      const listed = await store.listSessions(thread);
      expect(listed.map((s) => s.header.id)).toEqual([first.id, second.id]);
      expect(listed.map((s) => s.entryCount)).toEqual([4, 2]);
      const old = await store.readBranch(thread, first.id);
      expect(texts(buildSessionContext(old?.entries ?? []).messages)).toEqual([
        "user:question 0 x",
        "assistant:answer 0 x",
      ]);
    });

    it("lists threads by last activity, newest first", async () => {
      const threads = [`${thread}:a`, `${thread}:b`, `${thread}:c`];
      for (const t of threads) await store.createSession(t);
      const h0 = (await store.getThreadMeta(threads[0] as string))?.currentSessionId as string;
      await store.append(threads[0] as string, h0, conversation(1));
      const listed = (await store.listThreads()).map((t) => t.threadKey).filter((k) => threads.includes(k));
      expect(listed).toEqual([threads[0], threads[2], threads[1]]);
      const top = await store.listThreads({ limit: 1 });
      expect(top).toHaveLength(1);
      expect(top[0]?.lastActivityAt).toBeGreaterThan(0);
    });

    it("adds the usage of appended assistant messages to the thread's totals, also under concurrency", async () => {
      const sid = await sessionWith([]);
      // Totals a thread already has (added on their own) are added to, not replaced.
      await store.addUsage(thread, { output: 3, cacheRead: 2, cost: 0.25 });
      const appends = Array.from({ length: 20 }, (_, i) =>
        store.append(thread, sid, [
          new EntryChain(null).add({
            type: "message",
            message: assistant(`r${i}`, {
              usage: { input: 100, output: 10, cacheRead: 3, cacheWrite: 1, cost: 0.0015 },
            }),
          }),
        ]),
      );
      await Promise.all(appends);
      await store.append(thread, sid, [
        new EntryChain(null).add({ type: "message", message: user("no usage") }),
      ]);
      await store.addUsage(thread, { input: 7, cost: 0.5 });
      const usage = (await store.getThreadMeta(thread))?.usage;
      expect(usage).toMatchObject({ input: 2007, output: 203, cacheRead: 62, cacheWrite: 20 });
      expect(usage?.cost).toBeCloseTo(0.78, 12);
      expect((await store.readAll(thread, sid)).entries).toHaveLength(21);
    });

    it("keeps model and thinking level in step with the current session; updateThreadMeta sets and clears", async () => {
      const old = await store.createSession(thread);
      const current = await store.createSession(thread);
      await store.append(thread, old.id, [
        new EntryChain(null).add({ type: "model_change", provider: "google", modelId: "old-branch" }),
      ]);
      expect((await store.getThreadMeta(thread))?.model).toBeUndefined();
      await store.append(thread, current.id, [
        new EntryChain(null).add({
          type: "model_change",
          provider: "openrouter",
          modelId: "anthropic/claude",
        }),
      ]);
      expect((await store.getThreadMeta(thread))?.model).toBe("openrouter/anthropic/claude");
      await store.updateThreadMeta(thread, { thinkingLevel: "medium" });
      expect((await store.getThreadMeta(thread))?.thinkingLevel).toBe("medium");
      await store.updateThreadMeta(thread, { model: null, thinkingLevel: null });
      const meta = await store.getThreadMeta(thread);
      expect(meta?.model).toBeUndefined();
      expect(meta?.thinkingLevel).toBeUndefined();
    });

    it("fences appends and leaf moves: a stale token gets LeaseLostError and nothing is written", async () => {
      const sid = await sessionWith(conversation(1));
      const mine = await h.holdLease(thread, "worker-a");
      const ok = conversation(1, (await store.readBranch(thread))?.leafId ?? null, "fenced");
      await store.append(thread, sid, ok, { fence: mine });
      const theirs = await h.holdLease(thread, "worker-b");
      expect(theirs.key).toBe(mine.key);
      const late = new EntryChain(ok[1]?.id ?? null).add({
        type: "message",
        message: assistant("too late", { usage: { input: 1000, cost: 1 } }),
      });
      const before = await store.getThreadMeta(thread);
      const err = await store.append(thread, sid, [late], { fence: mine }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LeaseLostError);
      expect((err as LeaseLostError).code).toBe("thread.lease_lost");
      await expect(store.setLeaf(thread, sid, null, { fence: mine })).rejects.toBeInstanceOf(LeaseLostError);
      const after = await store.getThreadMeta(thread);
      expect(after?.usage).toEqual(before?.usage);
      expect(after?.leafId).toBe(ok[1]?.id);
      expect((await store.readAll(thread, sid)).entries).toHaveLength(4);
      await store.append(thread, sid, [late], { fence: theirs });
      expect((await store.readAll(thread, sid)).entries).toHaveLength(5);
    });

    it("fences session creation and /new: a stale token gets LeaseLostError and the current session stays", async () => {
      const mine = await h.holdLease(thread, "worker-a");
      const first = await store.createSession(thread, { model: "anthropic/claude-x", fence: mine });
      expect((await store.getThreadMeta(thread))?.currentSessionId).toBe(first.id);
      const second = await store.newSession(thread, { fence: mine });
      expect((await store.getThreadMeta(thread))?.currentSessionId).toBe(second.id);
      expect((await store.readBranch(thread))?.entries.map((e) => e.type)).toEqual(["model_change"]);

      await h.holdLease(thread, "worker-b");
      const before = await store.getThreadMeta(thread);
      await expect(store.newSession(thread, { fence: mine })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(store.createSession(thread, { fence: mine })).rejects.toBeInstanceOf(LeaseLostError);
      expect(await store.getThreadMeta(thread)).toEqual(before);
      expect((await store.listSessions(thread)).map((s) => s.header.id)).toEqual([first.id, second.id]);
    });

    it("exports a valid pi v3 file and imports it back with an identical context", async () => {
      const chain = new EntryChain(null);
      chain.add({ type: "model_change", provider: "anthropic", modelId: "claude-x" });
      chain.add({ type: "message", message: user("read the file") });
      chain.add({
        type: "message",
        message: assistant("", { toolCalls: [{ id: "t1", name: "read", args: { path: "a.ts" } }] }),
      });
      chain.add({ type: "message", message: toolResult("t1", "contents") });
      chain.add({ type: "custom", customType: "ext:state", data: { n: 1 } });
      chain.add({
        type: "custom_message",
        customType: "ext:note",
        content: "note for the model",
        display: true,
      });
      chain.add({ type: "label", targetId: chain.entries[1]?.id as string, label: "start" });
      chain.add({ type: "message", message: assistant("done") });
      const sid = await sessionWith(chain.entries);
      const text = await store.exportJsonl(thread, sid);
      expect(checkPiV3(text)).toEqual([]);
      const lines = text.trimEnd().split("\n");
      expect(lines).toHaveLength(chain.entries.length + 1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({
        type: "session",
        version: 3,
        id: sid,
        cwd: thread,
      });

      const other = `${thread}:copy`;
      const imported = await store.importJsonl(text, other);
      expect(imported).toMatchObject({ threadKey: other, sessionId: sid, entryCount: chain.entries.length });
      const original = buildSessionContext((await store.readBranch(thread))?.entries ?? []);
      const copy = buildSessionContext((await store.readBranch(other))?.entries ?? []);
      expect(copy).toEqual(original);
      expect(texts(copy.messages)).toEqual([
        "user:read the file",
        "assistant:[toolCall read]",
        "toolResult:contents",
        "custom:note for the model",
        "assistant:done",
      ]);
      // The latest model on the path wins: the last assistant message's.
      expect((await store.getThreadMeta(other))?.model).toBe("anthropic/claude-test");

      // Into the same thread: the id is taken, so the copy gets a new one and becomes current.
      const again = await store.importJsonl(text);
      expect(again.threadKey).toBe(thread);
      expect(again.sessionId).not.toBe(sid);
      expect((await store.getThreadMeta(thread))?.currentSessionId).toBe(again.sessionId);
      expect(buildSessionContext((await store.readBranch(thread))?.entries ?? [])).toEqual(original);
      await expect(store.importJsonl("not a session\n")).rejects.toThrow(/not a session file/);
    });

    it("skips a corrupted stored line with a warning; the lines after it still load", async () => {
      const first = conversation(1);
      const sid = await sessionWith(first);
      await h.injectGarbage(thread, sid, '{"type":"message","id":"broken"');
      const reopened = await h.reopen();
      const more = conversation(1, first[1]?.id ?? null, "after damage");
      await reopened.append(thread, sid, more);
      const all = await reopened.readAll(thread, sid);
      expect(all.entries).toEqual([...first, ...more]);
      expect(h.warnings.some((w) => /unreadable|truncated/i.test(w))).toBe(true);
      expect(
        texts(buildSessionContext((await reopened.readBranch(thread))?.entries ?? []).messages),
      ).toHaveLength(4);
      const exported = await reopened.exportJsonl(thread, sid);
      expect(checkPiV3(exported)).toEqual([]);
    });

    it("keeps concurrent appends whole: every line parses and every entry is there", async () => {
      const sid = await sessionWith([]);
      const big = "y".repeat(20_000);
      const batches = Array.from({ length: 12 }, (_, i) => conversation(2, null, `${i} ${big}`));
      await Promise.all(batches.map((b) => store.append(thread, sid, b)));
      const text = await store.exportJsonl(thread, sid);
      expect(checkPiV3(text)).toEqual([]);
      const parsed = parseSessionJsonl(text);
      expect(parsed?.skippedLines).toEqual([]);
      expect(parsed?.entries).toHaveLength(48);
    });

    it("survives a restart: a second store sees the same sessions, leaf and totals", async () => {
      const sid = await sessionWith(conversation(3));
      await store.setLeaf(thread, sid, (await store.readAll(thread, sid)).entries[1]?.id ?? null);
      const reopened = await h.reopen();
      expect(await reopened.getThreadMeta(thread)).toEqual(await store.getThreadMeta(thread));
      expect(await reopened.readBranch(thread)).toEqual(await store.readBranch(thread));
      expect(await reopened.listSessions(thread)).toEqual(await store.listSessions(thread));
    });

    it("loads only the entries after a compaction near the end of a 10,000-entry session", async () => {
      const chain = new EntryChain(null);
      for (let i = 0; i < 5000; i++) {
        chain.add({ type: "message", message: user(`q${i}`) });
        chain.add({ type: "message", message: assistant(`a${i}`) });
      }
      const kept = chain.entries[9_940] as SessionEntry;
      chain.add({ type: "compaction", summary: "s", firstKeptEntryId: kept.id, tokensBefore: 1 });
      for (let i = 0; i < 20; i++) chain.add({ type: "message", message: user(`tail${i}`) });
      const sid = await sessionWith(chain.entries);
      const branch = await store.readBranch(thread, sid);
      expect(branch?.entries).toHaveLength(60 + 1 + 20);
      expect(branch?.entries[0]?.id).toBe(kept.id);
      expect(buildSessionContext(branch?.entries ?? []).messages).toHaveLength(1 + 60 + 20);
    });
  });
}
