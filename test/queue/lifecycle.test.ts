/**
 * Worker lifecycle on Redis: graceful hand-over on shutdown (at a checkpoint, or by abort after
 * the grace period), a holder that loses its lease, the sweeper that repairs a lost wake, a stop
 * that never uses a closed connection, idle eviction of cached agents, and the signal handlers.
 * Everything runs on a test clock: time moves only when a test advances it, and the tests wait on
 * lease events and gates. The lease TTL is longer than any test runs, so Redis never expires a
 * lease on its own clock unless a test says so.
 */
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { createAssistantMessage } from "../../src/agent/llm/usage.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RedisRuntime, type RedisRuntimeOptions } from "../../src/queue/redis/redis-runtime.js";
import { RedisThreadState } from "../../src/queue/redis/redis-thread-state.js";
import { installShutdownHandlers } from "../../src/queue/shutdown.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { AgentFactory } from "../../src/queue/types.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/queue/worker/recovery.js";
import { RuntimeKeys } from "../../src/redis-keys.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectRedis, redisUrl, uniquePrefix } from "../support/redis.js";
import {
  createGate,
  type Gate,
  lastUserText,
  ScriptedStream,
  scriptedModel,
} from "../support/scripted-stream.js";
import {
  gatedTool,
  inbound,
  resolveTestModel,
  scriptedFactory,
  sessionMessages,
  type ToolSeen,
  textOf,
  waitIdle,
} from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

/** Calls the `slow` tool for a user message that says "tool", then acknowledges. */
function toolThenAck(): ScriptedStream {
  return new ScriptedStream((call) => {
    const last = call.context.messages.at(-1);
    if (last?.role === "user" && lastUserText(call).includes("tool"))
      return { toolCalls: [{ name: "slow", args: {} }] };
    return `ack ${lastUserText(call)}`;
  });
}

/** The first tenure of a new thread: one meta read; the session it creates is built, not read back. */
const EXPECTED_FIRST_TENURE_READS = ["getThreadMeta"];

function lines(messages: { role: string }[]): string[] {
  return messages.map((m) => `${m.role}:${textOf(m as Parameters<typeof textOf>[0])}`);
}

