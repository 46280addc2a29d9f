/**
 * The runtime contract suite: every `Runtime` implementation runs it (embedded-runtime.test.ts,
 * redis-runtime.test.ts). Each test builds a fresh runtime through the given factory, on a test
 * clock that moves only when the test advances it; tests wait on what the runtime does (lease
 * events, recorded sink events, gates), never on time.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createAssistantMessage } from "../../src/agent/llm/usage.js";
import { SKIPPED_FOR_STEERING_TEXT } from "../../src/agent/tool-execution.js";
import type { AgentMessage } from "../../src/agent/types.js";
import { createGate, type Gate, lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import {
  gatedTool,
  type HarnessFactory,
  inbound,
  type RuntimeHarness,
  sessionEntries,
  sessionMessages,
  type ToolSeen,
  textOf,
  waitIdle,
} from "./support/harness.js";

function line(m: AgentMessage): string {
  const role = (m as { role: string }).role;
  const stop = m.role === "assistant" && m.stopReason !== "stop" ? `(${m.stopReason})` : "";
  return `${role}${stop}:${textOf(m)}`;
}

function userTexts(messages: AgentMessage[]): string[] {
  return messages.filter((m) => m.role === "user").map(textOf);
}

export function runtimeContract(name: string, makeHarness: HarnessFactory): void {
  describe(`${name} runtime contract`, () => {
    let h: RuntimeHarness | undefined;
    const gates: Gate[] = [];
    afterEach(async () => {
      for (const g of gates.splice(0)) g.release();
      await h?.close();
      h = undefined;
    });
    const newThread = () => `web:${randomUUID().slice(0, 8)}`;
    const gate = () => {
      const g = createGate();
      gates.push(g);
      return g;
    };

    it("an idle thread starts a run; the answer is in the session and the run's events reach its sink", async () => {
      const stream = new ScriptedStream((call) => `you said: ${lastUserText(call)}`);
      h = await makeHarness({ stream });
      const t = newThread();
      const result = await h.runtime.deliver(inbound(t, "hello"));
      expect(result).toMatchObject({ status: "queued", idle: true, depth: 1 });
      await waitIdle(h, t);
      expect((await sessionMessages(h.store, t)).map(line)).toEqual([
        "user:hello",
        "assistant:you said: hello",
      ]);
      const runs = h.sinks.runsOf(t);
      expect(runs).toHaveLength(1);
      expect(runs[0]?.closed).toBe(true);
      expect(runs[0]?.events.map((e) => e.type)).toContain("agent_end");
    });

    it("a steer arriving mid-tool skips the pending tool calls and reaches the next model call", async () => {
      const slow = gate();
      const fast = { runs: 0 };
      const stream = new ScriptedStream([
        {
          toolCalls: [
            { name: "slow", args: {} },
            { name: "fast", args: {} },
          ],
        },
        "changed course",
      ]);
      h = await makeHarness({
        stream,
        tools: [gatedTool("slow", () => slow), gatedTool("fast", () => undefined, fast)],
      });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "do both"));
      await slow.reached;
      expect(await h.runtime.deliver(inbound(t, "only the slow one"), "steer")).toMatchObject({
        status: "queued",
        idle: false,
      });
      slow.release();
      await waitIdle(h, t);
      expect(fast.runs).toBe(0);
      expect(stream.calls).toHaveLength(2);
      expect(stream.calls[1]?.context.messages.map(line)).toEqual([
        "user:do both",
        "assistant(toolUse):",
        "toolResult:slow done",
        `toolResult:${SKIPPED_FOR_STEERING_TEXT}`,
        "user:only the slow one",
      ]);
    });

    it("a follow-up waits until the agent would stop, then runs", async () => {
      const g = gate();
      const stream = new ScriptedStream([
        { content: [{ type: "text", text: "first " }, g, { type: "text", text: "answer" }] },
        "second answer",
      ]);
      h = await makeHarness({ stream });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "one"));
      await g.reached;
      expect(await h.runtime.deliver(inbound(t, "two"), "followUp")).toMatchObject({
        status: "queued",
        idle: false,
      });
      g.release();
      await waitIdle(h, t);
      expect((await sessionMessages(h.store, t)).map(line)).toEqual([
        "user:one",
        "assistant:first answer",
        "user:two",
        "assistant:second answer",
      ]);
    });

    it("collect merges messages arriving within the debounce window into one message", async () => {
      const stream = new ScriptedStream((call) => `got ${lastUserText(call)}`);
      h = await makeHarness({ stream, collectDebounceMs: 400 });
      const t = newThread();
      for (const text of ["one", "two", "three"]) await h.runtime.deliver(inbound(t, text), "collect");
      // The holder waits out the window on the clock; nothing is taken before it ends.
      await h.clock.sleeping(400);
      expect(stream.calls).toHaveLength(0);
      await h.clock.advance(399);
      expect(stream.calls).toHaveLength(0);
      await h.clock.advance(1);
      await waitIdle(h, t);
      expect(stream.calls).toHaveLength(1);
      expect(userTexts(await sessionMessages(h.store, t))).toEqual(["one\n\ntwo\n\nthree"]);
    });

    it("interrupt aborts the run, discards what was queued before it and runs the newest message", async () => {
      const g = gate();
      const stream = new ScriptedStream([
        { content: [{ type: "text", text: "working" }, g] },
        "fresh answer",
      ]);
      h = await makeHarness({ stream });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "long task"));
      await g.reached;
      await h.runtime.deliver(inbound(t, "queued"), "followUp");
      const r = await h.runtime.deliver(inbound(t, "new plan"), "interrupt");
      expect(r).toMatchObject({ status: "queued", dropped: [{ preview: "queued" }] });
      await waitIdle(h, t);
      expect((await sessionMessages(h.store, t)).map(line)).toEqual([
        "user:long task",
        "assistant(aborted):working",
        "user:new plan",
        "assistant:fresh answer",
      ]);
      expect(h.sinks.noticesOf(t).join("\n")).toContain('discarded 1 queued message: "queued"');
    });

    it("a full inbox refuses the message and tells the thread what was dropped", async () => {
      const g = gate();
      const stream = new ScriptedStream([{ content: [g, { type: "text", text: "a" }] }]);
      stream.respondWith((call) => `ack ${lastUserText(call)}`);
      h = await makeHarness({ stream, inboxCap: 2 });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "start"));
      await g.reached;
      expect(await h.runtime.deliver(inbound(t, "f1"), "followUp")).toMatchObject({
        status: "queued",
        depth: 1,
      });
      expect(await h.runtime.deliver(inbound(t, "f2"), "followUp")).toMatchObject({
        status: "queued",
        depth: 2,
      });
      expect(await h.runtime.deliver(inbound(t, "f3"), "followUp")).toEqual({ status: "refused", depth: 2 });
      expect(h.sinks.noticesOf(t)).toEqual([expect.stringContaining('(limit 2): dropped "f3" from Ada')]);
      g.release();
      await waitIdle(h, t);
      expect(userTexts(await sessionMessages(h.store, t))).toEqual(["start", "f1", "f2"]);
    });

    it("a duplicate event id gives one run", async () => {
      const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
      h = await makeHarness({ stream });
      const t = newThread();
      const m = inbound(t, "once", `web:event:${randomUUID()}`);
      const [a, b] = await Promise.all([h.runtime.deliver(m), h.runtime.deliver({ ...m })]);
      expect([a.status, b.status].sort()).toEqual(["duplicate", "queued"]);
      expect((await h.runtime.deliver({ ...m })).status).toBe("duplicate");
      await waitIdle(h, t);
      expect(stream.calls).toHaveLength(1);
      expect(userTexts(await sessionMessages(h.store, t))).toEqual(["once"]);
    });

    it("keeps the per-thread order across modes", async () => {
      const g = gate();
      const stream = new ScriptedStream([{ content: [g, { type: "text", text: "first" }] }]);
      stream.respondWith((call) => `ack ${lastUserText(call)}`);
      h = await makeHarness({ stream });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "m0"));
      await g.reached;
      const modes = ["followUp", "steer", "followUp", "followUp", "steer", "steer"] as const;
      for (const [i, mode] of modes.entries()) await h.runtime.deliver(inbound(t, `m${i + 1}`), mode);
      g.release();
      await waitIdle(h, t);
      expect(userTexts(await sessionMessages(h.store, t))).toEqual([
        "m0",
        "m1",
        "m2",
        "m3",
        "m4",
        "m5",
        "m6",
      ]);
    });

    it("runs different threads in parallel up to the concurrency limit", async () => {
      const perCall: Gate[] = [];
      const stream = new ScriptedStream(() => {
        const g = gate();
        perCall.push(g);
        return { content: [g, { type: "text", text: "done" }] };
      });
      h = await makeHarness({ stream, concurrency: 2 });
      const threads = [newThread(), newThread(), newThread()];
      for (const t of threads) await h.runtime.deliver(inbound(t, `hi ${t}`));
      await stream.waitForCalls(2);
      await Promise.all(perCall.slice(0, 2).map((g) => g.reached));
      const statuses = await Promise.all(threads.map((t) => h?.runtime.status(t)));
      expect(statuses.filter((s) => s?.active)).toHaveLength(2);
      expect(stream.calls).toHaveLength(2);
      perCall[0]?.release();
      await stream.waitForCalls(3);
      for (const g of perCall) g.release();
      for (const t of threads) await waitIdle(h, t);
      for (const t of threads) expect(userTexts(await sessionMessages(h.store, t))).toEqual([`hi ${t}`]);
    });

    it("/stop aborts a running tool at once (no poll needed) and the thread stays quiet", async () => {
      const g = gate();
      const seen: ToolSeen = { runs: 0 };
      const stream = new ScriptedStream([{ toolCalls: [{ name: "slow", args: {} }] }]);
      stream.respondWith((call) => `ack ${lastUserText(call)}`);
      h = await makeHarness({ stream, tools: [gatedTool("slow", () => g, seen)] });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "start the tool"));
      await g.reached;
      await h.runtime.deliver(inbound(t, "queued behind"), "followUp");
      const sentAt = h.clock.now();
      const r = await h.runtime.deliver(inbound(t, "/stop"));
      expect(r).toMatchObject({
        status: "stopped",
        wasRunning: true,
        discarded: [{ preview: "queued behind" }],
      });
      await waitIdle(h, t);
      // The stop reached the tool through the control notice: the clock never moved.
      expect(seen.aborted).toBe(true);
      expect(h.clock.now()).toBe(sentAt);
      expect(stream.calls).toHaveLength(1);
      const messages = await sessionMessages(h.store, t);
      expect(messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
      // The stop does not leak into the next run.
      await h.runtime.deliver(inbound(t, "next"));
      await waitIdle(h, t);
      expect((await sessionMessages(h.store, t)).map(line).slice(-2)).toEqual([
        "user:next",
        "assistant:ack next",
      ]);
    });

    it("a model and thinking-level change reach the running agent at its next model call", async () => {
      const g = gate();
      const stream = new ScriptedStream([{ toolCalls: [{ name: "slow", args: {} }] }, "done"]);
      h = await makeHarness({ stream, tools: [gatedTool("slow", () => g)] });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "go"));
      await g.reached;
      expect(await h.runtime.control(t, { type: "setModel", model: "scripted/other" })).toMatchObject({
        wasRunning: true,
      });
      await h.runtime.control(t, { type: "setThinkingLevel", level: "high" });
      g.release();
      await waitIdle(h, t);
      expect(stream.calls.map((c) => c.model.id)).toEqual(["scripted-1", "other"]);
      expect(stream.calls[1]?.options.reasoning).toBe("high");
      const entries = await sessionEntries(h.store, t);
      expect(entries).toContainEqual(expect.objectContaining({ type: "model_change", modelId: "other" }));
      expect(entries).toContainEqual(
        expect.objectContaining({ type: "thinking_level_change", thinkingLevel: "high" }),
      );
      expect((await h.runtime.status(t)).meta).toMatchObject({
        model: "scripted/other",
        thinkingLevel: "high",
      });
    });

    it("a model change made while the thread is idle reaches the agent kept from its last run", async () => {
      const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
      h = await makeHarness({ stream });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "one"));
      await waitIdle(h, t);
      await h.runtime.control(t, { type: "setModel", model: "scripted/other" });
      await h.runtime.deliver(inbound(t, "two"));
      await waitIdle(h, t);
      expect(stream.calls.map((c) => c.model.id)).toEqual(["scripted-1", "other"]);
      expect((await sessionMessages(h.store, t)).map(line)).toEqual([
        "user:one",
        "assistant:ack one",
        "user:two",
        "assistant:ack two",
      ]);
    });

    it("newSession starts a fresh session and keeps the old one", async () => {
      const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
      h = await makeHarness({ stream });
      const t = newThread();
      await h.runtime.deliver(inbound(t, "old topic"));
      await waitIdle(h, t);
      await h.runtime.control(t, { type: "newSession" });
      await waitIdle(h, t);
      await h.runtime.deliver(inbound(t, "new topic"));
      await waitIdle(h, t);
      expect(userTexts(await sessionMessages(h.store, t))).toEqual(["new topic"]);
      expect(await h.store.listSessions(t)).toHaveLength(2);
      expect(stream.calls.at(-1)?.context.messages.map(line)).toEqual(["user:new topic"]);
    });

    it("status shows an active run and the inbox depth", async () => {
      const g = gate();
      const stream = new ScriptedStream([{ content: [g, { type: "text", text: "x" }] }]);
      stream.respondWith(() => "y");
      h = await makeHarness({ stream });
      const t = newThread();
      expect(await h.runtime.status(t)).toEqual({
        active: false,
        inboxDepth: 0,
        meta: undefined,
        mode: "steer",
      });
      await h.runtime.deliver(inbound(t, "a"));
      await g.reached;
      await h.runtime.deliver(inbound(t, "b"), "followUp");
      expect(await h.runtime.status(t)).toMatchObject({ active: true, inboxDepth: 1 });
      g.release();
      await waitIdle(h, t);
      expect((await h.runtime.status(t)).contextTokens).toBeGreaterThan(0);
    });

    it("compact summarises the session on demand; the thread is told the tokens before and after", async () => {
      const summaries: string[] = [];
      const stream = new ScriptedStream((call) => `ack ${lastUserText(call).slice(0, 5)}`);
      h = await makeHarness({
        stream,
        defaultMode: "followUp",
        compaction: {
          settings: { enabled: false, reserveTokens: 1000, keepRecentTokens: 200 },
          complete: async (model) => {
            summaries.push("asked");
            return { ...createAssistantMessage(model), content: [{ type: "text", text: "THE SUMMARY" }] };
          },
        },
      });
      const t = newThread();
      for (const word of ["alpha", "bravo", "charl"]) {
        await h.runtime.deliver(inbound(t, `${word} ${"x".repeat(1200)}`));
        await waitIdle(h, t);
      }
      const before = await h.runtime.status(t);
      expect(before.mode).toBe("followUp");
      expect(await h.runtime.control(t, { type: "compact" })).toEqual({ wasRunning: false, discarded: [] });
      await h.sinks.waitFor(() => h?.sinks.noticesOf(t).length === 1);
      await waitIdle(h, t);
      expect(summaries).toHaveLength(1);
      expect(h.sinks.noticesOf(t)[0]).toMatch(/^Compacted the conversation: about [\d,]+ → [\d,]+ tokens\.$/);
      const messages = await sessionMessages(h.store, t);
      expect(messages[0]?.role).toBe("compactionSummary");
      expect((await h.runtime.status(t)).contextTokens).toBeLessThan(before.contextTokens ?? 0);
    });
  });
}
