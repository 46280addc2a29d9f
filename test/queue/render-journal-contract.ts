/**
 * The `RenderJournal` contract, run against every implementation (render-journal.test.ts): what a
 * thread's runs still owe the chat, written only under the token that holds the thread's lease and
 * read by whoever takes the thread next. `make()` returns a journal and `hold(threadKey, token)`,
 * which makes `token` the thread's lease holder (the embedded runtime's lease table, or the lease
 * key on Redis), replacing the previous one.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { RenderJournal } from "../../src/queue/state/render-journal.js";
import { subjectPerTest } from "../support/contract-subject.js";

export interface JournalSubject {
  journal: RenderJournal;
  hold(threadKey: string, token: string): Promise<void>;
  close(): Promise<void>;
}

const thread = () => `telegram:${randomUUID().slice(0, 8)}`;
const snapshot = { v: 1, messages: [{ refs: ["7"], text: "Got it.\nLine two — ünïcode ✓" }] };

export function renderJournalContract(name: string, make: () => Promise<JournalSubject>): void {
  describe(`RenderJournal contract: ${name}`, () => {
    const open = subjectPerTest(make);

    it("owes nothing for a thread never written", async () => {
      const { journal } = await open();
      expect(await journal.owed(thread())).toEqual([]);
    });

    it("records a snapshot only under the lease holder's token, and gives it back as written", async () => {
      const { journal, hold } = await open();
      const t = thread();
      expect(await journal.put(t, "tok", "run-1", snapshot)).toBe(false);
      await hold(t, "tok");
      expect(await journal.put(t, "other", "run-1", snapshot)).toBe(false);
      expect(await journal.owed(t)).toEqual([]);
      expect(await journal.put(t, "tok", "run-1", snapshot)).toBe(true);
      expect(await journal.owed(t)).toEqual([{ runId: "run-1", snapshot, posted: new Map() }]);
    });

    it("replaces a run's snapshot with its next one, and keeps each run's own", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "tok");
      expect(await journal.put(t, "tok", "run-1", { step: 1 })).toBe(true);
      expect(await journal.put(t, "tok", "run-2", { step: 1 })).toBe(true);
      expect(await journal.put(t, "tok", "run-1", { step: 2 })).toBe(true);
      const owed = await journal.owed(t);
      expect(owed.sort((a, b) => a.runId.localeCompare(b.runId))).toEqual([
        { runId: "run-1", snapshot: { step: 2 }, posted: new Map() },
        { runId: "run-2", snapshot: { step: 1 }, posted: new Map() },
      ]);
    });

    it("records a snapshot as it was when put: later changes to the caller's object or to what owed gave back do not reach it", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "tok");
      const messages = [{ refs: ["7"], text: "Got it." }];
      expect(await journal.put(t, "tok", "run-1", { v: 1, messages })).toBe(true);
      messages[0]?.refs.push("8");
      messages.push({ refs: [], text: "not owed yet" });
      const read = await journal.owed(t);
      (read[0]?.snapshot as { v: number }).v = 2;
      expect(await journal.owed(t)).toEqual([
        {
          runId: "run-1",
          snapshot: { v: 1, messages: [{ refs: ["7"], text: "Got it." }] },
          posted: new Map(),
        },
      ]);
    });

    it("keeps each posted id beside its run's snapshot, fenced by the lease", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "tok");
      expect(await journal.posted(t, "other", "run-3", "k1", "telegram:42:8")).toBe(false);
      expect(await journal.put(t, "tok", "run-3", snapshot)).toBe(true);
      expect(await journal.posted(t, "tok", "run-3", "k1", "telegram:42:8")).toBe(true);
      expect(await journal.posted(t, "tok", "run-3", "k2", "telegram:42:9")).toBe(true);
      expect(await journal.owed(t)).toEqual([
        {
          runId: "run-3",
          snapshot,
          posted: new Map([
            ["k1", "telegram:42:8"],
            ["k2", "telegram:42:9"],
          ]),
        },
      ]);
    });

    it("lists posted ids whose run has no snapshot yet, with the snapshot undefined", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "tok");
      expect(await journal.posted(t, "tok", "run-4", "k1", "telegram:42:10")).toBe(true);
      expect(await journal.owed(t)).toEqual([
        { runId: "run-4", snapshot: undefined, posted: new Map([["k1", "telegram:42:10"]]) },
      ]);
    });

    it("drops a run with its posted ids under the holder's token only, leaving other runs (even one whose id starts the same)", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "tok");
      expect(await journal.put(t, "tok", "run-3", snapshot)).toBe(true);
      expect(await journal.posted(t, "tok", "run-3", "k1", "telegram:42:8")).toBe(true);
      expect(await journal.posted(t, "tok", "run-30", "k2", "telegram:42:9")).toBe(true);
      expect(await journal.drop(t, "other", "run-3")).toBe(false);
      expect(await journal.owed(t)).toHaveLength(2);
      expect(await journal.drop(t, "tok", "run-3")).toBe(true);
      expect(await journal.owed(t)).toEqual([
        { runId: "run-30", snapshot: undefined, posted: new Map([["k2", "telegram:42:9"]]) },
      ]);
      expect(await journal.drop(t, "tok", "run-30")).toBe(true);
      expect(await journal.owed(t)).toEqual([]);
    });

    it("drops a run that owes nothing without complaint", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "tok");
      expect(await journal.drop(t, "tok", "never-written")).toBe(true);
      expect(await journal.owed(t)).toEqual([]);
    });

    it("keeps threads apart", async () => {
      const { journal, hold } = await open();
      const [a, b] = [thread(), thread()];
      await hold(a, "tok-a");
      await hold(b, "tok-b");
      expect(await journal.put(a, "tok-b", "run-1", snapshot)).toBe(false);
      expect(await journal.put(a, "tok-a", "run-1", snapshot)).toBe(true);
      expect(await journal.owed(b)).toEqual([]);
      expect(await journal.drop(b, "tok-b", "run-1")).toBe(true);
      expect(await journal.owed(a)).toHaveLength(1);
    });

    it("hands what a lost holder owed to the next holder, who alone may write and clear it", async () => {
      const { journal, hold } = await open();
      const t = thread();
      await hold(t, "first");
      expect(await journal.put(t, "first", "run-1", snapshot)).toBe(true);
      expect(await journal.posted(t, "first", "run-1", "k1", "telegram:42:8")).toBe(true);
      await hold(t, "next");
      expect(await journal.owed(t)).toEqual([
        { runId: "run-1", snapshot, posted: new Map([["k1", "telegram:42:8"]]) },
      ]);
      expect(await journal.put(t, "first", "run-1", { late: true })).toBe(false);
      expect(await journal.posted(t, "first", "run-1", "k2", "telegram:42:9")).toBe(false);
      expect(await journal.drop(t, "first", "run-1")).toBe(false);
      expect((await journal.owed(t))[0]?.snapshot).toEqual(snapshot);
      expect(await journal.drop(t, "next", "run-1")).toBe(true);
      expect(await journal.owed(t)).toEqual([]);
    });
  });
}
