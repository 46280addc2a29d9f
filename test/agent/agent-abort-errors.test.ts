import { describe, expect, it } from "vitest";
import {
  Agent,
  type AgentTool,
  type AssistantMessage,
  SKIPPED_FOR_ABORT_TEXT,
} from "../../src/agent/index.js";
import { createGate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { record, resultText, summarize, user, waitTool } from "./helpers.js";

const model = scriptedModel();

function agentWith(llm: ScriptedStream, tools: AgentTool[] = []) {
  return new Agent({ initialState: { model, tools }, streamFn: llm.streamFn });
}

function last(agent: Agent): AssistantMessage {
  return agent.state.messages.at(-1) as AssistantMessage;
}

describe("Agent: abort", () => {
  it("while streaming: ends with an aborted message keeping partial content, emits agent_end, keeps queues", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([
      { content: [{ type: "text", text: "Hel" }, gate, { type: "text", text: "lo" }] },
    ]);
    const agent = agentWith(llm);
    const events = record(agent);
    const run = agent.prompt("hi");
    await gate.reached;
    agent.steer(user("steer me"));
    agent.followUp(user("follow me"));
    agent.abort();
    await run;

    expect(summarize(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "update text_start",
      "update text_delta",
      "update text_end",
      "message_end assistant(aborted)",
      "turn_end",
      "agent_end",
    ]);
    expect(last(agent)).toMatchObject({
      stopReason: "aborted",
      content: [{ type: "text", text: "Hel" }],
      errorMessage: "Request was aborted.",
    });
    expect(events.find((e) => e.type === "turn_end")).toMatchObject({ toolResults: [] });
    expect(agent.state.error).toBe("Request was aborted.");
    expect(agent.state.isStreaming).toBe(false);
    expect(agent.hasQueuedMessages()).toBe(true);

    // The kept messages drive the next run: steering first, the follow-up when it would stop.
    llm.enqueue("steered", "followed");
    await agent.continue();
    expect(llm.calls[1]?.context.messages.map((m) => (m.role === "user" ? m.content : m.role))).toEqual([
      [{ type: "text", text: "hi" }],
      "steer me",
    ]);
    expect(llm.calls[2]?.context.messages.at(-1)).toMatchObject({ content: "follow me" });
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("while a tool runs: the tool sees the abort, later calls are skipped, the run ends aborted", async () => {
    const first = createGate();
    const ran: string[] = [];
    const llm = new ScriptedStream([
      {
        toolCalls: [
          { id: "c1", name: "wait", args: { label: "first" } },
          { id: "c2", name: "wait", args: { label: "second" } },
        ],
      },
    ]);
    const agent = agentWith(llm, [waitTool({ first }, ran, true)]);
    const events = record(agent);
    const run = agent.prompt("go");
    await first.reached;
    expect(agent.state.pendingToolCalls).toEqual(new Set(["c1"]));
    agent.followUp(user("later"));
    agent.abort();
    await run;

    expect(ran).toEqual(["first"]);
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
      "tool_start c2",
      "tool_end c2 error",
      "message_start toolResult",
      "message_end toolResult(c2, error)",
      "turn_end",
      "turn_start",
      "message_start assistant",
      "message_end assistant(aborted)",
      "turn_end",
      "agent_end",
    ]);
    expect(resultText(agent.state.messages[2])).toBe("interrupted");
    expect(resultText(agent.state.messages[3])).toBe(SKIPPED_FOR_ABORT_TEXT);
    expect(last(agent).stopReason).toBe("aborted");
    expect(llm.calls).toHaveLength(1);
    expect(agent.hasQueuedMessages()).toBe(true);
    expect(agent.state.pendingToolCalls.size).toBe(0);
  });

  it("abort() when idle does nothing", async () => {
    const llm = new ScriptedStream(["ok"]);
    const agent = agentWith(llm);
    agent.abort();
    await agent.prompt("hi");
    expect(last(agent).stopReason).toBe("stop");
  });
});

describe("Agent: provider errors and continue()", () => {
  it("a provider error ends the run with turn_end (no tool results), agent_end and state.error", async () => {
    const llm = new ScriptedStream([{ text: "partial", error: "HTTP 529: overloaded" }]);
    const agent = agentWith(llm);
    const events = record(agent);
    await agent.prompt("hi");

    expect(summarize(events).filter((l) => !l.startsWith("update"))).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant(error)",
      "turn_end",
      "agent_end",
    ]);
    expect(last(agent)).toMatchObject({
      stopReason: "error",
      errorMessage: "HTTP 529: overloaded",
      content: [{ type: "text", text: "partial" }],
    });
    expect(agent.state.error).toBe("HTTP 529: overloaded");
  });

  it("an error reply with tool calls runs no tools", async () => {
    const received: string[] = [];
    const llm = new ScriptedStream([
      { toolCalls: [{ id: "c1", name: "wait", args: { label: "x" } }], error: "stream cut" },
    ]);
    const agent = agentWith(llm, [waitTool({}, received)]);
    await agent.prompt("go");
    expect(received).toEqual([]);
    expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("continue() after an error retries without sending the failed reply, and clears state.error", async () => {
    const llm = new ScriptedStream([{ error: "HTTP 500" }, "Recovered."]);
    const agent = agentWith(llm);
    await agent.prompt("hi");
    expect(agent.state.error).toBe("HTTP 500");

    await agent.continue();
    expect(llm.calls[1]?.context.messages.map((m) => m.role)).toEqual(["user"]);
    expect(agent.state.messages.map((m) => (m.role === "assistant" ? m.stopReason : m.role))).toEqual([
      "user",
      "error",
      "stop",
    ]);
    expect(agent.state.error).toBeUndefined();
  });

  it("continue() with nothing to answer rejects with a message saying what to do", async () => {
    const llm = new ScriptedStream(["done"]);
    const agent = agentWith(llm);
    await expect(agent.continue()).rejects.toThrow(/no messages/);
    await agent.prompt("hi");
    await expect(agent.continue()).rejects.toThrow(/prompt\(\)/);
    expect(agent.state.isStreaming).toBe(false);
  });

  it("a stream function that throws becomes an error message, never a crash", async () => {
    const llm = new ScriptedStream([{ throwError: "no provider for api scripted" }, "fine"]);
    const agent = agentWith(llm);
    await agent.prompt("hi");
    expect(last(agent)).toMatchObject({
      stopReason: "error",
      errorMessage: "The model call failed: no provider for api scripted",
    });
    await agent.continue();
    expect(last(agent).stopReason).toBe("stop");
  });

  it("a stream whose iterator throws mid-reply becomes an error message keeping the partial content", async () => {
    const llm = new ScriptedStream([{ text: "half", iteratorError: "socket hang up" }]);
    const agent = agentWith(llm);
    const events = record(agent);
    await agent.prompt("hi");
    expect(last(agent)).toMatchObject({
      stopReason: "error",
      errorMessage: "The model call failed: socket hang up",
      content: [{ type: "text", text: "half" }],
    });
    expect(summarize(events).slice(-3)).toEqual(["message_end assistant(error)", "turn_end", "agent_end"]);
    expect(events.filter((e) => e.type === "message_start")).toHaveLength(2);
  });
});
