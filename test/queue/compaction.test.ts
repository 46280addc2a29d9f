/**
 * Compaction inside runs (embedded runtime, file store, scripted model with a small context
 * window): before every LLM call once the history is over the threshold, reused by the later calls
 * of the same run, and "compact once and retry" after a reply that overflowed the context window.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import type { AssistantMessage, Model } from "../../src/agent/llm/types.js";
import { createAssistantMessage } from "../../src/agent/llm/usage.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import type { AgentMessage, AgentTool } from "../../src/agent/types.js";
import { EmbeddedRuntime, type EmbeddedRuntimeOptions } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import type { AgentFactory, AgentFactoryContext } from "../../src/queue/types.js";
import type { CompactionConfig } from "../../src/queue/worker/holder-env.js";
import { ManualClock } from "../support/manual-clock.js";
import {
  createGate,
  lastUserText,
  type RecordedStreamCall,
  ScriptedStream,
  scriptedModel,
} from "../support/scripted-stream.js";
import { inbound, sessionEntries, sessionMessages, textOf, waitIdle } from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

const SUMMARY = "SUMMARY of the earlier work";

/** A tool whose result is 2,400 characters (about 600 tokens). */
const bigTool: AgentTool = {
  name: "big",
  label: "big",
  description: "Returns a lot of text.",
  parameters: Type.Object({ n: Type.Number() }),
  async execute(_id, params) {
    const n = Number((params as { n: number }).n);
    return { content: [{ type: "text", text: `result ${n} ${"y".repeat(2400)}` }], details: {} };
  },
};

interface World {
  runtime: EmbeddedRuntime;
  leases: LeaseLog;
  clock: ManualClock;
  sinks: RecordingSinks;
  summaries: string[];
  transformed: AgentMessage[][];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A runtime whose model has `contextWindow` tokens and compacts above `contextWindow − 1000`,
 * keeping about 300 tokens. `hook` chooses how the factory wires the runtime's per-call hook.
 */
async function start(
  stream: ScriptedStream,
  o: {
    contextWindow: number;
    hook: "none" | "own";
    tools?: AgentTool[];
    extra?: Partial<EmbeddedRuntimeOptions>;
  },
): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "sb-compaction-"));
  const summaries: string[] = [];
  const transformed: AgentMessage[][] = [];
  const model: Model = scriptedModel({ contextWindow: o.contextWindow });
  const factory: AgentFactory = (ctx: AgentFactoryContext) => {
    const own = async (messages: AgentMessage[]) => {
      transformed.push(messages);
      return messages;
    };
    const transformContext = o.hook === "own" ? own : undefined;
    return new Agent({
      initialState: { model, messages: ctx.messages, tools: [bigTool, ...(o.tools ?? [])] },
      streamFn: stream.streamFn,
      convertToLlm,
      ...(transformContext ? { transformContext } : {}),
    });
  };
  const compaction: CompactionConfig = {
    settings: { enabled: true, reserveTokens: 1000, keepRecentTokens: 300 },
    complete: async (m, context): Promise<AssistantMessage> => {
      summaries.push(JSON.stringify(context.messages));
      return { ...createAssistantMessage(m), content: [{ type: "text", text: SUMMARY }] };
    },
  };
  const sinks = new RecordingSinks();
  const clock = new ManualClock();
  const leases = new LeaseLog();
  const runtime = new EmbeddedRuntime({
    dataDir: dir,
    clock,
    onLease: leases.record,
    sinks: sinks.factory,
    agentFactory: factory,
    compaction,
    onError: () => {},
    ...o.extra,
  });
  await runtime.start();
  cleanups.push(async () => {
    await runtime.stop({ graceMs: 200 });
    rmSync(dir, { recursive: true, force: true });
  });
  return { runtime, leases, clock, sinks, summaries, transformed };
}

function seesSummary(call: RecordedStreamCall | undefined): boolean {
  return JSON.stringify(call?.context.messages[0] ?? "").includes(SUMMARY);
}

