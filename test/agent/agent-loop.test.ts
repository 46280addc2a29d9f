import { describe, expect, it } from "vitest";
import {
  type AgentContext,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  agentLoop,
  agentLoopContinue,
  defaultConvertToLlm,
  type Message,
  runAgentLoop,
  type StreamFn,
} from "../../src/agent/index.js";
import { ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { addTool, summarize, user } from "./helpers.js";

const model = scriptedModel();

function config(extra: Partial<AgentLoopConfig> = {}): AgentLoopConfig {
  return { model, convertToLlm: defaultConvertToLlm, ...extra };
}

async function drain(stream: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe("agentLoop (event stream)", () => {
  it("streams the run's events and resolves result() with the new messages; the caller's context is untouched", async () => {
    const llm = new ScriptedStream(["Hi!"]);
    const context: AgentContext = { systemPrompt: "sys", messages: [user("earlier")] };
    const stream = agentLoop([user("hello")], context, config(), undefined, llm.streamFn);
    const events = await drain(stream);

    expect(summarize(events).filter((l) => !l.startsWith("update"))).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    const messages = await stream.result();
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(events.at(-1)).toEqual({ type: "agent_end", messages });
    expect(context.messages).toHaveLength(1);
    expect(llm.calls[0]?.context.messages).toHaveLength(2);
  });

  it("accepts a stream function that returns its stream through a promise", async () => {
    const llm = new ScriptedStream(["async ok"]);
    const asyncStreamFn: StreamFn = async (m, c, o) => llm.streamFn(m, c, o);
    const messages = await agentLoop(
      [user("hi")],
      { systemPrompt: "", messages: [] },
      config(),
      undefined,
      asyncStreamFn,
    ).result();
    expect(messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "stop",
      content: [{ text: "async ok" }],
    });
  });

  it("agentLoopContinue answers a trailing tool result and refuses a finished reply or an empty context", async () => {
    const llm = new ScriptedStream(["continued"]);
    const history: AgentMessage[] = [
      user("2+2?"),
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "c1", name: "add", arguments: { a: 2, b: 2 } }],
        api: "scripted",
        provider: "scripted",
        model: "scripted-1",
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "toolUse",
        timestamp: 1,
      },
      {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "add",
        content: [{ type: "text", text: "4" }],
        isError: false,
        timestamp: 2,
      },
    ];
    const stream = agentLoopContinue(
      { systemPrompt: "", messages: history },
      config(),
      undefined,
      llm.streamFn,
    );
    const events = await drain(stream);
    expect(summarize(events).filter((l) => !l.startsWith("update"))).toEqual([
      "agent_start",
      "turn_start",
      "message_start assistant",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    const added = await stream.result();
    expect(added).toHaveLength(1);
    expect(llm.calls[0]?.context.messages).toHaveLength(3);

    expect(() =>
      agentLoopContinue({ systemPrompt: "", messages: [] }, config(), undefined, llm.streamFn),
    ).toThrow(/no messages/);
    const finished = [...history, added[0] as AgentMessage];
    expect(() =>
      agentLoopContinue({ systemPrompt: "", messages: finished }, config(), undefined, llm.streamFn),
    ).toThrow(/finished assistant reply/);
  });
});

describe("agent loop hooks", () => {
  it("transformContext and convertToLlm shape what the model sees, not the history", async () => {
    const llm = new ScriptedStream(["ok"]);
    const seen: number[] = [];
    const messages = await runAgentLoop(
      [user("newest")],
      { systemPrompt: "", messages: [user("old 1"), user("old 2")] },
      config({
        transformContext: async (ms) => {
          seen.push(ms.length);
          return ms.slice(-1);
        },
        convertToLlm: (ms) =>
          ms.map(
            (m): Message =>
              m.role === "user" ? { ...m, content: `[chat] ${m.content as string}` } : (m as Message),
          ),
      }),
      () => {},
      undefined,
      llm.streamFn,
    );
    expect(seen).toEqual([3]);
    expect(llm.calls[0]?.context.messages).toEqual([expect.objectContaining({ content: "[chat] newest" })]);
    expect(messages[0]).toMatchObject({ content: "newest" });
  });

  it("getApiKey is asked before every call and falls back to apiKey; stream options pass through", async () => {
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "add", args: { a: 1, b: 1 } }] }, "2"]);
    let asked = 0;
    await runAgentLoop(
      [user("1+1")],
      { systemPrompt: "", messages: [], tools: [addTool()] },
      config({
        apiKey: "fallback",
        getApiKey: () => (asked++ === 0 ? "fresh" : undefined),
        sessionId: "s-1",
        streamOptions: { temperature: 0.2, maxTokens: 50 },
        thinkingLevel: "medium",
      }),
      () => {},
      undefined,
      llm.streamFn,
    );
    expect(llm.calls.map((c) => c.options.apiKey)).toEqual(["fresh", "fallback"]);
    expect(llm.calls[0]?.options).toMatchObject({
      sessionId: "s-1",
      temperature: 0.2,
      maxTokens: 50,
      reasoning: "medium",
    });
  });

  it("a throwing transformContext ends the turn with an error message", async () => {
    const llm = new ScriptedStream([]);
    const messages = await runAgentLoop(
      [user("hi")],
      { systemPrompt: "", messages: [] },
      config({
        transformContext: () => {
          throw new Error("pruning failed");
        },
      }),
      () => {},
      undefined,
      llm.streamFn,
    );
    expect(messages.at(-1)).toMatchObject({
      stopReason: "error",
      errorMessage: "The model call failed: pruning failed",
    });
    expect(llm.calls).toHaveLength(0);
  });

  it("a steering source that throws mid-batch skips the remaining calls and ends the run with an error", async () => {
    const llm = new ScriptedStream([
      {
        toolCalls: [
          { id: "c1", name: "add", args: { a: 1, b: 1 } },
          { id: "c2", name: "add", args: { a: 2, b: 2 } },
        ],
      },
    ]);
    let reads = 0;
    const events: AgentEvent[] = [];
    const messages = await runAgentLoop(
      [user("go")],
      { systemPrompt: "", messages: [], tools: [addTool()] },
      config({
        getSteeringMessages: async () => {
          if (reads++ > 0) throw new Error("redis down");
          return [];
        },
      }),
      (e) => {
        events.push(e);
      },
      undefined,
      llm.streamFn,
    );
    expect(messages.map((m) => (m.role === "assistant" ? `assistant(${m.stopReason})` : m.role))).toEqual([
      "user",
      "assistant(toolUse)",
      "toolResult",
      "toolResult",
      "assistant(error)",
    ]);
    expect(messages[3]).toMatchObject({ toolCallId: "c2", isError: true });
    expect(messages.at(-1)).toMatchObject({ errorMessage: "The agent run failed: redis down" });
    expect(summarize(events).slice(-6)).toEqual([
      "turn_end",
      "turn_start",
      "message_start assistant",
      "message_end assistant(error)",
      "turn_end",
      "agent_end",
    ]);
  });

  it("awaits an async event sink before going on", async () => {
    const llm = new ScriptedStream(["ok"]);
    const order: string[] = [];
    await runAgentLoop(
      [user("hi")],
      { systemPrompt: "", messages: [] },
      config(),
      async (e) => {
        if (e.type === "message_end") {
          await new Promise<void>((resolve) => setImmediate(resolve));
          order.push(`persisted ${(e.message as Message).role}`);
        }
        if (e.type === "agent_end") order.push("agent_end");
      },
      undefined,
      llm.streamFn,
    );
    expect(order).toEqual(["persisted user", "persisted assistant", "agent_end"]);
  });
});
