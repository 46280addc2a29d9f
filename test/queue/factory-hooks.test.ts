/**
 * What the runtime offers an agent factory besides the agent (embedded runtime, file store,
 * scripted model): `prepareRun` before every prompted run, `onSessionEvent` around a session's
 * start, `/new`, compaction and the agent's end, a fenced `appendEntry`, and `currentInbound()`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/adapters/types.js";
import { Agent } from "../../src/agent/agent.js";
import type { AssistantMessage } from "../../src/agent/llm/types.js";
import { createAssistantMessage } from "../../src/agent/llm/usage.js";
import { type CustomMessage, convertToLlm } from "../../src/agent/session/messages.js";
import type { AgentMessage, AgentTool } from "../../src/agent/types.js";
import type { ThreadExtensions } from "../../src/extensions/thread.js";
import type { SessionEvent, SessionEventResult } from "../../src/extensions/types.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import type { AgentFactoryContext, SessionEventHook, ThreadAgent } from "../../src/queue/types.js";
import type { CompactionConfig } from "../../src/queue/worker/holder-env.js";
import { ManualClock } from "../support/manual-clock.js";
import { lastUserText, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { inbound, sessionEntries, sessionMessages, textOf, waitIdle } from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

// The extensions' thread binding plugs into the hooks as it is.
const emitFits: SessionEventHook = null as unknown as ThreadExtensions["emitSession"];
const prepareFits: ThreadAgent["prepareRun"] = null as unknown as ThreadExtensions["prepareRun"];
void emitFits;
void prepareFits;

interface World {
  runtime: EmbeddedRuntime;
  leases: LeaseLog;
  clock: ManualClock;
  sinks: RecordingSinks;
  events: SessionEvent[];
  contexts: AgentFactoryContext[];
  prepared: string[][];
  /** What the `audit` tool saw: the run's askers. */
  askers: string[][];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function customMessage(text: string): CustomMessage {
  return { role: "custom", customType: "note", content: text, display: false, timestamp: Date.now() };
}

async function start(
  stream: ScriptedStream,
  o: {
    verdict?: (event: SessionEvent) => SessionEventResult | undefined;
    compaction?: CompactionConfig;
    contextWindow?: number;
  } = {},
): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "sb-factory-hooks-"));
  const events: SessionEvent[] = [];
  const contexts: AgentFactoryContext[] = [];
  const prepared: string[][] = [];
  const askers: string[][] = [];
  const sinks = new RecordingSinks();
  const clock = new ManualClock();
  const leases = new LeaseLog();
  const runtime = new EmbeddedRuntime({
    dataDir: dir,
    clock,
    onLease: leases.record,
    sinks: sinks.factory,
    compaction: o.compaction,
    onError: () => {},
    agentFactory: (ctx): ThreadAgent => {
      contexts.push(ctx);
      const audit: AgentTool = {
        name: "audit",
        label: "audit",
        description: "Writes an audit entry.",
        parameters: Type.Object({}),
        async execute() {
          const asked = (ctx.currentInbound?.() ?? []).map(
            (m: InboundMessage) => `${m.user.name}: ${m.text}`,
          );
          askers.push(asked);
          await ctx.appendEntry?.("audit", { asked });
          return { content: [{ type: "text", text: "audited" }], details: {} };
        },
      };
      const agent = new Agent({
        initialState: {
          model: scriptedModel({ contextWindow: o.contextWindow ?? 100_000 }),
          systemPrompt: "base",
          messages: ctx.messages,
          tools: [audit],
        },
        streamFn: stream.streamFn,
        convertToLlm,
      });
      return {
        agent,
        prepareRun: async (prompts: AgentMessage[]) => {
          prepared.push(prompts.map((m) => textOf(m)));
          agent.setSystemPrompt(`base + run ${prepared.length}`);
          return [customMessage(`note before run ${prepared.length}`), ...prompts];
        },
        onSessionEvent: async (event) => {
          events.push(event);
          return o.verdict?.(event);
        },
      };
    },
  });
  await runtime.start();
  cleanups.push(async () => {
    await runtime.stop({ graceMs: 200 });
    rmSync(dir, { recursive: true, force: true });
  });
  return { runtime, leases, clock, sinks, events, contexts, prepared, askers };
}

