/**
 * What the chat shows when a worker dies mid-render, on a test clock: two workers, one thread, the
 * real renderer on a recording chat, the render journal in memory. A worker "dies" at a chosen
 * instant (from then on none of its calls to the state, the store, the journal or the chat comes
 * back); the second worker gets the wake job's rerun. Whatever the instant, the chat ends with the
 * answer in full, exactly once, and nothing half-written.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../src/adapters/render/rate-limiter.js";
import type { ChannelAdapter } from "../../src/adapters/types.js";
import type { AgentTool } from "../../src/agent/types.js";
import { MemoryThreadState } from "../../src/queue/embedded/memory-thread-state.js";
import { MemoryRenderJournal } from "../../src/queue/state/render-journal.js";
import { FileSessionStore } from "../../src/queue/store/file-store.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/queue/worker/recovery.js";
import { RecordingAdapter } from "../adapters/support/recording-adapter.js";
import { ManualClock } from "../support/manual-clock.js";
import { createGate, type Gate, lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import { gatedTool, inbound, scriptedFactory, sessionMessages, textOf } from "./support/harness.js";
import { type CallMatch, Mortal } from "./support/mortal.js";
import { recoveryWorkerCore, runClockUntil } from "./support/recovery-worker.js";

const TTL = 900;
const T = "web:render";

const dirs: string[] = [];
const gates: Gate[] = [];
afterEach(() => {
  for (const g of gates.splice(0)) g.release();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A session append of an assistant message with text. */
const appendsAnswer: CallMatch = (method, args) =>
  method === "append" &&
  (args[2] as { message?: { role?: string } }[] | undefined)?.[0]?.message?.role === "assistant";

function cluster(o: { findPosted?: boolean; idempotentPosts?: boolean; holdAnswerAppend?: Gate } = {}) {
  const clock = new ManualClock();
  const state = new MemoryThreadState({ clock });
  const dir = mkdtempSync(join(tmpdir(), "sb-render-"));
  dirs.push(dir);
  const store = new FileSessionStore({
    dataDir: dir,
    fenceCheck: (threadKey, fence) => state.holds(threadKey, fence.token),
  });
  const holdAnswerAppend = o.holdAnswerAppend;
  const journal = new MemoryRenderJournal({ holds: (t, token) => state.holds(t, token) });
  const chat = new RecordingAdapter(clock, o.idempotentPosts ? { idempotentPosts: true } : {}, {
    findPosted: o.findPosted === true,
  });
  const limiter = new MemoryRateLimiter(clock);
  const errors: string[] = [];
  const worker = (
    name: string,
    stream: ScriptedStream,
    o: { tools?: AgentTool[]; death?: CallMatch } = {},
  ) => {
    const mortal = new Mortal(o.death);
    const adapter = mortal.wrap<ChannelAdapter>(chat);
    // A slow session write of the reply (Redis behind a loaded event loop), when asked for.
    const hold = holdAnswerAppend;
    const slowStore: FileSessionStore = hold
      ? new Proxy(store, {
          get: (obj, prop) => {
            const value: unknown = Reflect.get(obj, prop, obj);
            if (prop !== "append" || typeof value !== "function") return value;
            return async (...args: unknown[]) => {
              // Only the first: the dead worker's write never lands, the next worker's does.
              if (!hold.isReached && appendsAnswer("append", args)) await hold.arrive();
              return value.apply(obj, args);
            };
          },
        })
      : store;
    const core = recoveryWorkerCore({
      name,
      mortal,
      adapter,
      state,
      store: slowStore,
      journal,
      clock,
      limiter,
      factory: scriptedFactory(stream, o.tools),
      leaseTtlMs: TTL,
      errors,
    });
    return { core, mortal };
  };
  const deliver = (text: string) =>
    state.append(
      T,
      { mode: "steer", kind: "message", message: inbound(T, text) },
      { cap: 20, dropPolicy: "new" },
    );
  const runUntil = (done: Promise<unknown>) => runClockUntil(clock, done);
  const lines = async () => (await sessionMessages(store, T)).map((m) => `${m.role}:${textOf(m)}`);
  return { clock, chat, journal, errors, worker, deliver, runUntil, lines };
}

/** Answers `ack <text>`, streamed with the given gates between its pieces. */
function acking(pieces: (text: string) => string[], gatesFor: Gate[] = []): ScriptedStream {
  return new ScriptedStream((call) => {
    const parts = pieces(`ack ${lastUserText(call)}`);
    const content = parts.flatMap((text, i) => {
      const gate = gatesFor[i];
      return gate ? [{ type: "text" as const, text }, gate] : [{ type: "text" as const, text }];
    });
    return { content, fragmentSize: 100 };
  });
}

