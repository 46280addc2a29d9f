import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { Agent, type AgentEvent } from "../../src/agent/index.js";
import { createGate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { addTool, record, summarize, user } from "./helpers.js";

const model = scriptedModel();

describe("Agent: a plain reply", () => {
  it("emits the full event sequence and keeps the user message and the reply", async () => {
    const llm = new ScriptedStream([{ text: "Hello there", usage: { input: 10, output: 3 } }]);
    const agent = new Agent({
      initialState: { model, systemPrompt: "Be brief." },
      streamFn: llm.streamFn,
      sessionId: "thread-1",
    });
    const events = record(agent);

    await agent.prompt("hi");

    expect(summarize(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "update text_start",
      "update text_delta",
      "update text_end",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    const [prompt, reply] = agent.state.messages;
    expect(prompt).toMatchObject({ role: "user", content: [{ type: "text", text: "hi" }] });
    expect(reply).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Hello there" }],
      stopReason: "stop",
      usage: { input: 10, output: 3, totalTokens: 13 },
    });
    expect(agent.state.messages).toHaveLength(2);
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.messages).toEqual(agent.state.messages);
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.state.error).toBeUndefined();

    const call = llm.calls[0];
    expect(call?.context.systemPrompt).toBe("Be brief.");
    expect(call?.context.messages).toEqual([prompt]);
    expect(call?.options).toMatchObject({ reasoning: undefined, sessionId: "thread-1" });
  });

  it("sends images with the prompt text", async () => {
    const llm = new ScriptedStream(["A cat."]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    await agent.prompt("what is this?", [{ type: "image", data: "aGk=", mimeType: "image/png" }]);
    expect(llm.calls[0]?.context.messages[0]).toMatchObject({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
      ],
    });
  });

  it("accepts a message or several messages as the prompt", async () => {
    const llm = new ScriptedStream(["one", "two"]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    await agent.prompt(user("single"));
    await agent.prompt([user("first of two"), user("second of two")]);
    expect(llm.calls[0]?.context.messages).toMatchObject([{ content: "single" }]);
    expect(llm.calls[1]?.context.messages.slice(2)).toMatchObject([
      { content: "first of two" },
      { content: "second of two" },
    ]);
  });

  it("updates state before subscribers see an event", async () => {
    const llm = new ScriptedStream(["ok"]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    const seen: string[] = [];
    agent.subscribe((e) => {
      if (e.type === "message_update") seen.push(`streaming:${agent.state.streamMessage === e.message}`);
      if (e.type === "message_end") seen.push(`count:${agent.state.messages.length}`);
      if (e.type === "agent_end") seen.push(`isStreaming:${agent.state.isStreaming}`);
    });
    await agent.prompt("hi");
    expect(seen).toEqual([
      "count:1",
      "streaming:true",
      "streaming:true",
      "streaming:true",
      "count:2",
      "isStreaming:true",
    ]);
  });
});

describe("Agent: one tool round trip", () => {
  it("runs the tool, gives the model its result, and emits every tool event", async () => {
    const received: unknown[] = [];
    const llm = new ScriptedStream([
      { toolCalls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }], fragmentSize: 100 },
      "The sum is 5.",
    ]);
    const agent = new Agent({ initialState: { model, tools: [addTool(received)] }, streamFn: llm.streamFn });
    const events = record(agent);

    await agent.prompt("2+3?");

    expect(summarize(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "update toolcall_start",
      "update toolcall_delta",
      "update toolcall_end",
      "message_end assistant(toolUse)",
      "tool_start c1",
      "tool_end c1 ok",
      "message_start toolResult",
      "message_end toolResult(c1)",
      "turn_end",
      "turn_start",
      "message_start assistant",
      "update text_start",
      "update text_delta",
      "update text_end",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    expect(received).toEqual([{ a: 2, b: 3 }]);
    const start = events.find((e) => e.type === "tool_execution_start");
    expect(start).toEqual({
      type: "tool_execution_start",
      toolCallId: "c1",
      toolName: "add",
      args: { a: 2, b: 3 },
    });
    const end = events.find((e) => e.type === "tool_execution_end");
    expect(end).toMatchObject({
      result: { content: [{ type: "text", text: "5" }], details: { sum: 5 } },
      isError: false,
    });
    const firstTurnEnd = events.find((e) => e.type === "turn_end");
    expect(firstTurnEnd).toMatchObject({ toolResults: [{ toolCallId: "c1", isError: false }] });

    expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(agent.state.messages[2]).toMatchObject({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "add",
      content: [{ type: "text", text: "5" }],
      details: { sum: 5 },
      isError: false,
    });
    expect(llm.calls[0]?.context.tools?.map((t) => t.name)).toEqual(["add"]);
    expect(llm.calls[1]?.context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
  });

  it("streams partial tool-call arguments in toolcall_delta events", async () => {
    const llm = new ScriptedStream([
      { toolCalls: [{ id: "c1", name: "add", args: { a: 12, b: 30 } }] },
      "42",
    ]);
    const agent = new Agent({ initialState: { model, tools: [addTool()] }, streamFn: llm.streamFn });
    const partialArgs: unknown[] = [];
    agent.subscribe((e) => {
      if (e.type === "message_update" && e.assistantMessageEvent.type === "toolcall_delta") {
        const block = e.message.content[0];
        if (block?.type === "toolCall") partialArgs.push({ ...block.arguments });
      }
    });
    await agent.prompt("12+30?");
    expect(partialArgs.length).toBeGreaterThan(1);
    expect(partialArgs.at(-1)).toEqual({ a: 12, b: 30 });
    expect(partialArgs[0]).not.toEqual({ a: 12, b: 30 });
  });

  it("reports tool progress as tool_execution_update events", async () => {
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "count", args: {} }] }, "done"]);
    const agent = new Agent({
      initialState: {
        model,
        tools: [
          {
            name: "count",
            label: "Count",
            description: "Counts",
            parameters: Type.Object({}),
            async execute(_id, _params, _signal, onUpdate) {
              onUpdate?.({ content: [{ type: "text", text: "1" }], details: 1 });
              onUpdate?.({ content: [{ type: "text", text: "2" }], details: 2 });
              return { content: [{ type: "text", text: "counted" }], details: 2 };
            },
          },
        ],
      },
      streamFn: llm.streamFn,
    });
    const events = record(agent);
    await agent.prompt("count");
    const tools = events.filter((e) => e.type.startsWith("tool_execution"));
    expect(tools.map((e) => e.type)).toEqual([
      "tool_execution_start",
      "tool_execution_update",
      "tool_execution_update",
      "tool_execution_end",
    ]);
    expect(tools[2]).toMatchObject({ toolCallId: "c1", toolName: "count", partialResult: { details: 2 } });
  });
});