function toolResultsIn(call: RecordedStreamCall | undefined): string[] {
  return (call?.context.messages ?? [])
    .filter((m) => m.role === "toolResult")
    .map((m) => textOf(m).split(" ").slice(0, 2).join(" "));
}

/** Calls `big` six times (n = 1…6), then answers; answers "thanks" with a plain reply. */
function sixTools(): ScriptedStream {
  let n = 0;
  return new ScriptedStream((call) => {
    if (call.context.messages.at(-1)?.role === "user" && lastUserText(call) === "thanks")
      return "you are welcome";
    if (n < 6) {
      n++;
      return { toolCalls: [{ name: "big", args: { n } }] };
    }
    return "answered work please";
  });
}

describe("compaction within a run", () => {
  for (const hook of ["none", "own"] as const) {
    it(`compacts before the call that would go over the threshold; the later calls of the run reuse it (factory hook: ${hook})`, async () => {
      const stream = sixTools();
      const w = await start(stream, { contextWindow: 3000, hook });
      const t = `web:compact-run-${hook}`;
      await w.runtime.deliver(inbound(t, "work please"));
      await waitIdle(w, t);

      // 6 tool calls and the answer: 7 model calls in one run, and one summary request.
      expect(stream.calls).toHaveLength(7);
      expect(w.summaries).toHaveLength(1);
      const sizes = stream.calls.map((c) => JSON.stringify(c.context.messages).length);
      // Calls 1-4 grow; the 5th (after ~2,400 tokens of results) is compacted and smaller.
      expect(seesSummary(stream.calls[3])).toBe(false);
      expect(seesSummary(stream.calls[4])).toBe(true);
      expect(sizes[4]).toBeLessThan((sizes[3] ?? 0) / 2);
      expect(toolResultsIn(stream.calls[4])).toEqual(["result 4"]);
      // The later calls reuse that compaction: summary first, then the kept and newer results only.
      expect(seesSummary(stream.calls[5])).toBe(true);
      expect(toolResultsIn(stream.calls[5])).toEqual(["result 4", "result 5"]);
      expect(seesSummary(stream.calls[6])).toBe(true);
      expect(toolResultsIn(stream.calls[6])).toEqual(["result 4", "result 5", "result 6"]);
      if (hook === "own") {
        // The factory's own transform runs after the runtime's, on the compacted history.
        expect(w.transformed).toHaveLength(7);
        expect(w.transformed[4]?.[0]?.role).toBe("compactionSummary");
      }

      // The session has the compaction entry before the 5th reply; its context is the compacted one.
      const entries = await sessionEntries(w.runtime.store, t);
      const compactionAt = entries.findIndex((e) => e.type === "compaction");
      const replies = entries.flatMap((e, i) =>
        e.type === "message" && e.message.role === "assistant" ? [i] : [],
      );
      expect(compactionAt).toBeGreaterThan(replies[3] ?? Number.POSITIVE_INFINITY);
      expect(compactionAt).toBeLessThan(replies[4] ?? -1);
      const context = await sessionMessages(w.runtime.store, t);
      expect(context[0]?.role).toBe("compactionSummary");
      expect(textOf(context.at(-1) as AgentMessage)).toBe("answered work please");

      // The next run starts from the compacted history (the agent was kept, not rebuilt).
      await w.runtime.deliver(inbound(t, "thanks"));
      await waitIdle(w, t);
      const next = stream.calls[7];
      expect(seesSummary(next)).toBe(true);
      expect(toolResultsIn(next)).toEqual(["result 4", "result 5", "result 6"]);
      expect(lastUserText(next as RecordedStreamCall)).toBe("thanks");
    });
  }
});