describe("recovery of what the chat shows (test clock)", () => {
  it("killed before the first send: the next worker sends the answer once", async () => {
    const c = cluster();
    const a = c.worker(
      "A",
      acking((t) => [t]),
      { death: (method) => method === "post" },
    );
    const streamB = acking((t) => [t]);
    const b = c.worker("B", streamB);
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await a.mortal.died;
    expect(c.chat.messages()).toEqual([]);
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(c.chat.messages()).toEqual(["ack one"]);
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one"]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  /**
   * The post window: the platform answered a post, the worker died before the run's snapshot held
   * the id. `dieAt` is the first journal call after the post that never lands.
   */
  const killedJustAfterPost = async (
    dieAt: "posted" | "put",
    o: { findPosted?: boolean; idempotentPosts?: boolean } = {},
  ) => {
    const c = cluster(o);
    const g = createGate();
    gates.push(g);
    let posts = 0;
    const a = c.worker(
      "A",
      acking((t) => [t.slice(0, 5), t.slice(5)], [g]),
      {
        death: (method) => {
          if (method === "post") posts++;
          return posts === 1 && method === dieAt;
        },
      },
    );
    const b = c.worker(
      "B",
      acking((t) => [t]),
    );
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await a.mortal.died;
    expect(c.chat.messages()).toEqual(["ack o"]);
    g.release();
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one"]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
    return c;
  };

  it("killed the instant a post was answered, its id sent to the journal: the next worker finds it, no second copy", async () => {
    const c = await killedJustAfterPost("put");
    expect(c.chat.messages()).toEqual(["ack one"]);
  });

  it("killed before the posted id reached the journal, on a platform that finds posts by key: no second copy", async () => {
    const c = await killedJustAfterPost("posted", { findPosted: true });
    expect(c.chat.messages()).toEqual(["ack one"]);
  });

  it("killed before the posted id reached the journal, on a platform whose repeated post returns the first (Discord): no second copy", async () => {
    const c = await killedJustAfterPost("posted", { idempotentPosts: true });
    expect(c.chat.messages()).toEqual(["ack one"]);
  });

  it("killed before the posted id reached the journal, on a platform without lookup: the intent's key is posted again (the window Telegram keeps)", async () => {
    const c = await killedJustAfterPost("posted");
    // The half-written message stays beside the answer: what docs/runtime.md states for Telegram.
    expect(c.chat.messages()).toEqual(["ack o", "ack one"]);
    const keys = c.chat.calls.filter((x) => x.op === "post" && x.ok);
    expect(keys).toHaveLength(2);
  });

  it("killed between edits: the half-written message goes, the rerun's answer is shown once", async () => {
    const c = cluster();
    const g1 = createGate();
    const g2 = createGate();
    gates.push(g1, g2);
    const a = c.worker(
      "A",
      acking((t) => [t.slice(0, 3), t.slice(3, 5), t.slice(5)], [g1, g2]),
    );
    const b = c.worker(
      "B",
      acking((t) => [t]),
    );
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await g1.reached;
    await c.clock.advance(10);
    expect(c.chat.messages()).toEqual(["ack"]);
    g1.release();
    await g2.reached;
    await c.clock.advance(600);
    const cut = c.chat.messages();
    expect(cut).toHaveLength(1);
    expect(cut[0]).not.toBe("ack one");
    a.mortal.kill();
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(c.chat.messages()).toEqual(["ack one"]);
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one"]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("killed after the last token, before the final edit: the next worker edits the cut-off message to the answer", async () => {
    const c = cluster();
    const g = createGate();
    gates.push(g);
    const a = c.worker(
      "A",
      acking((t) => [t.slice(0, 5), t.slice(5)], [g]),
    );
    const streamB = acking((t) => [t]);
    const b = c.worker("B", streamB);
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await g.reached;
    await c.clock.advance(10);
    expect(c.chat.messages()).toEqual(["ack o"]);
    const saved = a.mortal.completed(appendsAnswer);
    g.release();
    await saved;
    // The session holds the answer; the final edit waits for the edit interval. The worker dies.
    a.mortal.kill();
    expect(c.chat.messages()).toEqual(["ack o"]);
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(c.chat.messages()).toEqual(["ack one"]);
    expect(c.chat.calls.filter((x) => x.op === "post" && x.ok)).toHaveLength(1);
    expect(streamB.calls).toHaveLength(0);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("killed after the answer was recorded as shown, before the session saved it: it is answered again, shown once", async () => {
    const c = cluster();
    const g = createGate();
    gates.push(g);
    const a = c.worker(
      "A",
      acking((t) => [t.slice(0, 5), t.slice(5)], [g]),
      { death: appendsAnswer },
    );
    const streamB = acking((t) => [t]);
    const b = c.worker("B", streamB);
    await c.deliver("one");
    const idRecorded = a.mortal.completed((method) => method === "put");
    void a.core.process(T, { rerun: false });
    await g.reached;
    await idRecorded;
    expect(c.chat.messages()).toEqual(["ack o"]);
    g.release();
    await a.mortal.died;
    // The full text never showed: the final edit waits for the session to hold the reply (else a
    // user who saw the answer would see it vanish and the rerun answer a different question).
    await c.clock.advance(2000);
    expect(c.chat.messages()).toEqual(["ack o"]);
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(c.chat.messages()).toEqual(["ack one"]);
    expect(streamB.calls).toHaveLength(1);
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one"]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("killed while the session's write of the answer is slow: the chat never showed the full answer, the rerun shows it once", async () => {
    const slow = createGate();
    const c = cluster({ holdAnswerAppend: slow });
    const g = createGate();
    gates.push(g, slow);
    const a = c.worker(
      "A",
      acking((t) => [t.slice(0, 5), t.slice(5)], [g]),
    );
    const streamB = acking((t) => [t]);
    const b = c.worker("B", streamB);
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await g.reached;
    await c.clock.advance(10);
    expect(c.chat.messages()).toEqual(["ack o"]);
    g.release();
    await slow.reached;
    // The stream ended and the final edit is due, but the session does not hold the answer yet.
    await c.clock.advance(2000);
    expect(c.chat.messages()).toEqual(["ack o"]);
    a.mortal.kill();
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(c.chat.messages()).toEqual(["ack one"]);
    expect(streamB.calls).toHaveLength(1);
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one"]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("killed after the whole answer streamed into the chat, before the session saved it, the user asking on: each question gets its own answer", async () => {
    const c = cluster();
    const g1 = createGate();
    const g2 = createGate();
    gates.push(g1, g2);
    const a = c.worker(
      "A",
      acking((t) => [t.slice(0, 5), t.slice(5)], [g1, g2]),
      { death: appendsAnswer },
    );
    const streamB = acking((t) => [t]);
    const b = c.worker("B", streamB);
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await g1.reached;
    await c.clock.advance(600);
    g1.release();
    await g2.reached;
    await c.clock.advance(600);
    // The stream has not ended, but the chat shows all of it: the user reads it and asks on.
    expect(c.chat.messages()).toEqual(["ack one"]);
    await c.deliver("two");
    g2.release();
    await a.mortal.died;
    await c.runUntil(b.core.process(T, { rerun: true }));
    // The session lacked the reply: it is answered again, on its own, then the next question.
    expect(streamB.calls.map((call) => lastUserText(call))).toEqual(["one", "two"]);
    expect(c.chat.messages()).toEqual(["ack one", "ack two"]);
    expect(await c.lines()).toEqual(["user:one", "assistant:ack one", "user:two", "assistant:ack two"]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("killed after the final edit, before the journal is cleared: finishing again changes nothing", async () => {
    const c = cluster();
    const a = c.worker(
      "A",
      acking((t) => [t]),
      { death: (method) => method === "drop" },
    );
    const b = c.worker(
      "B",
      acking((t) => [t]),
    );
    await c.deliver("one");
    void a.core.process(T, { rerun: false });
    await a.mortal.died;
    expect(c.chat.messages()).toEqual(["ack one"]);
    await c.runUntil(b.core.process(T, { rerun: true }));
    expect(c.chat.messages()).toEqual(["ack one"]);
    expect(c.chat.calls.filter((x) => x.op === "post" && x.ok)).toHaveLength(1);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });

  it("killed while a tool waits for an approval: its status line ends failed, the call is closed and answered once", async () => {
    const c = cluster();
    const approval = createGate();
    gates.push(approval);
    const toolFirst = () =>
      new ScriptedStream((call) => {
        const last = call.context.messages.at(-1);
        if (last?.role === "user") return { toolCalls: [{ name: "guarded", args: { command: "rm x" } }] };
        return `ack ${lastUserText(call)}`;
      });
    const a = c.worker("A", toolFirst(), { tools: [gatedTool("guarded", () => approval)] });
    const b = c.worker("B", toolFirst(), { tools: [gatedTool("guarded", () => undefined)] });
    await c.deliver("one");
    const toolCallSaved = a.mortal.completed(appendsAnswer);
    void a.core.process(T, { rerun: false });
    await approval.reached;
    await toolCallSaved;
    await c.clock.advance(10);
    expect(c.chat.messages()).toEqual(["🔧 **guarded** `rm x` ⏳"]);
    a.mortal.kill();
    await c.runUntil(b.core.process(T, { rerun: true }));
    const shown = c.chat.messages();
    expect(shown).toHaveLength(2);
    expect(shown[0]).toMatch(/^🔧 \*\*guarded\*\* `rm x` ❌ /);
    expect(shown[1]).toBe("ack one");
    expect(await c.lines()).toEqual([
      "user:one",
      "assistant:",
      `toolResult:${INTERRUPTED_TOOL_TEXT}`,
      "assistant:ack one",
    ]);
    expect(await c.journal.owed(T)).toEqual([]);
    expect(c.errors).toEqual([]);
  });
});
