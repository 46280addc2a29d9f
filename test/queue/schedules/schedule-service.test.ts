/**
 * Scheduled prompts on the embedded runtime, with the schedules' time on a manual clock: each
 * occurrence runs once at the right instant (a weekday schedule across a DST change), pausing
 * and resuming, the missed-run policies after a restart, a busy or full thread, quiet answers,
 * and an answer the platform refused that is posted later without a second model call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/agent/logger.js";
import { parseSchedule } from "../../../src/extensions/schedules/index.js";
import { EmbeddedRuntime } from "../../../src/queue/embedded/embedded-runtime.js";
import { FileScheduleStore } from "../../../src/queue/schedules/file-store.js";
import { LocalScheduleTimer } from "../../../src/queue/schedules/local-timer.js";
import { ScheduleService } from "../../../src/queue/schedules/schedule-service.js";
import { DEFAULT_SCHEDULE_SETTINGS, type ScheduleSettings } from "../../../src/queue/schedules/settings.js";
import type { ScheduleRecord } from "../../../src/queue/schedules/types.js";
import type { RenderLog, RunObserver, RunSink, RunSinkFactory } from "../../../src/queue/types.js";
import { ManualClock } from "../../support/manual-clock.js";
import { createGate, ScriptedStream } from "../../support/scripted-stream.js";
import { inbound, resolveTestModel, scriptedFactory } from "../support/harness.js";

const THREAD = "web:sched-thread";
const TARGET = { platform: "web" as const, threadKey: THREAD, channelId: "sched-thread", isDirect: true };
const OWNER = { id: "u1", name: "Ada" };

/** What the chat shows: answers posted (by run), and whether the platform takes posts right now. */
class FakeChat {
  up = true;
  readonly shown: string[] = [];
  readonly owed = new Map<string, string>();
  /** A sink that "posts" the run's last reply at close, through the render log like the renderer. */
  readonly sinks: RunSinkFactory = (_threadKey, runId, log?: RenderLog): RunSink => {
    let text = "";
    return {
      onEvent: (e) => {
        if (e.type === "message_end" && e.message.role === "assistant")
          text = e.message.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
      },
      onNotice: () => {},
      close: async () => {
        if (text === "" || text === "NO_REPLY" || runId.startsWith("notice:"))
          return void (await log?.done());
        await log?.owe({ text });
        if (!this.up) return;
        this.shown.push(text);
        await log?.done();
      },
    };
  };
  /** Finishes what a run owed: posts it once the platform is up. */
  readonly finishOwed = async (_t: string, snapshot: unknown): Promise<boolean> => {
    if (!this.up) return false;
    this.shown.push((snapshot as { text: string }).text);
    return true;
  };
}

interface Setup {
  clock: ManualClock;
  model: ScriptedStream;
  chat: FakeChat;
  runtime: EmbeddedRuntime;
  /** The service and store of the process now (a restart replaces them). */
  service: ScheduleService;
  store: FileScheduleStore;
  dir: string;
  /** A second service over the same files, as after a restart. */
  restart(settings?: Partial<ScheduleSettings>): Promise<ScheduleService>;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function setUp(
  o: { start?: number; settings?: Partial<ScheduleSettings>; inboxCap?: number; model?: ScriptedStream } = {},
): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "sb-sched-"));
  const clock = new ManualClock(o.start ?? Date.UTC(2026, 2, 27, 6, 0));
  const model =
    o.model ??
    new ScriptedStream((call) => {
      const last = call.context.messages.at(-1);
      const text =
        last?.role === "user" && typeof last.content !== "string"
          ? (last.content[0] as { text: string }).text
          : "";
      return { text: `answer to: ${text.split("\n").at(-1)}` };
    });
  const chat = new FakeChat();
  let observer: RunObserver | undefined;
  const runtime = new EmbeddedRuntime({
    dataDir: join(dir, "data"),
    sinks: chat.sinks,
    finishOwed: chat.finishOwed,
    agentFactory: scriptedFactory(model),
    resolveModel: resolveTestModel,
    ...(o.inboxCap ? { inboxCap: o.inboxCap } : {}),
    runObserver: {
      runEnded: (r) => observer?.runEnded(r),
      renderFinished: (t, id) => observer?.renderFinished(t, id),
    },
  });
  await runtime.start();
  const settings = { ...DEFAULT_SCHEDULE_SETTINGS, ...o.settings };
  const make = async (s: ScheduleSettings) => {
    const store = new FileScheduleStore(join(dir, "schedules.json"));
    const timer = new LocalScheduleTimer(clock, (e) => {
      throw e;
    });
    const service = new ScheduleService({ store, timer, runtime, settings: s, clock, logger: silentLogger });
    observer = service;
    await service.start();
    open.push(async () => {
      await service.close();
      await store.close();
    });
    return { service, store };
  };
  open.push(async () => {
    await runtime.stop({ graceMs: 1000 });
    rmSync(dir, { recursive: true, force: true });
  });
  const first = await make(settings);
  const setup: Setup = {
    clock,
    model,
    chat,
    runtime,
    dir,
    ...first,
    async restart(more = {}) {
      await setup.service.close();
      await setup.store.close();
      const next = await make({ ...settings, ...more });
      setup.service = next.service;
      setup.store = next.store;
      return next.service;
    },
  };
  return setup;
}