describe("worker lifecycle (Redis)", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  const gates: Gate[] = [];
  afterEach(async () => {
    for (const g of gates.splice(0)) g.release();
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const TTL = 60_000;

  function setup() {
    const redis = connectRedis();
    const prefix = uniquePrefix();
    const store = new RedisSessionStore({ redis, prefix });
    const sinks = new RecordingSinks();
    const clock = new ManualClock();
    const leases = new LeaseLog();
    const runtimes: RedisRuntime[] = [];
    const make = (factory: AgentFactory, extra: Partial<RedisRuntimeOptions> = {}) => {
      const r = new RedisRuntime({
        redis,
        prefix,
        store,
        sinks: sinks.factory,
        agentFactory: factory,
        resolveModel: resolveTestModel,
        leaseTtlMs: TTL,
        controlPollMs: 7_000,
        sweepIntervalMs: 3_600_000,
        clock,
        onLease: leases.record,
        ...extra,
      });
      runtimes.push(r);
      return r;
    };
    cleanups.push(async () => {
      for (const r of runtimes) {
        const stopping = r.stop({ graceMs: 200 });
        await clock.advance(200);
        await stopping;
      }
      await redis.quit();
    });
    return {
      redis,
      prefix,
      store,
      clock,
      leases,
      make,
      watch: (runtime: RedisRuntime) => ({ runtime, leases }),
    };
  }

  it("creates a thread's first session and a /new session under the holder's lease (fenced)", async () => {
    const { redis, prefix, store, make, watch } = setup();
    const fences: { call: string; key?: string; token?: string }[] = [];
    const watched = Object.create(store) as RedisSessionStore;
    watched.startSession = (threadKey, options) => {
      fences.push({ call: "startSession", key: options?.fence?.key, token: options?.fence?.token });
      return store.startSession(threadKey, options);
    };
    watched.newSession = (threadKey, options) => {
      fences.push({ call: "newSession", key: options?.fence?.key, token: options?.fence?.token });
      return store.newSession(threadKey, options);
    };
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const r = make(scriptedFactory(stream), { store: watched });
    await r.start();
    const t = "web:fenced-sessions";
    await r.deliver(inbound(t, "hello"));
    await waitIdle(watch(r), t);
    await r.control(t, { type: "newSession" });
    await waitIdle(watch(r), t);
    const tokens = watch(r)
      .leases.events.filter((e) => e.threadKey === t && e.type === "acquired")
      .map((e) => e.token);
    const key = new RuntimeKeys(prefix).lease(t);
    expect(fences).toEqual([
      { call: "startSession", key, token: tokens[0] },
      { call: "newSession", key, token: tokens[1] },
    ]);
    // A stale holder's /new writes nothing.
    await redis.set(key, "someone-else", "PX", TTL);
    await expect(store.newSession(t, { fence: { key, token: tokens[1] as string } })).rejects.toThrow(
      /lease/i,
    );
    expect(await store.listSessions(t)).toHaveLength(2);
  });

  it("a tenure reads the thread meta once and does not read back the session it created", async () => {
    const { store, make, watch } = setup();
    const calls: string[] = [];
    const watched = Object.create(store) as RedisSessionStore;
    watched.getThreadMeta = (threadKey) => {
      calls.push("getThreadMeta");
      return store.getThreadMeta(threadKey);
    };
    watched.readBranch = (threadKey, sessionId, leafId) => {
      calls.push("readBranch");
      return store.readBranch(threadKey, sessionId, leafId);
    };
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const r = make(scriptedFactory(stream), { store: watched });
    await r.start();
    const t = "web:meta-once";
    // The end of the tenure, not `waitIdle`: its status polls read the meta too.
    const released = () => watch(r).leases.next((e) => e.threadKey === t && e.type === "released");
    let end = released();
    await r.deliver(inbound(t, "hello"));
    await end;
    expect(calls).toEqual(EXPECTED_FIRST_TENURE_READS);
    // The next tenure reuses the parked agent: one meta read (its leaf still matches), no branch read.
    calls.length = 0;
    end = released();
    await r.deliver(inbound(t, "again"));
    await end;
    expect(calls).toEqual(["getThreadMeta"]);
    expect(stream.calls.map((c) => lastUserText(c))).toEqual(["hello", "again"]);
  });

  it("on shutdown a run stops at its next checkpoint and another worker finishes it", async () => {
    const { store, clock, leases, make, watch } = setup();
    const gate = createGate();
    gates.push(gate);
    const streamA = toolThenAck();
    const streamB = toolThenAck();
    const a = make(scriptedFactory(streamA, [gatedTool("slow", () => gate)]));
    await a.start();
    const t = "web:handover";
    await a.deliver(inbound(t, "use the tool"));
    await gate.reached;
    const b = make(scriptedFactory(streamB, [gatedTool("slow", () => undefined)]));
    await b.start();
    const startedAt = clock.now();
    const stopping = a.stop({ graceMs: 10_000 });
    gate.release(); // the tool finishes; the checkpoint after it hands the thread over
    await stopping;
    // Handed over at the checkpoint, not by the grace period: the clock never moved.
    expect(clock.now()).toBe(startedAt);
    expect(leases.typesOf(t).slice(0, 4)).toEqual(["acquired", "releasing", "handoff", "acquired"]);
    await waitIdle(watch(b), t);
    expect(lines(await sessionMessages(store, t))).toEqual([
      "user:use the tool",
      "assistant:",
      "toolResult:slow done",
      "assistant:ack use the tool",
    ]);
    expect(streamA.calls).toHaveLength(1);
    expect(streamB.calls).toHaveLength(1);
  });

  it("after the grace period a running tool is aborted and the next worker closes its call as interrupted", async () => {
    const { store, clock, make, watch } = setup();
    const gate = createGate();
    gates.push(gate);
    const seen: ToolSeen = { runs: 0 };
    const a = make(scriptedFactory(toolThenAck(), [gatedTool("slow", () => gate, seen)]));
    await a.start();
    const t = "web:grace";
    await a.deliver(inbound(t, "tool forever"));
    await gate.reached;
    const b = make(scriptedFactory(toolThenAck(), []));
    await b.start();
    const stopping = a.stop({ graceMs: 300 });
    await clock.sleeping(300);
    await clock.advance(299);
    expect(seen.aborted).toBeUndefined();
    await clock.advance(1);
    await stopping;
    expect(seen.aborted).toBe(true);
    await waitIdle(watch(b), t);
    const messages = await sessionMessages(store, t);
    expect(lines(messages)).toEqual([
      "user:tool forever",
      "assistant:",
      `toolResult:${INTERRUPTED_TOOL_TEXT}`,
      "assistant:ack tool forever",
    ]);
    expect(messages[2]).toMatchObject({ isError: true });
  });

  it("a holder that loses its lease stops writing at its next renewal; the thread is recovered after the intruder", async () => {
    const { redis, prefix, store, clock, leases, make, watch } = setup();
    const gate = createGate();
    gates.push(gate);
    const seen: ToolSeen = { runs: 0 };
    const sweepEvery = 2 * TTL + 50_000;
    // The tool starts before the reply that called it is stored (the append is queued); the lease
    // is taken from the holder only once it is, so the test is about the tool's result, not a
    // tool call that was never saved (then the next holder would rightly ask the model again).
    let toolCallStored!: () => void;
    const stored = new Promise<void>((resolve) => {
      toolCallStored = resolve;
    });
    const watched = Object.create(store) as RedisSessionStore;
    watched.append = async (threadKey, sessionId, entries, options) => {
      const out = await store.append(threadKey, sessionId, entries, options);
      if (entries.some((e) => e.type === "message" && e.message.role === "assistant")) toolCallStored();
      return out;
    };
    const r = make(scriptedFactory(toolThenAck(), [gatedTool("slow", () => gate, seen)]), {
      sweepIntervalMs: sweepEvery,
      store: watched,
    });
    await r.start();
    const t = "web:intruder";
    await r.deliver(inbound(t, "tool please"));
    await gate.reached;
    await stored;
    // Someone else takes the lease (as if this worker had stalled past its TTL).
    const key = new RuntimeKeys(prefix).lease(t);
    await redis.set(key, "intruder", "PX", TTL);
    const lost = leases.next((e) => e.threadKey === t && e.type === "lost");
    // The lost holder wakes the thread again; that job finds the intruder alive and leaves it be.
    const declined = leases.next((e) => e.threadKey === t && e.type === "declined");
    await clock.advance(TTL / 3);
    await lost;
    expect(seen.aborted).toBe(true);
    await declined;
    // The intruder dies without releasing; the sweeper wakes the thread once it has been quiet for
    // two lease TTLs (the sweep at 170 s finds it 150 s old).
    await redis.del(key);
    gate.release();
    await clock.advance(sweepEvery);
    await waitIdle(watch(r), t);
    const messages = await sessionMessages(store, t);
    // The old holder's tool result was never written; the next holder closed the call.
    expect(lines(messages)).toEqual([
      "user:tool please",
      "assistant:",
      `toolResult:${INTERRUPTED_TOOL_TEXT}`,
      "assistant:ack tool please",
    ]);
    expect(leases.typesOf(t)).toEqual(["acquired", "lost", "declined", "acquired", "releasing", "released"]);
  });

  it("the sweeper wakes a thread whose wake job was never added, once it is two lease TTLs old", async () => {
    const { redis, prefix, store, clock, make, watch } = setup();
    const sweepEvery = 2 * TTL + 10_000;
    const r = make(scriptedFactory(new ScriptedStream((call) => `ack ${lastUserText(call)}`)), {
      sweepIntervalMs: sweepEvery,
    });
    await r.start();
    const t = "web:lost-wake";
    // A gateway that died right after the inbox append: flag set, no job.
    const state = new RedisThreadState(redis, new RuntimeKeys(prefix), { clock });
    const out = await state.append(
      t,
      { mode: "steer", kind: "message", message: inbound(t, "anyone?") },
      { cap: 20, dropPolicy: "new" },
    );
    expect(out).toMatchObject({ accepted: true, woke: true });
    await clock.sleeping(sweepEvery);
    const answered = watch(r).leases.next((e) => e.threadKey === t && e.type === "released");
    await clock.advance(sweepEvery);
    await answered;
    await waitIdle(watch(r), t);
    expect(lines(await sessionMessages(store, t))).toEqual(["user:anyone?", "assistant:ack anyone?"]);
  });

  it("a stop lets a sweep in progress finish before it hands threads over and closes connections", async () => {
    const { redis, prefix, clock } = setup();
    const errors: string[] = [];
    const every = 1000;
    const graceMs = 4321;
    const sweepGate = createGate();
    gates.push(sweepGate);
    let sweepEnded = false;
    /** Its sweep waits at a gate before it starts. */
    class GatedSweep extends RedisRuntime {
      override async sweepOnce(lockMs?: number): Promise<string[]> {
        await sweepGate.arrive();
        try {
          return await super.sweepOnce(lockMs);
        } finally {
          sweepEnded = true;
        }
      }
    }
    // The runtime owns its connection: stop() closes it.
    const r = new GatedSweep({
      redis: redisUrl(),
      prefix,
      store: new RedisSessionStore({ redis, prefix }),
      sinks: new RecordingSinks().factory,
      agentFactory: scriptedFactory(new ScriptedStream(() => "ok")),
      leaseTtlMs: TTL,
      sweepIntervalMs: every,
      clock,
      onError: (e, context) => errors.push(`${context}: ${e instanceof Error ? e.message : String(e)}`),
    });
    await r.start();
    // A thread with a queued item and a live lease elsewhere: the sweep probes it and leaves it be.
    const keys = new RuntimeKeys(prefix);
    const k = keys.thread("web:swept");
    await redis.rpush(k.inbox, '{"seq":1,"at":0,"mode":"steer","kind":"message"}');
    await redis.set(k.lease, "elsewhere", "PX", TTL);
    await redis.zadd(keys.pending, clock.now() - 10 * TTL, "web:swept");
    await clock.sleeping(every);
    await clock.advance(every);
    await sweepGate.reached;
    let sweepEndedAtStop: boolean | undefined;
    const stopping = r.stop({ graceMs }).then(() => {
      sweepEndedAtStop = sweepEnded;
    });
    await new Promise((resolve) => setImmediate(resolve));
    // The sweep is in flight: nothing is handed over yet.
    expect(clock.isSleeping(graceMs)).toBe(false);
    sweepGate.release();
    await stopping;
    expect(sweepEndedAtStop).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe("compaction, usage, idle eviction and signals", () => {
  it("compacts a session over the threshold after a run, and the next call sees the summary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sb-compact-"));
    const stream = new ScriptedStream((call) => ({
      text: `ack ${lastUserText(call).slice(0, 10)}`,
      usage: { input: 2500, output: 3 },
    }));
    const summaries: string[] = [];
    const leases = new LeaseLog();
    const runtime = new EmbeddedRuntime({
      dataDir: dir,
      sinks: new RecordingSinks().factory,
      clock: new ManualClock(),
      onLease: leases.record,
      agentFactory: (ctx) =>
        new Agent({
          initialState: { model: scriptedModel({ contextWindow: 3000 }), messages: ctx.messages },
          streamFn: stream.streamFn,
          // The session's converter shows compaction summaries to the model.
          convertToLlm,
        }),
      compaction: {
        settings: { enabled: true, reserveTokens: 1000, keepRecentTokens: 300 },
        complete: async (model) => {
          summaries.push("asked");
          return {
            ...createAssistantMessage(model),
            content: [{ type: "text", text: "SUMMARY of earlier talk" }],
          };
        },
      },
    });
    try {
      await runtime.start();
      const t = "web:compact";
      for (let i = 0; i < 6; i++) {
        await runtime.deliver(inbound(t, `message ${i} ${"x".repeat(2000)}`));
        await waitIdle({ runtime, leases }, t);
      }
      expect(summaries.length).toBeGreaterThan(0);
      const meta = await runtime.store.getThreadMeta(t);
      const all = await runtime.store.readAll(t, meta?.currentSessionId ?? "");
      expect(all.entries.some((e) => e.type === "compaction")).toBe(true);
      const last = stream.calls.at(-1)?.context.messages ?? [];
      expect(JSON.stringify(last[0])).toContain("SUMMARY of earlier talk");
      // Usage of every answer is added to the thread's totals.
      expect((await runtime.status(t)).meta?.usage).toMatchObject({ input: 15_000, output: 18 });
    } finally {
      await runtime.stop({ graceMs: 0 });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drops a thread's cached agent after the idle time and rebuilds it from the session", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sb-evict-"));
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const built: AbortSignal[] = [];
    const inner = scriptedFactory(stream);
    const clock = new ManualClock();
    const leases = new LeaseLog();
    const idleMs = 777;
    const runtime = new EmbeddedRuntime({
      dataDir: dir,
      sinks: new RecordingSinks().factory,
      agentFactory: (ctx) => {
        built.push(ctx.signal);
        return inner(ctx);
      },
      agentIdleMs: idleMs,
      clock,
      onLease: leases.record,
    });
    const w = { runtime, leases };
    try {
      await runtime.start();
      const t = "web:evict";
      await runtime.deliver(inbound(t, "one"));
      await waitIdle(w, t);
      await runtime.deliver(inbound(t, "two"));
      await waitIdle(w, t);
      expect(built).toHaveLength(1);
      await clock.sleeping(idleMs);
      await clock.advance(idleMs - 1);
      expect(built[0]?.aborted).toBe(false);
      await clock.advance(1);
      expect(built[0]?.aborted).toBe(true);
      await runtime.deliver(inbound(t, "three"));
      await waitIdle(w, t);
      expect(built).toHaveLength(2);
      expect(stream.calls.at(-1)?.context.messages.filter((m) => m.role === "user")).toHaveLength(3);
    } finally {
      await runtime.stop({ graceMs: 0 });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("SIGTERM stops every runtime with the grace period, then exits; a second signal exits at once", async () => {
    const proc = new EventEmitter();
    const exits: number[] = [];
    const stops: (number | undefined)[] = [];
    let finishStop!: () => void;
    const runtime = {
      stop: (o?: { graceMs?: number }) => {
        stops.push(o?.graceMs);
        return new Promise<void>((resolve) => {
          finishStop = resolve;
        });
      },
    };
    let closed = false;
    const remove = installShutdownHandlers([runtime], {
      graceMs: 1234,
      target: proc as unknown as NodeJS.Process,
      exit: (code) => exits.push(code),
      log: () => {},
      afterStop: () => {
        closed = true;
      },
    });
    proc.emit("SIGTERM", "SIGTERM");
    expect(stops).toEqual([1234]);
    proc.emit("SIGINT", "SIGINT");
    expect(exits).toEqual([130]);
    finishStop();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(true);
    expect(exits).toEqual([130, 0]);
    remove();
  });
});