describe("factory hooks", () => {
  it("prepareRun adds a message and sets the system prompt before each prompted run", async () => {
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const w = await start(stream);
    const t = "web:prepare";
    await w.runtime.deliver(inbound(t, "one"));
    await waitIdle(w, t);
    await w.runtime.deliver(inbound(t, "two"));
    await waitIdle(w, t);

    expect(w.prepared).toEqual([["one"], ["two"]]);
    expect(stream.calls[0]?.context.systemPrompt).toBe("base + run 1");
    expect(stream.calls[0]?.context.messages.map(textOf)).toEqual(["note before run 1", "one"]);
    expect(stream.calls[1]?.context.systemPrompt).toBe("base + run 2");
    expect(stream.calls[1]?.context.messages.map(textOf)).toEqual([
      "note before run 1",
      "one",
      "ack one",
      "note before run 2",
      "two",
    ]);
    // The injected note is part of the session; the prompts are not delivered twice.
    const context = (await sessionMessages(w.runtime.store, t)).map(textOf);
    expect(context).toEqual(["note before run 1", "one", "ack one", "note before run 2", "two", "ack two"]);
    expect(w.events).toEqual([{ type: "session_start", sessionId: expect.any(String) }]);
  });

  it("appendEntry writes a fenced custom entry in order with the run; currentInbound names the askers", async () => {
    const stream = new ScriptedStream((call) => {
      const last = call.context.messages.at(-1);
      return last?.role === "user" ? { toolCalls: [{ name: "audit", args: {} }] } : "done";
    });
    const w = await start(stream);
    const t = "web:append";
    await w.runtime.deliver(inbound(t, "please audit"));
    await waitIdle(w, t);

    expect(w.askers).toEqual([["Ada: please audit"]]);
    const entries = await sessionEntries(w.runtime.store, t);
    const kinds = entries.map((e) =>
      e.type === "message" ? `${e.message.role}` : e.type === "custom" ? `custom:${e.customType}` : e.type,
    );
    const call = kinds.lastIndexOf("assistant", kinds.indexOf("custom:audit"));
    expect(kinds.slice(call, call + 3)).toEqual(["assistant", "custom:audit", "toolResult"]);
    const audit = entries.find((e) => e.type === "custom");
    expect(audit?.type === "custom" && audit.data).toEqual({ asked: ["Ada: please audit"] });

    // Between runs no holder drives the agent: nothing is written, and the caller is told.
    const ctx = w.contexts[0];
    await expect(ctx?.appendEntry?.("late", {})).rejects.toThrow(/not written/);
    expect(ctx?.currentInbound?.()).toEqual([]);
  });

  it("reports /new around the switch (old agent's end, new agent's switch); a cancel keeps the session", async () => {
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    let keep = false;
    const w = await start(stream, {
      verdict: (e) =>
        keep && e.type === "session_before_switch" ? { cancel: true, reason: "busy" } : undefined,
    });
    const t = "web:new";
    await w.runtime.deliver(inbound(t, "one"));
    await waitIdle(w, t);
    const first = (await w.runtime.store.getThreadMeta(t))?.currentSessionId;

    await w.runtime.control(t, { type: "newSession" });
    await waitIdle(w, t);
    const second = (await w.runtime.store.getThreadMeta(t))?.currentSessionId;
    expect(second).not.toBe(first);
    expect(w.events.map((e) => e.type)).toEqual([
      "session_start",
      "session_before_switch",
      "session_shutdown",
      "session_switch",
    ]);
    expect(w.events[3]).toEqual({
      type: "session_switch",
      reason: "new",
      previousSessionId: first,
      sessionId: second,
    });

    keep = true;
    await w.runtime.control(t, { type: "newSession" });
    await waitIdle(w, t);
    expect((await w.runtime.store.getThreadMeta(t))?.currentSessionId).toBe(second);
    expect(w.sinks.noticesOf(t).at(-1)).toBe("Kept the current session: busy.");
  });

  it("reports compactions; a cancel from session_before_compact skips them", async () => {
    const summaries: string[] = [];
    const compaction: CompactionConfig = {
      settings: { enabled: true, reserveTokens: 1000, keepRecentTokens: 300 },
      complete: async (m): Promise<AssistantMessage> => {
        summaries.push("asked");
        return { ...createAssistantMessage(m), content: [{ type: "text", text: "SUMMARY" }] };
      },
    };
    let cancel = true;
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call).slice(0, 6)}`);
    const w = await start(stream, {
      compaction,
      contextWindow: 3000,
      verdict: (e) => (cancel && e.type === "session_before_compact" ? { cancel: true } : undefined),
    });
    const t = "web:compact-events";
    for (let i = 0; i < 5; i++) {
      await w.runtime.deliver(inbound(t, `msg ${i} ${"x".repeat(2000)}`));
      await waitIdle(w, t);
    }
    expect(summaries).toHaveLength(0);
    expect(w.events.filter((e) => e.type === "session_before_compact").length).toBeGreaterThan(0);
    expect((await sessionEntries(w.runtime.store, t)).some((e) => e.type === "compaction")).toBe(false);

    cancel = false;
    await w.runtime.deliver(inbound(t, `msg 5 ${"x".repeat(2000)}`));
    await waitIdle(w, t);
    expect(summaries).toHaveLength(1);
    const done = w.events.find((e) => e.type === "session_compact");
    expect(done).toMatchObject({ type: "session_compact" });
    if (done?.type === "session_compact") expect(done.tokensAfter).toBeLessThan(done.tokensBefore);
    expect((await sessionEntries(w.runtime.store, t)).some((e) => e.type === "compaction")).toBe(true);
  });
});
