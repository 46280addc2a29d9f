import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { Agent, type AgentTool, type AssistantMessage } from "../../src/agent/index.js";
import { createGate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { addTool, record, resultText, summarize, waitTool } from "./helpers.js";

const model = scriptedModel();

function agentWith(
  llm: ScriptedStream,
  tools: AgentTool[],
  extra: Partial<ConstructorParameters<typeof Agent>[0]> = {},
) {
  return new Agent({ initialState: { model, tools }, streamFn: llm.streamFn, ...extra });
}

describe("Agent: tool failures become error results and the run goes on", () => {
  it("answers an unknown tool with an error result naming the available tools", async () => {
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "nope", args: {} }] }, "Sorry."]);
    const agent = agentWith(llm, [addTool()]);
    const events = record(agent);
    await agent.prompt("go");

    expect(summarize(events).filter((l) => !l.startsWith("update"))).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant(toolUse)",
      "tool_start c1",
      "tool_end c1 error",
      "message_start toolResult",
      "message_end toolResult(c1, error)",
      "turn_end",
      "turn_start",
      "message_start assistant",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    expect(resultText(agent.state.messages[2])).toBe('Tool "nope" not found. Available tools: add.');
    expect(llm.calls[1]?.context.messages[2]).toMatchObject({ role: "toolResult", isError: true });
  });

  it('coerces "5" to 5 for a number parameter without changing the assistant message', async () => {
    const received: unknown[] = [];
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "add", args: { a: "5", b: 2 } }] }, "7"]);
    const agent = agentWith(llm, [addTool(received)]);
    const events = record(agent);
    await agent.prompt("5+2");

    expect(received).toEqual([{ a: 5, b: 2 }]);
    expect(resultText(agent.state.messages[2])).toBe("7");
    const call = (agent.state.messages[1] as AssistantMessage).content[0];
    expect(call).toMatchObject({ type: "toolCall", arguments: { a: "5", b: 2 } });
    expect(events.find((e) => e.type === "tool_execution_start")).toMatchObject({ args: { a: "5", b: 2 } });
  });

  it("rejects arguments of the wrong type with an error naming the path and showing the arguments", async () => {
    const received: unknown[] = [];
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "add", args: { a: "five" } }] }, "oops"]);
    const agent = agentWith(llm, [addTool(received)]);
    const events = record(agent);
    await agent.prompt("five plus?");

    expect(received).toEqual([]);
    const text = resultText(agent.state.messages[2]);
    expect(text).toContain('Invalid arguments for tool "add"');
    expect(text).toContain("/a: must be number");
    expect(text).toContain("/b: must have required property 'b'");
    expect(text).toContain('Arguments received: {"a":"five"}');
    expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({ isError: true });
    expect(llm.calls).toHaveLength(2);
  });

  it("turns a throwing tool into an error result with its message", async () => {
    const failing: AgentTool = {
      name: "write",
      label: "Write",
      description: "Writes",
      parameters: Type.Object({}),
      async execute() {
        throw new Error("disk full");
      },
    };
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "write", args: {} }] }, "It failed."]);
    const agent = agentWith(llm, [failing]);
    const events = record(agent);
    await agent.prompt("write it");

    expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({
      toolCallId: "c1",
      isError: true,
      result: { content: [{ type: "text", text: "disk full" }] },
    });
    expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(agent.state.error).toBeUndefined();
  });
});

