/**
 * The `ScheduleStore` contract, run against every implementation (schedule-store.test.ts): records
 * kept and listed oldest first, the limits checked in the same step that adds (chat schedules
 * only), the occurrence fence that lets each occurrence run once however many callers fire it,
 * the run updates, pauses and removals. `make()` opens an empty store of its own for each test.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Platform } from "../../../src/adapters/types.js";
import type {
  ScheduleOrigin,
  ScheduleRecord,
  ScheduleRun,
  ScheduleStore,
} from "../../../src/queue/schedules/types.js";
import { subjectPerTest } from "../../support/contract-subject.js";

export interface ScheduleStoreSubject {
  store: ScheduleStore;
  close(): Promise<void>;
}

/** Limits no test reaches unless it means to. */
const WIDE = { perThread: 100, perUser: 100 };
const T0 = 1_767_225_600_000;

const thread = () => `telegram:-100${randomUUID().slice(0, 8)}:0`;
const person = () => randomUUID().slice(0, 8);

interface Shape {
  id?: string;
  origin?: ScheduleOrigin;
  threadKey?: string;
  platform?: Platform;
  ownerId?: string;
  createdAt?: number;
  prompt?: string;
}

/** A schedule as `/schedule` makes one (a chat schedule of a fresh thread and person by default). */
function schedule(s: Shape = {}): ScheduleRecord {
  return {
    id: s.id ?? randomUUID(),
    origin: s.origin ?? "chat",
    target: {
      platform: s.platform ?? "telegram",
      threadKey: s.threadKey ?? thread(),
      channelId: "-1001",
      isDirect: false,
    },
    owner: { id: s.ownerId ?? person(), name: "Ada Lövelace" },
    spec: { kind: "cron", pattern: "0 9 * * 1-5", tz: "Europe/Berlin" },
    prompt: s.prompt ?? "Summarize yesterday's tickets / in two lines — ✓",
    description: "weekdays at 09:00",
    createdAt: s.createdAt ?? T0,
    paused: false,
    missed: 0,
    runs: 0,
  };
}

const run = (occurrence: number, over: Partial<ScheduleRun> = {}): ScheduleRun => ({
  occurrence,
  firedAt: occurrence + 7,
  status: "queued",
  runId: `run-${occurrence}`,
  delivery: "pending",
  ...over,
});

const ids = (records: ScheduleRecord[]) => records.map((r) => r.id);

