/**
 * Two workers, one thread, a test clock: lease expiry, renewal, recovery and the takeover rule at
 * the worker level, to the millisecond. A worker "dies" at a chosen step of the protocol: from
 * then on none of its calls to the shared state or the session store comes back (and the step
 * itself reaches them, or not), as for a process killed at that instant. The second worker gets
 * the wake job's rerun, as BullMQ's stalled-job check would give it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentMessage, AgentTool } from "../../src/agent/types.js";
import { LocalControlBus } from "../../src/queue/control-bus.js";
import { MemoryThreadState } from "../../src/queue/embedded/memory-thread-state.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import type { ThreadState } from "../../src/queue/state/types.js";
import { FileSessionStore } from "../../src/queue/store/file-store.js";
import type { AppendResult, SessionStore } from "../../src/queue/store/types.js";
import type { AgentFactory, DeliveryMode } from "../../src/queue/types.js";
import { plainInboundFormatter } from "../../src/queue/worker/item-messages.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/queue/worker/recovery.js";
import { WorkerCore } from "../../src/queue/worker/worker-core.js";
import { ManualClock } from "../support/manual-clock.js";
import { createGate, type Gate, lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import {
  gatedTool,
  inbound,
  resolveTestModel,
  scriptedFactory,
  sessionMessages,
  type ToolSeen,
  textOf,
} from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";
import { findLeaseOverlaps, type LoggedLeaseEvent } from "./support/lease-overlaps.js";
import { type CallMatch, type Death, Mortal } from "./support/mortal.js";

const TTL = 900;
const T = "web:takeover";

/** A session append of an assistant message. */
const appendsAnswer: CallMatch = (method, args) =>
  method === "append" &&
  (args[2] as { message?: { role?: string } }[] | undefined)?.[0]?.message?.role === "assistant";