describe("Agent: tool hooks", () => {
  it("beforeToolCall blocks a call with a reason; the tool does not run", async () => {
    const received: unknown[] = [];
    const seen: unknown[] = [];
    const llm = new ScriptedStream([
      {
        toolCalls: [
          { id: "c1", name: "add", args: { a: "1", b: 1 } },
          { id: "c2", name: "add", args: { a: 100, b: 1 } },
        ],
      },
      "ok",
    ]);
    const agent = agentWith(llm, [addTool(received)], {
      beforeToolCall: async ({ toolCall, args }) => {
        seen.push(args);
        return toolCall.id === "c2" ? { block: true, reason: "Denied by admin." } : undefined;
      },
    });
    const events = record(agent);
    await agent.prompt("go");

    expect(seen).toEqual([
      { a: 1, b: 1 },
      { a: 100, b: 1 },
    ]);
    expect(received).toEqual([{ a: 1, b: 1 }]);
    expect(resultText(agent.state.messages[3])).toBe("Denied by admin.");
    expect(summarize(events)).toContain("tool_end c2 error");
    expect(agent.state.messages[3]).toMatchObject({ toolCallId: "c2", isError: true });
  });

  it("afterToolCall replaces content, details and isError", async () => {
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "add", args: { a: 1, b: 2 } }] }, "ok"]);
    const agent = agentWith(llm, [addTool()], {
      afterToolCall: ({ result, isError }) => {
        expect(result.details).toEqual({ sum: 3 });
        expect(isError).toBe(false);
        return {
          content: [{ type: "text", text: "[redacted]" }],
          details: { redacted: true },
          isError: true,
        };
      },
    });
    await agent.prompt("go");
    expect(agent.state.messages[2]).toMatchObject({
      content: [{ type: "text", text: "[redacted]" }],
      details: { redacted: true },
      isError: true,
    });
  });

  it("a throwing beforeToolCall blocks the call with the error's message", async () => {
    const received: unknown[] = [];
    const llm = new ScriptedStream([{ toolCalls: [{ id: "c1", name: "add", args: { a: 1, b: 2 } }] }, "ok"]);
    const agent = agentWith(llm, [addTool(received)], {
      beforeToolCall: () => {
        throw new Error("approval store unreachable");
      },
    });
    await agent.prompt("go");
    expect(received).toEqual([]);
    expect(resultText(agent.state.messages[2])).toBe(
      'Tool call "add" was blocked: approval store unreachable',
    );
  });
});

