import { describe, expect, it } from "vitest";
import type { AssistantMessageEvent, Context } from "../../src/agent/index.js";
import { createGate, lastUserText, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";

const model = scriptedModel({ cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } });
const context: Context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };

async function play(llm: ScriptedStream, signal?: AbortSignal) {
  const source = llm.streamFn(model, context, { signal });
  const events: AssistantMessageEvent[] = [];
  for await (const e of source) events.push(e);
  return { events, message: await source.result() };
}

describe("ScriptedStream", () => {
  it("speaks the protocol for thinking, text and tool calls, with usage, cost and the stop reason", async () => {
    const llm = new ScriptedStream([
      {
        thinking: "hmm",
        text: "Let me add.",
        toolCalls: [{ name: "add", args: { a: 1 } }],
        usage: { input: 1_000_000, output: 10 },
        responseId: "r1",
      },
    ]);
    const { events, message } = await play(llm);
    expect(events.map((e) => e.type)).toEqual([
      "start",
      "thinking_start",
      "thinking_delta",
      "thinking_end",
      "text_start",
      "text_delta",
      "text_delta",
      "text_delta",
      "text_end",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_delta",
      "toolcall_end",
      "done",
    ]);
    expect(message).toMatchObject({
      stopReason: "toolUse",
      responseId: "r1",
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "Let me add." },
        { type: "toolCall", id: "call_0_2", name: "add", arguments: { a: 1 } },
      ],
      usage: {
        input: 1_000_000,
        output: 10,
        totalTokens: 1_000_010,
        cost: { input: 1, output: expect.closeTo(0.00002, 10) },
      },
    });
  });

  it("uses an explicit stop reason and reports an error reply as stopReason error", async () => {
    const llm = new ScriptedStream([{ text: "cut", stopReason: "length" }, { error: "HTTP 429" }]);
    expect((await play(llm)).message.stopReason).toBe("length");
    const failed = await play(llm);
    expect(failed.events.at(-1)).toMatchObject({ type: "error", reason: "error" });
    expect(failed.message).toMatchObject({ stopReason: "error", errorMessage: "HTTP 429" });
  });

  it("answers from a responder once the queue is empty, and records every call", async () => {
    const llm = new ScriptedStream(["queued"]).respondWith((call) => `echo ${lastUserText(call)}`);
    expect((await play(llm)).message.content).toEqual([{ type: "text", text: "queued" }]);
    expect((await play(llm)).message.content).toEqual([{ type: "text", text: "echo hi" }]);
    await llm.waitForCalls(2);
    expect(llm.calls.map((c) => c.index)).toEqual([0, 1]);
    expect(llm.calls[0]?.context.messages).toEqual(context.messages);
  });

  it("ends with an error naming the call when no reply is scripted", async () => {
    const { message } = await play(new ScriptedStream());
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/no reply scripted for call #0/);
  });

  it("pauses at a gate and ends aborted with the content so far when the signal fires", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([
      { content: [{ type: "text", text: "Hel" }, gate, { type: "text", text: "lo" }] },
    ]);
    const controller = new AbortController();
    const done = play(llm, controller.signal);
    await gate.reached;
    controller.abort();
    const { events, message } = await done;
    expect(events.at(-1)).toMatchObject({ type: "error", reason: "aborted" });
    expect(message).toMatchObject({ stopReason: "aborted", content: [{ type: "text", text: "Hel" }] });
  });

  it("ends at once, aborted, when called with an aborted signal", async () => {
    const controller = new AbortController();
    controller.abort();
    const { events, message } = await play(new ScriptedStream(["never"]), controller.signal);
    expect(events.map((e) => e.type)).toEqual(["error"]);
    expect(message.stopReason).toBe("aborted");
  });
});