function parsed(text: string, now: number, tz = "UTC") {
  const p = parseSchedule(text, now, { defaultTimeZone: tz, minIntervalMs: 60_000 });
  if (!p.ok) throw new Error(p.error);
  return p.schedule;
}

async function create(s: Setup, text: string, tz = "UTC"): Promise<ScheduleRecord> {
  const out = await s.service.create(TARGET, OWNER, parsed(text, s.clock.now(), tz));
  if (!out.ok) throw new Error(out.error);
  return out.record;
}

/** Waits (bounded, polling the store) until `check` holds for the schedule's record. */
async function settled(
  s: Setup,
  id: string,
  check: (r: ScheduleRecord | undefined) => boolean,
): Promise<ScheduleRecord | undefined> {
  const end = Date.now() + 20_000;
  for (;;) {
    const r = await s.store.get(id);
    if (check(r)) return r;
    if (Date.now() > end) throw new Error(`schedule ${id} never settled: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Moves the schedules' clock to `at`, letting each occurrence on the way run to its end. */
async function advanceTo(s: Setup, at: number, id: string): Promise<void> {
  while (s.clock.now() < at) {
    const before = (await s.store.get(id))?.runs ?? 0;
    const step = Math.min(at - s.clock.now(), 60 * 60_000);
    await s.clock.advance(step);
    const r = await s.store.get(id);
    if ((r?.runs ?? 0) > before) await settled(s, id, (x) => x?.lastRun?.status !== "queued");
  }
}

describe("scheduled prompts (embedded, manual clock)", () => {
  it("fires a weekday 09:00 Europe/Berlin schedule at the right instants across the spring DST change, each once", async () => {
    // Friday 2026-03-27 06:00 UTC; Berlin moves to summer time on Sunday the 29th.
    const s = await setUp();
    const r = await create(s, "every weekday 09:00 Europe/Berlin post the standup", "UTC");
    const fired: number[] = [];
    for (const end of [Date.UTC(2026, 2, 27, 12), Date.UTC(2026, 2, 30, 12), Date.UTC(2026, 2, 31, 12)]) {
      await advanceTo(s, end, r.id);
      const rec = await s.store.get(r.id);
      if (rec?.lastRun) fired.push(rec.lastRun.occurrence);
    }
    // 09:00 CET is 08:00 UTC; 09:00 CEST is 07:00 UTC; nothing on the weekend.
    expect(fired).toEqual([Date.UTC(2026, 2, 27, 8), Date.UTC(2026, 2, 30, 7), Date.UTC(2026, 2, 31, 7)]);
    expect(s.model.calls).toHaveLength(3);
    expect(s.chat.shown).toEqual(Array(3).fill("answer to: post the standup"));
    const rec = await s.store.get(r.id);
    expect(rec).toMatchObject({ runs: 3, missed: 0, lastRun: { status: "answered", delivery: "shown" } });
  });

  it("marks the prompt as scheduled in the message the session keeps, from the schedule's owner", async () => {
    const s = await setUp();
    const r = await create(s, "in 5m check the deploy");
    await advanceTo(s, s.clock.now() + 5 * 60_000, r.id);
    const text = JSON.stringify(s.model.calls[0]?.context.messages.at(-1));
    expect(text).toContain(`[Scheduled prompt ${r.id} (`);
    expect(text).toContain("answer exactly NO_REPLY");
    expect(text).toContain("check the deploy");
    // A one-off is done once its answer is shown.
    expect(await settled(s, r.id, (x) => x === undefined)).toBeUndefined();
  });

  it("runs each occurrence once however often it is fired", async () => {
    const s = await setUp();
    const r = await create(s, "every 10m ping");
    const occurrence = r.spec.kind === "every" ? r.spec.startAt : 0;
    await s.clock.advance(occurrence - s.clock.now() - 1);
    await Promise.all(Array.from({ length: 8 }, () => s.service.fire(r.id, occurrence)));
    await settled(s, r.id, (x) => x?.lastRun?.status === "answered");
    await s.service.fire(r.id, occurrence);
    await s.service.fire(r.id, occurrence - 600_000);
    await s.runtime.deliver(inbound(THREAD, "hello"));
    await s.model.waitForCalls(2);
    expect(s.model.calls.map((c) => JSON.stringify(c.context.messages.at(-1)).includes("ping"))).toEqual([
      true,
      false,
    ]);
    expect((await s.store.get(r.id))?.runs).toBe(1);
  });

  it("fires nothing while paused and the next occurrence after a resume", async () => {
    const s = await setUp();
    const r = await create(s, "every 10m ping");
    await s.service.pause(r.id, THREAD);
    await s.clock.advance(35 * 60_000);
    expect(s.model.calls).toHaveLength(0);
    const resumed = await s.service.resume(r.id, THREAD);
    expect(resumed?.paused).toBe(false);
    await advanceTo(s, s.clock.now() + 10 * 60_000, r.id);
    expect(s.model.calls).toHaveLength(1);
    expect(await s.store.get(r.id)).toMatchObject({ runs: 1, missed: 0 });
    // Another thread cannot touch it.
    expect(await s.service.pause(r.id, "web:other")).toBeUndefined();
    expect(await s.service.remove(r.id, "web:other")).toBe(false);
  });

  it("after a restart, runs a missed occurrence once (policy once) and counts the rest as missed", async () => {
    const s = await setUp();
    const r = await create(s, "every 1h hourly report");
    await s.service.close();
    // Down for 5½ hours: 5 occurrences passed.
    await s.clock.advance(5.5 * 60 * 60_000);
    const service = await s.restart({ missed: "once" });
    await settled(s, r.id, (x) => x?.lastRun?.status === "answered");
    expect(s.model.calls).toHaveLength(1);
    expect(await s.store.get(r.id)).toMatchObject({ runs: 1, missed: 4 });
    expect(service.nextOf((await s.store.get(r.id)) as ScheduleRecord, 1)[0]).toBeGreaterThan(s.clock.now());
  });

  it("after a restart, skips missed occurrences (policy skip) and runs the next on time", async () => {
    const s = await setUp();
    const r = await create(s, "every 1h hourly report");
    await s.service.close();
    await s.clock.advance(3.5 * 60 * 60_000);
    await s.restart({ missed: "skip" });
    const after = await settled(s, r.id, (x) => x?.lastRun?.status === "skipped");
    expect(after).toMatchObject({ runs: 0, missed: 3 });
    expect(s.model.calls).toHaveLength(0);
    await advanceTo(s, s.clock.now() + 60 * 60_000, r.id);
    expect(s.model.calls).toHaveLength(1);
  });

  it("skips an occurrence when the thread's inbox is full, and says so on the schedule", async () => {
    const gate = createGate();
    const model = new ScriptedStream([{ content: [gate, { type: "text", text: "slow" }] }]).respondWith(
      () => "ok",
    );
    const s = await setUp({ inboxCap: 1, model });
    const r = await create(s, "every 10m ping");
    await s.runtime.deliver(inbound(THREAD, "first"));
    await gate.reached;
    await s.runtime.deliver(inbound(THREAD, "second"), "followUp");
    await s.clock.advance(10 * 60_000);
    const rec = await settled(s, r.id, (x) => x?.lastRun?.status === "skipped");
    expect(rec?.lastRun?.detail).toContain("full");
    gate.release();
  });

  it("skips an occurrence while the thread is busy when ifBusy is skip", async () => {
    const gate = createGate();
    const model = new ScriptedStream([{ content: [gate, { type: "text", text: "slow" }] }]).respondWith(
      () => "ok",
    );
    const s = await setUp({ model, settings: { ifBusy: "skip" } });
    const r = await create(s, "every 10m ping");
    await s.runtime.deliver(inbound(THREAD, "first"));
    await gate.reached;
    await s.clock.advance(10 * 60_000);
    const rec = await settled(s, r.id, (x) => x?.lastRun?.status === "skipped");
    expect(rec?.lastRun?.detail).toBe("the conversation was busy");
    gate.release();
    await s.model.waitForCalls(1);
    expect(s.model.calls).toHaveLength(1);
  });

  it("posts nothing for a quiet answer and records it as quiet", async () => {
    const model = new ScriptedStream(() => "NO_REPLY");
    const s = await setUp({ model });
    const r = await create(s, "every 10m anything new?");
    await advanceTo(s, s.clock.now() + 10 * 60_000, r.id);
    expect(await s.store.get(r.id)).toMatchObject({ lastRun: { status: "quiet", delivery: "none" } });
    expect(s.chat.shown).toEqual([]);
  });

  it("retries an answer the platform refused without a second model call", async () => {
    // Waits of their own lengths, so the test can tell the retry's sleep from the timer's.
    const s = await setUp({ settings: { deliveryRetryMs: [61_000, 62_000, 63_000] } });
    const r = await create(s, "every 1h report");
    s.chat.up = false;
    await advanceTo(s, s.clock.now() + 60 * 60_000, r.id);
    expect(await s.store.get(r.id)).toMatchObject({ lastRun: { status: "answered", delivery: "owed" } });
    // First retry: still down.
    await s.clock.sleeping(61_000);
    await s.clock.advance(61_000);
    s.chat.up = true;
    await s.clock.sleeping(62_000);
    await s.clock.advance(62_000);
    await settled(s, r.id, (x) => x?.lastRun?.delivery === "shown");
    expect(s.chat.shown).toEqual(["answer to: report"]);
    expect(s.model.calls).toHaveLength(1);
  });

  it("pauses a schedule whose answers cannot be posted after every retry", async () => {
    const s = await setUp({ settings: { deliveryRetryMs: [61_000, 62_000] } });
    const r = await create(s, "every 1h report");
    s.chat.up = false;
    await advanceTo(s, s.clock.now() + 60 * 60_000, r.id);
    await s.clock.sleeping(61_000);
    await s.clock.advance(61_000);
    await s.clock.sleeping(62_000);
    await s.clock.advance(62_000);
    const rec = await settled(s, r.id, (x) => x?.paused === true);
    expect(rec?.pausedReason).toContain("could not be posted");
    await s.clock.advance(2 * 60 * 60_000);
    expect(s.model.calls).toHaveLength(1);
  });

  it("keeps the config's schedules in step: history kept across a restart and a changed prompt, removed when unlisted", async () => {
    const s = await setUp();
    await s.service.putConfigured("standup", TARGET, parsed("every 1h post the standup", s.clock.now()));
    await advanceTo(s, s.clock.now() + 60 * 60_000, "standup");
    expect(await s.store.get("standup")).toMatchObject({ origin: "config", runs: 1 });
    // Read again at a later start: the same schedule, not a new one (an interval's start moved on).
    await s.service.putConfigured("standup", TARGET, parsed("every 1h post the standup", s.clock.now()));
    await s.service.putConfigured(
      "standup",
      TARGET,
      parsed("every 1h post the standup and the on-call", s.clock.now()),
    );
    expect(await s.store.get("standup")).toMatchObject({
      runs: 1,
      prompt: "post the standup and the on-call",
    });
    // Config intervals count from multiples of themselves, so every process arms the same instants.
    const spec = (await s.store.get("standup"))?.spec;
    expect(spec?.kind === "every" ? spec.startAt % 3_600_000 : -1).toBe(0);
    await s.service.pruneConfigured(new Set());
    expect(await s.store.get("standup")).toBeUndefined();
  });

  it("refuses a schedule past the per-thread limit", async () => {
    const s = await setUp({ settings: { limits: { perThread: 2, perUser: 10 } } });
    await create(s, "every 1h a");
    await create(s, "every 1h b");
    const out = await s.service.create(TARGET, OWNER, parsed("every 1h c", s.clock.now()));
    expect(out).toMatchObject({ ok: false });
    expect(out.ok ? "" : out.error).toContain("2 schedules already");
  });
});