describe("Agent: control", () => {
  it("rejects prompt() during a run with a message pointing to steer() and followUp()", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([{ content: [gate, { type: "text", text: "done" }] }]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    const run = agent.prompt("first");
    await gate.reached;
    expect(agent.state.isStreaming).toBe(true);
    await expect(agent.prompt("second")).rejects.toThrow(/steer\(\).*followUp\(\)/);
    await expect(agent.continue()).rejects.toThrow(/already running/);
    expect(() => agent.reset()).toThrow(/abort\(\)/);
    gate.release();
    await run;
    expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("waitForIdle resolves when the run has ended", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([{ content: [gate, { type: "text", text: "done" }] }]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    await agent.waitForIdle();
    void agent.prompt("go");
    const idle = agent.waitForIdle();
    await gate.reached;
    gate.release();
    await idle;
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.state.messages).toHaveLength(2);
  });

  it("isolates a throwing subscriber and stops delivering after unsubscribe", async () => {
    const llm = new ScriptedStream(["one", "two"]);
    const failures: string[] = [];
    const agent = new Agent({
      initialState: { model },
      streamFn: llm.streamFn,
      onListenerError: (error, event) => failures.push(`${event.type}: ${(error as Error).message}`),
    });
    agent.subscribe(() => {
      throw new Error("listener bug");
    });
    agent.subscribe(async (e) => {
      if (e.type === "agent_end") throw new Error("async listener bug");
    });
    const events = record(agent);
    const late: AgentEvent[] = [];
    const unsubscribe = agent.subscribe((e) => late.push(e));

    await agent.prompt("hi");
    expect(summarize(events).at(-1)).toBe("agent_end");
    expect(agent.state.messages).toHaveLength(2);
    expect(failures).toContain("agent_start: listener bug");
    await expect.poll(() => failures).toContain("agent_end: async listener bug");

    unsubscribe();
    const before = late.length;
    await agent.prompt("again");
    expect(late).toHaveLength(before);
    expect(agent.state.messages).toHaveLength(4);
  });

  it("reset() clears history, error and queues", async () => {
    const llm = new ScriptedStream([{ error: "boom" }]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    await agent.prompt("hi");
    agent.followUp(user("later"));
    expect(agent.state.error).toBe("boom");
    agent.reset();
    expect(agent.state.messages).toEqual([]);
    expect(agent.state.error).toBeUndefined();
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("setters replace the system prompt, tools and history", async () => {
    const llm = new ScriptedStream(["a"]);
    const agent = new Agent({ initialState: { model }, streamFn: llm.streamFn });
    agent.setSystemPrompt("You are terse.");
    agent.setTools([addTool()]);
    agent.replaceMessages([user("old question")]);
    agent.appendMessage(user("new question"));
    await agent.continue();
    expect(llm.calls[0]?.context).toMatchObject({
      systemPrompt: "You are terse.",
      tools: [{ name: "add" }],
      messages: [{ content: "old question" }, { content: "new question" }],
    });
    agent.clearMessages();
    expect(agent.state.messages).toEqual([]);
  });
});

describe("Agent: model and reasoning level", () => {
  it("applies a model and thinking-level change made during a run from the next LLM call", async () => {
    const gate = createGate();
    const other = scriptedModel({ id: "scripted-2", provider: "other" });
    const llm = new ScriptedStream([
      { content: [gate, { type: "toolCall", id: "c1", name: "add", args: { a: 1, b: 1 } }] },
      "2",
    ]);
    const providers: string[] = [];
    const agent = new Agent({
      initialState: { model, thinkingLevel: "low", tools: [addTool()] },
      streamFn: llm.streamFn,
      getApiKey: (provider) => {
        providers.push(provider);
        return `key-for-${provider}`;
      },
    });
    const run = agent.prompt("1+1?");
    await gate.reached;
    agent.setModel(other);
    agent.setThinkingLevel("high");
    gate.release();
    await run;

    expect(llm.calls.map((c) => c.model.id)).toEqual(["scripted-1", "scripted-2"]);
    expect(llm.calls.map((c) => c.options.reasoning)).toEqual(["low", "high"]);
    expect(llm.calls.map((c) => c.options.apiKey)).toEqual(["key-for-scripted", "key-for-other"]);
    expect(providers).toEqual(["scripted", "other"]);
  });

  it("passes no reasoning option when thinking is off", async () => {
    const llm = new ScriptedStream(["a"]);
    const agent = new Agent({ initialState: { model, thinkingLevel: "off" }, streamFn: llm.streamFn });
    await agent.prompt("hi");
    expect(llm.calls[0]?.options.reasoning).toBeUndefined();
  });
});