describe("Agent: sequential and parallel tool execution", () => {
  const twoWaits = {
    toolCalls: [
      { id: "A", name: "wait", args: { label: "A" } },
      { id: "B", name: "wait", args: { label: "B" } },
    ],
  };

  it("sequential: each call runs and ends before the next starts", async () => {
    const gateA = createGate();
    void gateA.reached.then(() => gateA.release());
    const llm = new ScriptedStream([twoWaits, "done"]);
    const agent = agentWith(llm, [waitTool({ A: gateA })]);
    const events = record(agent);
    await agent.prompt("go");

    const lines = summarize(events);
    const toolPart = lines.slice(lines.indexOf("tool_start A"), lines.indexOf("turn_end"));
    expect(toolPart).toEqual([
      "tool_start A",
      "tool_end A ok",
      "message_start toolResult",
      "message_end toolResult(A)",
      "tool_start B",
      "tool_end B ok",
      "message_start toolResult",
      "message_end toolResult(B)",
    ]);
  });

  it("parallel: all start events first, tools overlap, results follow the assistant's order", async () => {
    const gateA = createGate();
    const llm = new ScriptedStream([twoWaits, "done"]);
    const agent = agentWith(llm, [waitTool({ A: gateA })], { toolExecution: "parallel" });
    // A finishes only after B has ended, so B ends first.
    agent.subscribe((e) => {
      if (e.type === "tool_execution_end" && e.toolCallId === "B") gateA.release();
    });
    const events = record(agent);
    await agent.prompt("go");

    const lines = summarize(events);
    const toolPart = lines.slice(lines.indexOf("tool_start A"), lines.indexOf("turn_end"));
    expect(toolPart).toEqual([
      "tool_start A",
      "tool_start B",
      "tool_end B ok",
      "tool_end A ok",
      "message_start toolResult",
      "message_end toolResult(A)",
      "message_start toolResult",
      "message_end toolResult(B)",
    ]);
    expect(agent.state.messages.slice(2, 4).map((m) => (m as { toolCallId: string }).toolCallId)).toEqual([
      "A",
      "B",
    ]);
    expect(llm.calls[1]?.context.messages.slice(2).map((m) => m.role)).toEqual(["toolResult", "toolResult"]);
  });

  it("parallel: a steering message that arrives after the assistant message skips every call of the batch", async () => {
    const ran: string[] = [];
    const llm = new ScriptedStream([twoWaits, "switched to plan B"]);
    const agent = agentWith(llm, [waitTool({}, ran)], { toolExecution: "parallel" });
    // Arrives once the assistant message with the calls is complete, before any call runs.
    agent.subscribe((e) => {
      if (e.type === "message_end" && e.message.role === "assistant" && e.message.stopReason === "toolUse")
        agent.steer({ role: "user", content: "stop, do plan B", timestamp: Date.now() });
    });
    const events = record(agent);
    await agent.prompt("go");

    expect(ran).toEqual([]);
    const lines = summarize(events);
    expect(lines.slice(lines.indexOf("tool_start A"), lines.indexOf("turn_end"))).toEqual([
      "tool_start A",
      "tool_start B",
      "tool_end A error",
      "tool_end B error",
      "message_start toolResult",
      "message_end toolResult(A, error)",
      "message_start toolResult",
      "message_end toolResult(B, error)",
    ]);
    expect(resultText(agent.state.messages[2])).toBe("Skipped due to queued user message.");
    expect(resultText(agent.state.messages[3])).toBe("Skipped due to queued user message.");
    // The steering message goes before the next call, right after the skipped results.
    expect(llm.calls[1]?.context.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "user",
    ]);
    expect(llm.calls[1]?.context.messages[4]).toMatchObject({ content: "stop, do plan B" });
  });

  it("parallel: a steering message during preparation (an approval) skips every call; a call that failed preparation keeps its error", async () => {
    const ran: string[] = [];
    const llm = new ScriptedStream([
      {
        toolCalls: [
          { id: "A", name: "wait", args: { label: "A" } },
          { id: "X", name: "nope", args: {} },
          { id: "B", name: "wait", args: { label: "B" } },
        ],
      },
      "ok",
    ]);
    let agent: Agent | undefined;
    agent = agentWith(llm, [waitTool({}, ran)], {
      toolExecution: "parallel",
      beforeToolCall: async ({ toolCall }) => {
        // The user writes while the approval of B is pending.
        if (toolCall.id === "B") agent?.steer({ role: "user", content: "never mind", timestamp: Date.now() });
        return undefined;
      },
    });
    await agent.prompt("go");

    expect(ran).toEqual([]);
    expect(agent.state.messages.slice(2, 5).map((m) => (m as { toolCallId: string }).toolCallId)).toEqual([
      "A",
      "X",
      "B",
    ]);
    expect(resultText(agent.state.messages[2])).toBe("Skipped due to queued user message.");
    expect(resultText(agent.state.messages[3])).toBe('Tool "nope" not found. Available tools: wait.');
    expect(resultText(agent.state.messages[4])).toBe("Skipped due to queued user message.");
    expect(agent.state.messages[5]).toMatchObject({ role: "user", content: "never mind" });
  });

  it("sequential: a steering message that arrives after the assistant message still lets the first call run", async () => {
    const ran: string[] = [];
    const llm = new ScriptedStream([twoWaits, "ok"]);
    const agent = agentWith(llm, [waitTool({}, ran)]);
    agent.subscribe((e) => {
      if (e.type === "message_end" && e.message.role === "assistant" && e.message.stopReason === "toolUse")
        agent.steer({ role: "user", content: "stop", timestamp: Date.now() });
    });
    await agent.prompt("go");
    expect(ran).toEqual(["A"]);
    expect(resultText(agent.state.messages[2])).toBe("waited A");
    expect(resultText(agent.state.messages[3])).toBe("Skipped due to queued user message.");
  });

  it("parallel: steering is read after the batch, so no call is skipped", async () => {
    const gateA = createGate();
    const llm = new ScriptedStream([twoWaits, "noted"]);
    const agent = agentWith(llm, [waitTool({ A: gateA })], { toolExecution: "parallel" });
    const run = agent.prompt("go");
    await gateA.reached;
    agent.steer({ role: "user", content: "also check C", timestamp: Date.now() });
    gateA.release();
    await run;
    expect(agent.state.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "user",
      "assistant",
    ]);
    expect(agent.state.messages.slice(2, 4).every((m) => m.role === "toolResult" && !m.isError)).toBe(true);
  });
});