export function scheduleStoreContract(name: string, make: () => Promise<ScheduleStoreSubject>): void {
  describe(`ScheduleStore contract: ${name}`, () => {
    const open = subjectPerTest(make);

    it("knows no schedule before one is made", async () => {
      const { store } = await open();
      expect(await store.get("nope")).toBeUndefined();
      expect(await store.listByThread(thread())).toEqual([]);
      expect(await store.listAll()).toEqual([]);
      expect(await store.findByRun(thread(), "run-1")).toBeUndefined();
    });

    it("creates a schedule and gives it back as written", async () => {
      const { store } = await open();
      const r = schedule();
      expect(await store.create(r, WIDE)).toEqual({ ok: true });
      expect(await store.get(r.id)).toEqual(r);
      expect(await store.listByThread(r.target.threadKey)).toEqual([r]);
      expect(await store.listAll()).toEqual([r]);
    });

    it("lists a thread's schedules and every schedule oldest first, by createdAt and then by id", async () => {
      const { store } = await open();
      const t = thread();
      const late = schedule({ id: "c", threadKey: t, createdAt: T0 + 3 });
      const first = schedule({ id: "z", threadKey: t, createdAt: T0 + 1 });
      const tieB = schedule({ id: "b", threadKey: t, createdAt: T0 + 2 });
      const tieA = schedule({ id: "a", threadKey: t, createdAt: T0 + 2 });
      const elsewhere = schedule({ id: "y", createdAt: T0 + 2 });
      for (const r of [late, first, tieB, elsewhere, tieA])
        expect((await store.create(r, WIDE)).ok).toBe(true);
      expect(ids(await store.listByThread(t))).toEqual(["z", "a", "b", "c"]);
      expect(ids(await store.listAll())).toEqual(["z", "a", "b", "y", "c"]);
    });

    it("refuses an id that exists before it looks at the limits, and leaves the record as it was", async () => {
      const { store } = await open();
      const r = schedule();
      expect(await store.create(r, WIDE)).toEqual({ ok: true });
      const again = { ...r, prompt: "something else" };
      expect(await store.create(again, WIDE)).toEqual({ ok: false, reason: "exists" });
      expect(await store.create(again, { perThread: 0, perUser: 0 })).toEqual({
        ok: false,
        reason: "exists",
      });
      expect(await store.create({ ...again, origin: "config" }, WIDE)).toEqual({
        ok: false,
        reason: "exists",
      });
      expect(await store.get(r.id)).toEqual(r);
    });

    it("stops a thread at its limit of chat schedules; config schedules neither count nor are stopped", async () => {
      const { store } = await open();
      const t = thread();
      const limits = { perThread: 2, perUser: 100 };
      await store.put(schedule({ threadKey: t, origin: "config" }));
      expect(await store.create(schedule({ threadKey: t, origin: "config" }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ threadKey: t }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ threadKey: t }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ threadKey: t }), limits)).toEqual({
        ok: false,
        reason: "thread",
        limit: 2,
      });
      expect(await store.create(schedule({ threadKey: t, origin: "config" }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule(), limits)).toEqual({ ok: true });
      expect(await store.listByThread(t)).toHaveLength(5);
    });

    it("stops a person at their limit over every thread; the same id on another platform is another person", async () => {
      const { store } = await open();
      const me = person();
      const limits = { perThread: 100, perUser: 2 };
      await store.put(schedule({ ownerId: me, origin: "config" }));
      expect(await store.create(schedule({ ownerId: me, origin: "config" }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: me }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: me }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: me }), limits)).toEqual({
        ok: false,
        reason: "user",
        limit: 2,
      });
      expect(
        await store.create(schedule({ ownerId: me, platform: "discord", threadKey: "discord:1:2" }), limits),
      ).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: person() }), limits)).toEqual({ ok: true });
    });

    it("counts the thread's limit before the person's", async () => {
      const { store } = await open();
      const [t, me] = [thread(), person()];
      expect(await store.create(schedule({ threadKey: t, ownerId: me }), WIDE)).toEqual({ ok: true });
      expect(
        await store.create(schedule({ threadKey: t, ownerId: me }), { perThread: 1, perUser: 1 }),
      ).toEqual({
        ok: false,
        reason: "thread",
        limit: 1,
      });
    });

    it("frees a schedule's place in both limits when it is removed", async () => {
      const { store } = await open();
      const [t, me] = [thread(), person()];
      const limits = { perThread: 1, perUser: 1 };
      const first = schedule({ threadKey: t, ownerId: me });
      expect(await store.create(first, limits)).toEqual({ ok: true });
      expect((await store.create(schedule({ threadKey: t }), limits)).ok).toBe(false);
      expect((await store.create(schedule({ ownerId: me }), limits)).ok).toBe(false);
      expect(await store.remove(first.id)).toBe(true);
      expect(await store.create(schedule({ threadKey: t }), limits)).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: me }), limits)).toEqual({ ok: true });
    });

    it("never passes a limit when many creates race for the last places", async () => {
      const { store } = await open();
      const [t, me] = [thread(), person()];
      const byUser = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.create(schedule({ ownerId: me }), { perThread: 100, perUser: 5 }),
        ),
      );
      expect(byUser.filter((o) => o.ok)).toHaveLength(5);
      expect(byUser.filter((o) => !o.ok && o.reason === "user")).toHaveLength(15);
      const inThread = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.create(schedule({ threadKey: t }), { perThread: 3, perUser: 100 }),
        ),
      );
      expect(inThread.filter((o) => o.ok)).toHaveLength(3);
      expect(await store.listByThread(t)).toHaveLength(3);
      expect(await store.listAll()).toHaveLength(8);
    });

    it("puts a record without limits, and replaces one whole by its id", async () => {
      const { store } = await open();
      const t = thread();
      const r = schedule({ threadKey: t });
      expect(await store.create(r, { perThread: 1, perUser: 1 })).toEqual({ ok: true });
      const over = schedule({ threadKey: t, ownerId: r.owner.id });
      await store.put(over);
      expect(ids(await store.listByThread(t)).sort()).toEqual([r.id, over.id].sort());
      const replaced: ScheduleRecord = {
        ...r,
        prompt: "new prompt",
        spec: { kind: "once", at: T0 + 60_000, tz: "UTC" },
        paused: true,
        pausedReason: "thread gone",
        lastOccurrence: T0,
        lastRun: run(T0, { status: "answered", delivery: "shown" }),
        runs: 4,
        missed: 1,
      };
      await store.put(replaced);
      expect(await store.get(r.id)).toEqual(replaced);
      const { pausedReason: _, lastRun: __, lastOccurrence: ___, ...plain } = replaced;
      await store.put(plain);
      expect(await store.get(r.id)).toEqual(plain);
      expect(await store.listByThread(t)).toHaveLength(2);
    });

    it("lists and counts a put record under its new thread and owner only", async () => {
      const { store } = await open();
      const [a, b, me, you] = [thread(), thread(), person(), person()];
      const one = { perThread: 1, perUser: 1 };
      const r = schedule({ threadKey: a, ownerId: me });
      expect(await store.create(r, one)).toEqual({ ok: true });
      const moved = schedule({ id: r.id, threadKey: b, ownerId: you });
      await store.put(moved);
      expect(await store.listByThread(a)).toEqual([]);
      expect(await store.listByThread(b)).toEqual([moved]);
      expect(await store.create(schedule({ threadKey: a }), one)).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: me }), one)).toEqual({ ok: true });
      expect(await store.create(schedule({ ownerId: you }), one)).toEqual({
        ok: false,
        reason: "user",
        limit: 1,
      });
      await store.put({ ...moved, origin: "config" });
      expect(await store.create(schedule({ ownerId: you }), one)).toEqual({ ok: true });
      expect((await store.create(schedule({ threadKey: b }), one)).ok).toBe(true);
    });

    it("claims each occurrence once, newest only: gives the record as it was and counts runs, skips and misses", async () => {
      const { store } = await open();
      const r = schedule();
      await store.create(r, WIDE);
      expect(await store.claimOccurrence(r.id, 100, run(100), 0)).toEqual(r);
      const first = { ...r, lastOccurrence: 100, lastRun: run(100), runs: 1 };
      expect(await store.get(r.id)).toEqual(first);
      expect(await store.claimOccurrence(r.id, 100, run(100), 0)).toBeUndefined();
      expect(await store.claimOccurrence(r.id, 99, run(99), 0)).toBeUndefined();
      expect(await store.get(r.id)).toEqual(first);
      expect(await store.claimOccurrence(r.id, 200, run(200), 2)).toEqual(first);
      const second = { ...r, lastOccurrence: 200, lastRun: run(200), runs: 2, missed: 2 };
      expect(await store.get(r.id)).toEqual(second);
      const skipped = run(300, { status: "skipped", detail: "thread busy", delivery: "none" });
      expect(await store.claimOccurrence(r.id, 300, skipped, 1)).toEqual(second);
      expect(await store.get(r.id)).toEqual({
        ...r,
        lastOccurrence: 300,
        lastRun: skipped,
        runs: 2,
        missed: 3,
      });
    });

    it("claims nothing of a paused schedule or a missing one", async () => {
      const { store } = await open();
      const r = schedule();
      await store.create(r, WIDE);
      await store.setPaused(r.id, true);
      expect(await store.claimOccurrence(r.id, 100, run(100), 0)).toBeUndefined();
      expect(await store.get(r.id)).toEqual({ ...r, paused: true });
      await store.setPaused(r.id, false);
      expect(await store.claimOccurrence(r.id, 100, run(100), 0)).toEqual(r);
      expect(await store.claimOccurrence("missing", 100, run(100), 0)).toBeUndefined();
      expect(await store.get("missing")).toBeUndefined();
    });

    it("lets exactly one of many simultaneous claims of an occurrence through", async () => {
      const { store } = await open();
      const r = schedule();
      await store.create(r, WIDE);
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.claimOccurrence(r.id, 500, run(500, { runId: `r${i}` }), 1),
        ),
      );
      expect(claims.filter((c) => c !== undefined)).toEqual([r]);
      const after = await store.get(r.id);
      expect(after).toMatchObject({ lastOccurrence: 500, runs: 1, missed: 1 });
      const winner = claims.findIndex((c) => c !== undefined);
      expect(after?.lastRun?.runId).toBe(`r${winner}`);
    });

    it("never goes back when claims of different occurrences race", async () => {
      const { store } = await open();
      const r = schedule();
      await store.create(r, WIDE);
      const occurrences = Array.from({ length: 20 }, (_, i) => 1000 + i);
      const claims = await Promise.all(occurrences.map((o) => store.claimOccurrence(r.id, o, run(o), 0)));
      const won = occurrences.filter((_, i) => claims[i] !== undefined);
      expect(won).toContain(1019);
      const after = await store.get(r.id);
      expect(after).toMatchObject({ lastOccurrence: 1019, runs: won.length, lastRun: run(1019) });
    });

    it("updates the run of the schedule's current occurrence only", async () => {
      const { store } = await open();
      const r = schedule();
      await store.create(r, WIDE);
      expect(await store.updateRun(r.id, 100, { status: "answered" })).toBe(false);
      await store.claimOccurrence(r.id, 100, run(100), 0);
      expect(
        await store.updateRun(r.id, 100, { status: "answered", delivery: "shown", deliveredAt: T0 }),
      ).toBe(true);
      const answered = run(100, { status: "answered", delivery: "shown", deliveredAt: T0 });
      expect((await store.get(r.id))?.lastRun).toEqual(answered);
      expect(await store.updateRun(r.id, 100, { detail: undefined, delivery: "owed" })).toBe(true);
      expect((await store.get(r.id))?.lastRun).toEqual({ ...answered, delivery: "owed" });
      expect(await store.updateRun(r.id, 99, { status: "failed" })).toBe(false);
      await store.claimOccurrence(r.id, 200, run(200), 0);
      expect(await store.updateRun(r.id, 100, { status: "failed" })).toBe(false);
      expect((await store.get(r.id))?.lastRun).toEqual(run(200));
      expect(await store.updateRun("missing", 200, { status: "failed" })).toBe(false);
    });

    it("pauses with the runtime's reason or with none, and resumes without one", async () => {
      const { store } = await open();
      const r = schedule();
      await store.create(r, WIDE);
      const byRuntime = { ...r, paused: true, pausedReason: "the thread is gone" };
      expect(await store.setPaused(r.id, true, "the thread is gone")).toEqual(byRuntime);
      expect(await store.get(r.id)).toEqual(byRuntime);
      expect(await store.setPaused(r.id, true)).toEqual({ ...r, paused: true });
      await store.setPaused(r.id, true, "again");
      const resumed = await store.setPaused(r.id, false);
      expect(resumed).toEqual(r);
      expect(resumed && "pausedReason" in resumed).toBe(false);
      expect(await store.get(r.id)).toEqual(r);
      expect(await store.setPaused("missing", true, "why")).toBeUndefined();
    });

    it("finds a schedule of a thread by its last run's id", async () => {
      const { store } = await open();
      const t = thread();
      const [a, b] = [schedule({ threadKey: t }), schedule({ threadKey: t })];
      await store.create(a, WIDE);
      await store.create(b, WIDE);
      await store.claimOccurrence(a.id, 100, run(100, { runId: "x" }), 0);
      await store.claimOccurrence(b.id, 100, run(100, { runId: "y" }), 0);
      expect((await store.findByRun(t, "x"))?.id).toBe(a.id);
      expect((await store.findByRun(t, "y"))?.id).toBe(b.id);
      expect(await store.findByRun(thread(), "x")).toBeUndefined();
      expect(await store.findByRun(t, "z")).toBeUndefined();
      await store.claimOccurrence(a.id, 200, run(200, { runId: "x2" }), 0);
      expect(await store.findByRun(t, "x")).toBeUndefined();
      expect(await store.findByRun(t, "x2")).toEqual(await store.get(a.id));
    });

    it("removes a record from every list, once", async () => {
      const { store } = await open();
      const t = thread();
      const [a, b] = [schedule({ threadKey: t }), schedule({ threadKey: t, createdAt: T0 + 1 })];
      await store.create(a, WIDE);
      await store.create(b, WIDE);
      await store.claimOccurrence(a.id, 100, run(100), 0);
      expect(await store.remove(a.id)).toBe(true);
      expect(await store.get(a.id)).toBeUndefined();
      expect(await store.listByThread(t)).toEqual([b]);
      expect(await store.listAll()).toEqual([b]);
      expect(await store.findByRun(t, "run-100")).toBeUndefined();
      expect(await store.remove(a.id)).toBe(false);
      expect(await store.claimOccurrence(a.id, 200, run(200), 0)).toBeUndefined();
      expect(await store.create(a, WIDE)).toEqual({ ok: true });
    });

    it("keeps a record exactly, field for field, through claims, run updates and pauses", async () => {
      const { store } = await open();
      const r: ScheduleRecord = {
        ...schedule({ prompt: 'Quote "this" \\ and that\n— ünïcode ✓ 🎉' }),
        spec: { kind: "every", everyMs: 86_400_000, startAt: T0 + 123, tz: "America/Argentina/Buenos_Aires" },
        target: {
          platform: "slack",
          threadKey: "slack:T1:C2:1767225600.000100",
          channelId: "C2",
          isDirect: true,
        },
      };
      await store.create(r, WIDE);
      await store.claimOccurrence(r.id, T0 + 86_400_123, run(T0 + 86_400_123), 3);
      await store.updateRun(r.id, T0 + 86_400_123, { status: "failed", detail: "model: 529 overloaded" });
      await store.setPaused(r.id, true, "thread gone");
      await store.setPaused(r.id, false);
      expect(await store.get(r.id)).toEqual({
        ...r,
        lastOccurrence: T0 + 86_400_123,
        lastRun: run(T0 + 86_400_123, { status: "failed", detail: "model: 529 overloaded" }),
        runs: 1,
        missed: 3,
      });
    });

    it("keeps what it was given, not the caller's object, and gives copies", async () => {
      const { store } = await open();
      const r = schedule();
      const kept = structuredClone(r);
      await store.create(r, WIDE);
      r.prompt = "changed after";
      r.target.threadKey = "elsewhere";
      const read = await store.get(r.id);
      if (read) read.owner.id = "someone else";
      const listed = await store.listAll();
      if (listed[0]) listed[0].paused = true;
      expect(await store.get(r.id)).toEqual(kept);
    });
  });
}