const dirs: string[] = [];
const gates: Gate[] = [];
afterEach(() => {
  for (const g of gates.splice(0)) g.release();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function cluster() {
  const clock = new ManualClock();
  const state = new MemoryThreadState({ clock });
  const dir = mkdtempSync(join(tmpdir(), "sb-takeover-"));
  dirs.push(dir);
  const store = new FileSessionStore({
    dataDir: dir,
    fenceCheck: (threadKey, fence) => state.holds(threadKey, fence.token),
  });
  const log: LoggedLeaseEvent[] = [];
  const leases = new LeaseLog();
  const sinks = new RecordingSinks();
  const errors: string[] = [];
  const worker = (
    name: string,
    stream: ScriptedStream,
    o: {
      tools?: AgentTool[];
      death?: Death;
      store?: (s: SessionStore) => SessionStore;
      state?: (s: ThreadState) => ThreadState;
      factory?: AgentFactory;
    } = {},
  ) => {
    const mortal = new Mortal(o.death);
    const core = new WorkerCore({
      state: mortal.wrap(o.state?.(state) ?? state),
      store: mortal.wrap(o.store?.(store) ?? store),
      factory: o.factory ?? scriptedFactory(stream, o.tools),
      sinks: sinks.factory,
      format: plainInboundFormatter,
      resolveModel: resolveTestModel,
      fenceKey: (t) => `lease:${t}`,
      leaseTtlMs: TTL,
      collectDebounceMs: 100,
      controlPollMs: 250,
      compaction: undefined,
      clock,
      onError: (e, context) => {
        if (!mortal.dead) errors.push(`${name} ${context}: ${e instanceof Error ? e.message : String(e)}`);
      },
      onLease: (e) => {
        log.push({ ...e, worker: name });
        leases.record(e);
      },
      bus: new LocalControlBus(),
      rewake: async () => {},
    });
    return { core, mortal };
  };
  const deliver = (text: string, mode: DeliveryMode = "steer") =>
    state.append(T, { mode, kind: "message", message: inbound(T, text) }, { cap: 20, dropPolicy: "new" });
  const lines = async () => (await sessionMessages(store, T)).map((m) => `${m.role}:${textOf(m)}`);
  /** Resolves once a reply has reached the chat (its message_end was rendered). */
  const replyShown = () =>
    sinks.waitFor(() =>
      sinks
        .runsOf(T)
        .some((r) => r.events.some((e) => e.type === "message_end" && e.message.role === "assistant")),
    );
  return { clock, state, store, sinks, log, leases, errors, worker, deliver, lines, replyShown };
}

/** Calls `slow` for a message that says "tool", then acknowledges; answers other messages at once. */
function toolThenAck(): ScriptedStream {
  return new ScriptedStream((call) => {
    const last = call.context.messages.at(-1);
    if (last?.role === "user" && lastUserText(call).includes("tool"))
      return { toolCalls: [{ name: "slow", args: {} }] };
    return `ack ${lastUserText(call)}`;
  });
}

/**
 * `s`, whose first save of a user message is made by `first`, given the real save; every other
 * save goes straight through. How these tests hang or break one save in the middle of a run.
 */
function atFirstUserSave(
  s: SessionStore,
  first: (save: () => Promise<AppendResult>) => Promise<AppendResult>,
): SessionStore {
  const wrapped: SessionStore = Object.create(s);
  let done = false;
  wrapped.append = (threadKey, sessionId, entries, options) => {
    const save = () => s.append(threadKey, sessionId, entries, options);
    const e = entries[0];
    if (done || e?.type !== "message" || e.message.role !== "user") return save();
    done = true;
    return first(save);
  };
  return wrapped;
}

describe("takeover between workers (test clock)", () => {
  it("a worker dies inside a tool: the rerun takes the lease the millisecond it expires, closes the call and answers", async () => {
    const c = cluster();
    const gate = createGate();
    gates.push(gate);
    const a = c.worker("A", toolThenAck(), { tools: [gatedTool("slow", () => gate)] });
    const streamB = toolThenAck();
    const b = c.worker("B", streamB, { tools: [gatedTool("slow", () => undefined)] });
    const t0 = c.clock.now();
    await c.deliver("use the tool");
    const toolCallSaved = a.mortal.completed(appendsAnswer);
    void a.core.process(T, { rerun: false });
    await gate.reached;
    await toolCallSaved;
    // A renews every TTL/5 (180, 360, 540), then dies: its lease holds until 540 + TTL.
    await c.clock.advance(700);
    a.mortal.kill();
    const released = c.leases.next((e) => e.type === "released");
    const bDone = b.core.process(T, { rerun: true });
    await c.clock.advance(540 + TTL - 700 - 1);
    expect(c.log.filter((e) => e.worker === "B" && e.type === "acquired")).toEqual([]);
    await c.clock.advance(1);
    await released;
    await bDone;
    expect(c.log.find((e) => e.worker === "B" && e.type === "acquired")?.at).toBe(t0 + 540 + TTL);
    expect(await c.lines()).toEqual([
      "user:use the tool",
      "assistant:",
      `toolResult:${INTERRUPTED_TOOL_TEXT}`,
      "assistant:ack use the tool",
    ]);
    expect(streamB.calls).toHaveLength(1);
    expect(findLeaseOverlaps(c.log, TTL)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("a worker dies with its release on the wire: the next worker takes the thread at once, and that is no overlap", async () => {
    const c = cluster();
    const a = c.worker("A", toolThenAck(), {
      // `finish` settles, takes and releases in one step: A's release is on the wire with it.
      death: { at: (method) => method === "release" || method === "finish", after: true },
    });
    const b = c.worker("B", toolThenAck());
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    // A answered and sent its release, which deleted the lease; A never heard back.
    await a.mortal.died;
    await c.deliver("two");
    await c.clock.advance(100);
    await b.core.process(T, { rerun: false });
    expect(c.log.map((e) => `${e.worker} ${e.type}`)).toEqual([
      "A acquired",
      "A releasing",
      "B acquired",
      "B releasing",
      "B released",
    ]);
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one", "user:two", "assistant:ack two"]);
    // The release was sent before B took the lease, so A's tenure may have ended then: no overlap.
    expect(findLeaseOverlaps(c.log, TTL)).toEqual([]);
    // Without the write-ahead `releasing` line, A's tenure would seem to last a TTL from its acquire.
    const withoutWriteAhead = c.log.filter((e) => e.type !== "releasing");
    expect(findLeaseOverlaps(withoutWriteAhead, TTL)).toHaveLength(1);
  });

  it("the overlap check still catches two real holders", () => {
    const t0 = 1_000;
    const log: LoggedLeaseEvent[] = [
      { worker: "A", type: "acquired", threadKey: T, token: "a", at: t0, sentAt: t0 },
      { worker: "A", type: "renewed", threadKey: T, token: "a", at: t0 + 300 },
      { worker: "A", type: "releasing", threadKey: T, token: "a", at: t0 + 400 },
      { worker: "A", type: "kept", threadKey: T, token: "a", at: t0 + 401 },
      { worker: "B", type: "acquired", threadKey: T, token: "b", at: t0 + 1000, sentAt: t0 + 999 },
    ];
    expect(findLeaseOverlaps(log, TTL)).toEqual([
      `${T}: A/a until ≥${t0 + 300 + TTL}, B/b from ≤${t0 + 1000}`,
    ]);
  });

  it("a worker dies after saving the answer, before settling: the next worker settles, nothing is answered twice", async () => {
    const c = cluster();
    // `finish` (settle, take and release in one step) is the run's settle.
    const a = c.worker("A", toolThenAck(), {
      death: { at: (method) => method === "settle" || method === "finish", after: false },
    });
    const streamB = toolThenAck();
    const b = c.worker("B", streamB);
    await c.deliver("hello");
    void a.core.process(T, { rerun: false });
    await a.mortal.died;
    expect(await c.lines()).toEqual(["user:hello", "assistant:ack hello"]);
    expect(await c.state.inflight(T)).toHaveLength(1);
    const bDone = b.core.process(T, { rerun: true });
    await c.clock.advance(TTL);
    await bDone;
    expect(streamB.calls).toHaveLength(0);
    expect(await c.lines()).toEqual(["user:hello", "assistant:ack hello"]);
    expect(await c.state.probe(T)).toEqual({ inboxDepth: 0, inflightDepth: 0, active: false });
  });

  it("a worker dies before its answer is saved: the next worker answers it once", async () => {
    const c = cluster();
    const a = c.worker("A", toolThenAck(), { death: { at: appendsAnswer, after: false } });
    const streamB = toolThenAck();
    const b = c.worker("B", streamB);
    await c.deliver("hello");
    void a.core.process(T, { rerun: false });
    await a.mortal.died;
    expect(await c.lines()).toEqual(["user:hello"]);
    const bDone = b.core.process(T, { rerun: true });
    await c.clock.advance(TTL);
    await bDone;
    expect(streamB.calls).toHaveLength(1);
    expect(await c.lines()).toEqual(["user:hello", "assistant:ack hello"]);
  });

  it("a worker that counts its lease lost while a save hangs still saves the answer it showed, under the lease it still holds: nothing is answered twice", async () => {
    const c = cluster();
    const saved = createGate();
    gates.push(saved);
    // As in a Redis failover: the user message's save and the lease's renewals hang. The worker
    // counts itself lost ⅔ of the TTL in; the lease itself lasts until a whole TTL has passed.
    const hangingSave = (s: SessionStore) =>
      atFirstUserSave(s, async (save) => {
        await saved.arrive();
        return save();
      });
    const hangingRenewals = (s: ThreadState): ThreadState => {
      const wrapped: ThreadState = Object.create(s);
      wrapped.renew = () => new Promise(() => {});
      return wrapped;
    };
    const a = c.worker("A", toolThenAck(), { store: hangingSave, state: hangingRenewals });
    const streamB = toolThenAck();
    const b = c.worker("B", streamB);
    await c.deliver("hello");
    const aDone = a.core.process(T, { rerun: false });
    await c.replyShown();
    await c.clock.advance((2 * TTL) / 3);
    expect(c.log.map((e) => `${e.worker} ${e.type}`)).toContain("A lost");
    saved.release();
    await aDone;
    // Both saves went through the fence while the lease was still A's.
    expect(await c.lines()).toEqual(["user:hello", "assistant:ack hello"]);
    const bDone = b.core.process(T, { rerun: true });
    await c.clock.advance(TTL);
    await bDone;
    expect(streamB.calls).toHaveLength(0);
    expect(await c.lines()).toEqual(["user:hello", "assistant:ack hello"]);
    expect(await c.state.probe(T)).toEqual({ inboxDepth: 0, inflightDepth: 0, active: false });
    expect(findLeaseOverlaps(c.log, TTL)).toEqual([]);
  });

  it("a question a predecessor left unanswered is answered before a message taken beside the agent's build, each once", async () => {
    const c = cluster();
    // A session that ends in a question nobody answered, with nothing inflight (as a holder leaves
    // it when its reply was never written), and a newer message waiting in the inbox.
    const started = await c.store.startSession(T, {});
    await c.store.append(T, started.header.id, [
      {
        type: "message",
        id: "q1",
        parentId: started.leafId,
        timestamp: new Date(c.clock.now()).toISOString(),
        message: { role: "user", content: [{ type: "text", text: "first" }], timestamp: c.clock.now() },
      },
    ]);
    await c.deliver("second");
    const stream = toolThenAck();
    const b = c.worker("B", stream);
    await b.core.process(T, { rerun: false });
    expect(await c.lines()).toEqual([
      "user:first",
      "assistant:ack first",
      "user:second",
      "assistant:ack second",
    ]);
    expect(stream.calls).toHaveLength(2);
    expect(await c.state.probe(T)).toEqual({ inboxDepth: 0, inflightDepth: 0, active: false });
    expect(c.errors).toEqual([]);
  });

  it("a worker that starts shutting down while its wake takes the lease puts the message it took with the lease back: the next worker finds it queued, not inflight", async () => {
    const c = cluster();
    let stop: () => Promise<void> = async () => {};
    const stream = toolThenAck();
    const a = c.worker("A", stream, {
      state: (s) =>
        new Proxy(s, {
          get(obj, prop) {
            const value: unknown = Reflect.get(obj, prop, obj);
            if (prop !== "wakeAcquire" || typeof value !== "function") return value;
            // The shutdown begins while the acquire (and the take it makes) is on the wire.
            return async (...args: unknown[]) => {
              const r: unknown = await value.apply(obj, args);
              void stop();
              return r;
            };
          },
        }),
    });
    stop = () => a.core.shutdown(0);
    await c.deliver("hello");
    await a.core.process(T, { rerun: false });
    expect(c.log.map((e) => `${e.worker} ${e.type}`)).toEqual(["A acquired", "A releasing", "A handoff"]);
    expect(await c.state.probe(T)).toEqual({ inboxDepth: 1, inflightDepth: 0, active: false });
    expect(stream.calls).toHaveLength(0);
    const b = c.worker("B", stream);
    await b.core.process(T, { rerun: false });
    expect(await c.lines()).toEqual(["user:hello", "assistant:ack hello"]);
    expect(c.errors).toEqual([]);
  });

  it("a follow-up taken at the steering read after a final reply waits for the follow-up read; a steer behind it waits too", async () => {
    const c = cluster();
    let local: AgentMessage[] = [];
    const stream = new ScriptedStream(async (call) => {
      const text = lastUserText(call);
      if (text === "first") {
        // While the first reply streams: a follow-up, then a steer behind it, and a message from
        // another steering source (an extension's hook), which keeps the agent going after the
        // steering read that took the follow-up.
        await c.deliver("later", "followUp");
        await c.deliver("s2", "steer");
        local = [{ role: "user", content: [{ type: "text", text: "local" }], timestamp: c.clock.now() }];
      }
      return `ack ${text}`;
    });
    const base = scriptedFactory(stream);
    const b = c.worker("B", stream, {
      factory: async (ctx) => {
        const built = await base(ctx);
        const agent = "agent" in built ? built.agent : built;
        agent.addHooks({ getSteeringMessages: async () => local.splice(0) });
        return built;
      },
    });
    await c.deliver("first");
    await b.core.process(T, { rerun: false });
    expect(await c.lines()).toEqual([
      "user:first",
      "assistant:ack first",
      "user:local",
      "assistant:ack local",
      "user:later",
      "assistant:ack later",
      "user:s2",
      "assistant:ack s2",
    ]);
    expect(await c.state.probe(T)).toEqual({ inboxDepth: 0, inflightDepth: 0, active: false });
    expect(c.errors).toEqual([]);
  });

  it("a long run keeps its lease by renewing: other jobs leave the thread to it, and it finishes", async () => {
    const c = cluster();
    const gate = createGate();
    gates.push(gate);
    const seen: ToolSeen = { runs: 0 };
    const a = c.worker("A", toolThenAck(), { tools: [gatedTool("slow", () => gate, seen)] });
    const b = c.worker("B", toolThenAck());
    await c.deliver("a long tool");
    const aDone = a.core.process(T, { rerun: false });
    await gate.reached;
    await c.clock.advance(10 * TTL);
    // A fresh job sees a lease renewed within half its TTL; a rerun watches it being renewed.
    await b.core.process(T, { rerun: false });
    const rerun = b.core.process(T, { rerun: true });
    await c.clock.advance(TTL / 2);
    await rerun;
    expect(c.log.filter((e) => e.worker === "B").map((e) => e.type)).toEqual(["declined", "declined"]);
    gate.release();
    await aDone;
    expect(seen.aborted).toBeUndefined();
    expect(await c.lines()).toEqual([
      "user:a long tool",
      "assistant:",
      "toolResult:slow done",
      "assistant:ack a long tool",
    ]);
    expect(c.log.filter((e) => e.type === "renewed").length).toBeGreaterThanOrEqual(30);
    expect(findLeaseOverlaps(c.log, TTL)).toEqual([]);
  });

  it("a save that fails after reaching the store fails the tenure; nothing queued behind it is written", async () => {
    const c = cluster();
    const answered = createGate();
    gates.push(answered);
    // The user message's append is stored, but its reply is an error (a connection reset), and it
    // arrives only after the model's reply is queued for saving behind it.
    const flaky = (s: SessionStore) =>
      atFirstUserSave(s, async (save) => {
        await answered.arrive();
        await save();
        throw new Error("connection reset");
      });
    const a = c.worker("A", toolThenAck(), { store: flaky, tools: [gatedTool("slow", () => undefined)] });
    const streamB = toolThenAck();
    const b = c.worker("B", streamB, { tools: [gatedTool("slow", () => undefined)] });
    await c.deliver("use the tool");
    const aDone = a.core.process(T, { rerun: false });
    await c.replyShown();
    answered.release();
    await aDone;
    expect(c.log.map((e) => `${e.worker} ${e.type}`)).toEqual(["A acquired", "A failed", "A releasing"]);
    expect(c.errors).toEqual([`A saving a session entry of ${T}: connection reset`]);
    // The reply queued behind the failed save was not written (its parent would be a guess).
    expect(await c.lines()).toEqual(["user:use the tool"]);
    // A failed tenure is retried later (the sweeper's job); here the next job goes to B.
    await b.core.process(T, { rerun: false });
    expect(await c.lines()).toEqual([
      "user:use the tool",
      "assistant:",
      "toolResult:slow done",
      "assistant:ack use the tool",
    ]);
  });
});