/** Earlier exchanges of 2,000-character messages, then a reply that says the prompt is too long. */
async function overflowWorld(overflows: number) {
  let remaining = overflows;
  const stream = new ScriptedStream((call) => {
    if (lastUserText(call).startsWith("last") && remaining > 0) {
      remaining--;
      return { text: "", error: "prompt is too long: 120000 tokens > 100000 maximum" };
    }
    return `ok ${lastUserText(call).slice(0, 8)}`;
  });
  const w = await start(stream, { contextWindow: 100_000, hook: "none" });
  const t = `web:overflow-${overflows}`;
  for (let i = 0; i < 3; i++) {
    await w.runtime.deliver(inbound(t, `early ${i} ${"x".repeat(2000)}`));
    await waitIdle(w, t);
  }
  expect(w.summaries).toHaveLength(0);
  return { w, stream, t };
}

describe("a reply that overflowed the context window", () => {
  it("is compacted once and retried; the user sees only the answer; the failed reply is off the branch", async () => {
    const { w, stream, t } = await overflowWorld(1);
    await w.runtime.deliver(inbound(t, `last ${"z".repeat(2000)}`));
    await waitIdle(w, t);

    expect(w.summaries).toHaveLength(1);
    expect(stream.calls).toHaveLength(5);
    const retry = stream.calls[4];
    expect(seesSummary(retry)).toBe(true);
    expect(retry?.context.messages.map((m) => m.role)).toEqual(["user", "user"]);
    expect(lastUserText(retry as RecordedStreamCall).startsWith("last")).toBe(true);

    const run = w.sinks.runsOf(t).at(-1);
    const ends = run?.events.flatMap((e) => (e.type === "message_end" ? [e.message] : [])) ?? [];
    expect(ends.some((m) => m.role === "assistant" && m.stopReason === "error")).toBe(false);
    expect(ends.some((m) => m.role === "assistant" && textOf(m) === "ok last zzz")).toBe(true);
    expect(run?.closed).toBe(true);

    const context = await sessionMessages(w.runtime.store, t);
    expect(context.map((m) => m.role)).toEqual(["compactionSummary", "user", "assistant"]);
    expect(context.some((m) => m.role === "assistant" && m.stopReason === "error")).toBe(false);
    // The failed reply stays in the session file, on a side branch.
    const entries = await sessionEntries(w.runtime.store, t);
    expect(
      entries.some(
        (e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason === "error",
      ),
    ).toBe(true);
  });

  it("never loops: a second overflow after the retry is shown as it is", async () => {
    const { w, stream, t } = await overflowWorld(2);
    await w.runtime.deliver(inbound(t, `last ${"z".repeat(2000)}`));
    await waitIdle(w, t);

    expect(w.summaries).toHaveLength(1);
    expect(stream.calls).toHaveLength(5);
    const run = w.sinks.runsOf(t).at(-1);
    const errors = (run?.events ?? []).filter(
      (e) => e.type === "message_end" && e.message.role === "assistant" && e.message.stopReason === "error",
    );
    expect(errors).toHaveLength(1);
    expect(run?.events.at(-1)?.type).toBe("agent_end");

    // The thread goes on normally afterwards.
    await w.runtime.deliver(inbound(t, "again"));
    await waitIdle(w, t);
    expect(textOf((await sessionMessages(w.runtime.store, t)).at(-1) as AgentMessage)).toBe("ok again");
  });
});

describe("/compact (the compact control command)", () => {
  it("compacts an idle thread below the threshold, with the instructions, and says how much it saved", async () => {
    const stream = new ScriptedStream((call) => `ok ${lastUserText(call).slice(0, 7)}`);
    const w = await start(stream, {
      contextWindow: 100_000,
      hook: "none",
      extra: {
        modeOf: (threadKey) => (threadKey.endsWith("collect") ? "collect" : undefined),
        collectDebounceMs: 10,
      },
    });
    const t = "web:manual-collect";
    expect((await w.runtime.status(t)).contextTokens).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      await w.runtime.deliver(inbound(t, `early ${i} ${"x".repeat(2000)}`));
      // Collect mode: the holder waits out the window on the clock first.
      await w.clock.sleeping(10);
      await w.clock.advance(10);
      await waitIdle(w, t);
    }
    const before = await w.runtime.status(t);
    expect(before.mode).toBe("collect");
    expect(before.contextTokens).toBeGreaterThan(1500);
    expect(w.summaries).toHaveLength(0);

    const r = await w.runtime.control(t, { type: "compact", instructions: "keep the numbers" });
    expect(r).toEqual({ wasRunning: false, discarded: [] });
    await w.sinks.waitFor(() => w.sinks.noticesOf(t).length > 0);
    await waitIdle(w, t);
    expect(w.summaries).toHaveLength(1);
    expect(w.summaries[0]).toContain("keep the numbers");
    const notice = w.sinks.noticesOf(t)[0] ?? "";
    const m = /^Compacted the conversation: about ([\d,]+) → ([\d,]+) tokens\.$/.exec(notice);
    expect(m).not.toBeNull();
    const [from, to] = [Number(m?.[1]?.replace(/,/g, "")), Number(m?.[2]?.replace(/,/g, ""))];
    expect(to).toBeLessThan(from);
    const after = await w.runtime.status(t);
    expect(after.contextTokens).toBe(to);
    expect(after.mode).toBe("collect");
    expect((await w.runtime.status("web:other")).mode).toBe("steer");

    await w.runtime.deliver(inbound(t, "next"));
    await w.clock.sleeping(10);
    await w.clock.advance(10);
    await waitIdle(w, t);
    expect(seesSummary(stream.calls.at(-1))).toBe(true);
  });

  it("runs after the run in progress, before the messages queued behind it", async () => {
    const gate = createGate();
    const wait: AgentTool = {
      name: "wait",
      label: "wait",
      description: "Waits.",
      parameters: Type.Object({}),
      async execute() {
        await gate.arrive();
        return { content: [{ type: "text", text: "waited" }], details: {} };
      },
    };
    const stream = new ScriptedStream((call) => {
      if (call.context.messages.at(-1)?.role === "user" && lastUserText(call).startsWith("wait"))
        return { toolCalls: [{ name: "wait", args: {} }] };
      return `ok ${lastUserText(call).slice(0, 7)}`;
    });
    const w = await start(stream, { contextWindow: 100_000, hook: "none", tools: [wait] });
    const t = "web:manual-busy";
    for (let i = 0; i < 2; i++) {
      await w.runtime.deliver(inbound(t, `early ${i} ${"x".repeat(2000)}`));
      await waitIdle(w, t);
    }
    await w.runtime.deliver(inbound(t, `wait ${"w".repeat(2000)}`));
    await gate.reached;
    expect((await w.runtime.control(t, { type: "compact" })).wasRunning).toBe(true);
    await w.runtime.deliver(inbound(t, "after"), "followUp");
    gate.release();
    await waitIdle(w, t);

    const kinds = (await sessionEntries(w.runtime.store, t)).map((e) =>
      e.type === "message" ? `${e.message.role}:${textOf(e.message).slice(0, 7)}` : e.type,
    );
    const at = kinds.indexOf("compaction");
    expect(kinds.slice(at - 2, at + 3)).toEqual([
      "toolResult:waited",
      "assistant:ok wait",
      "compaction",
      "user:after",
      "assistant:ok afte",
    ]);
    expect(w.sinks.noticesOf(t).some((n) => n.startsWith("Compacted the conversation"))).toBe(true);
  });

  it("says so when there is not enough history", async () => {
    const stream = new ScriptedStream((call) => `ok ${lastUserText(call)}`);
    const w = await start(stream, { contextWindow: 100_000, hook: "none" });
    const t = "web:manual-short";
    await w.runtime.deliver(inbound(t, "hello"));
    await waitIdle(w, t);
    await w.runtime.control(t, { type: "compact" });
    await w.sinks.waitFor(() => w.sinks.noticesOf(t).length > 0);
    expect(w.sinks.noticesOf(t)).toEqual(["Nothing compacted: there is not enough history to compact yet."]);
    expect(w.summaries).toHaveLength(0);
  });
});
