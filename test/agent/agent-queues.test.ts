import { describe, expect, it } from "vitest";
import {
  Agent,
  type AgentMessage,
  type AgentTool,
  SKIPPED_FOR_STEERING_TEXT,
} from "../../src/agent/index.js";
import { createGate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { record, resultText, summarize, user, waitTool } from "./helpers.js";

const model = scriptedModel();

function agentWith(
  llm: ScriptedStream,
  tools: AgentTool[] = [],
  extra: Partial<ConstructorParameters<typeof Agent>[0]> = {},
) {
  return new Agent({ initialState: { model, tools }, streamFn: llm.streamFn, ...extra });
}

function texts(messages: readonly AgentMessage[]): string[] {
  return messages.map((m) => {
    if (m.role === "user")
      return `user:${typeof m.content === "string" ? m.content : m.content.map((c) => (c.type === "text" ? c.text : "")).join("")}`;
    if (m.role === "assistant")
      return `assistant:${m.content.map((c) => (c.type === "text" ? c.text : c.type)).join("")}`;
    return `toolResult:${m.role === "toolResult" ? m.toolCallId : ""}`;
  });
}

const twoWaits = {
  toolCalls: [
    { id: "c1", name: "wait", args: { label: "first" } },
    { id: "c2", name: "wait", args: { label: "second" } },
  ],
};

describe("Agent: steering", () => {
  it("a steering message during the first of two tool calls skips the second with the exact text", async () => {
    const first = createGate();
    const ran: string[] = [];
    const llm = new ScriptedStream([twoWaits, "Switching to plan B."]);
    const agent = agentWith(llm, [waitTool({ first }, ran)]);
    const events = record(agent);

    const run = agent.prompt("do both");
    await first.reached;
    agent.steer(user("stop, do plan B"));
    first.release();
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
      "tool_end c1 ok",
      "message_start toolResult",
      "message_end toolResult(c1)",
      "tool_start c2",
      "tool_end c2 error",
      "message_start toolResult",
      "message_end toolResult(c2, error)",
      "turn_end",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    expect(resultText(agent.state.messages[3])).toBe("Skipped due to queued user message.");
    expect(SKIPPED_FOR_STEERING_TEXT).toBe("Skipped due to queued user message.");
    expect(events.find((e) => e.type === "tool_execution_end" && e.toolCallId === "c2")).toMatchObject({
      toolName: "wait",
      args: { label: "second" },
      isError: true,
      result: { content: [{ type: "text", text: "Skipped due to queued user message." }] },
    });
    expect(texts(llm.calls[1]?.context.messages ?? [])).toEqual([
      "user:do both",
      "assistant:toolCalltoolCall",
      "toolResult:c1",
      "toolResult:c2",
      "user:stop, do plan B",
    ]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("a steering message while the model streams is injected before the next call", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([
      { content: [{ type: "text", text: "Working" }, gate, { type: "text", text: "…" }] },
      "Sure.",
    ]);
    const agent = agentWith(llm);
    const run = agent.prompt("start");
    await gate.reached;
    agent.steer(user("make it short"));
    gate.release();
    await run;
    expect(texts(agent.state.messages)).toEqual([
      "user:start",
      "assistant:Working…",
      "user:make it short",
      "assistant:Sure.",
    ]);
  });

  it("drains an external async steering source (e.g. a Redis inbox) at each checkpoint", async () => {
    const first = createGate();
    const inbox: AgentMessage[] = [];
    let reads = 0;
    const llm = new ScriptedStream([twoWaits, "Plan B it is."]);
    const agent = agentWith(llm, [waitTool({ first })], {
      getSteeringMessages: async () => {
        reads++;
        await new Promise<void>((resolve) => setImmediate(resolve));
        return inbox.splice(0);
      },
    });
    const run = agent.prompt("do both");
    await first.reached;
    inbox.push(user("from the inbox: plan B"));
    first.release();
    await run;

    expect(reads).toBeGreaterThanOrEqual(3); // run start, after c1, after the last turn
    expect(resultText(agent.state.messages[3])).toBe("Skipped due to queued user message.");
    expect(texts(llm.calls[1]?.context.messages ?? []).at(-1)).toBe("user:from the inbox: plan B");
    expect(inbox).toEqual([]);
  });

  it("one-at-a-time steering delivers one queued message per checkpoint", async () => {
    const llm = new ScriptedStream(["a", "b"]);
    const agent = agentWith(llm);
    agent.steer(user("s1"));
    agent.steer(user("s2"));
    await agent.prompt("p");
    expect(texts(llm.calls[0]?.context.messages ?? [])).toEqual(["user:p", "user:s1"]);
    expect(texts(llm.calls[1]?.context.messages ?? [])).toEqual([
      "user:p",
      "user:s1",
      "assistant:a",
      "user:s2",
    ]);
    expect(llm.calls).toHaveLength(2);
  });

  it("'all' steering delivers every queued message at once", async () => {
    const llm = new ScriptedStream(["a"]);
    const agent = agentWith(llm, [], { steeringMode: "all" });
    agent.steer(user("s1"));
    agent.steer(user("s2"));
    await agent.prompt("p");
    expect(texts(llm.calls[0]?.context.messages ?? [])).toEqual(["user:p", "user:s1", "user:s2"]);
    expect(llm.calls).toHaveLength(1);
  });
});

describe("Agent: follow-ups", () => {
  it("a follow-up queued during a run runs after the agent would stop, in the same run", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([
      { content: [gate, { type: "text", text: "first answer" }] },
      "second answer",
    ]);
    const agent = agentWith(llm);
    const events = record(agent);
    const run = agent.prompt("q1");
    await gate.reached;
    agent.followUp(user("q2"));
    gate.release();
    await run;

    expect(summarize(events).filter((l) => !l.startsWith("update"))).toEqual([
      "agent_start",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant(stop)",
      "turn_end",
      "turn_start",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant(stop)",
      "turn_end",
      "agent_end",
    ]);
    expect(texts(agent.state.messages)).toEqual([
      "user:q1",
      "assistant:first answer",
      "user:q2",
      "assistant:second answer",
    ]);
  });

  it("a follow-up does not interrupt tool calls", async () => {
    const first = createGate();
    const ran: string[] = [];
    const llm = new ScriptedStream([twoWaits, "both done", "and the follow-up"]);
    const agent = agentWith(llm, [waitTool({ first }, ran)]);
    const run = agent.prompt("do both");
    await first.reached;
    agent.followUp(user("then this"));
    first.release();
    await run;
    expect(ran).toEqual(["first", "second"]);
    expect(texts(agent.state.messages)).toEqual([
      "user:do both",
      "assistant:toolCalltoolCall",
      "toolResult:c1",
      "toolResult:c2",
      "assistant:both done",
      "user:then this",
      "assistant:and the follow-up",
    ]);
  });

  it("one-at-a-time follow-ups run one per restart; 'all' runs them together", async () => {
    const one = new ScriptedStream(["a", "b", "c"]);
    const agentOne = agentWith(one);
    agentOne.followUp(user("f1"));
    agentOne.followUp(user("f2"));
    await agentOne.prompt("p");
    expect(texts(agentOne.state.messages)).toEqual([
      "user:p",
      "assistant:a",
      "user:f1",
      "assistant:b",
      "user:f2",
      "assistant:c",
    ]);

    const all = new ScriptedStream(["a", "b"]);
    const agentAll = agentWith(all, [], { followUpMode: "all" });
    agentAll.followUp(user("f1"));
    agentAll.followUp(user("f2"));
    await agentAll.prompt("p");
    expect(texts(agentAll.state.messages)).toEqual([
      "user:p",
      "assistant:a",
      "user:f1",
      "user:f2",
      "assistant:b",
    ]);
  });

  it("drains an external follow-up source after the internal queue", async () => {
    const external: AgentMessage[] = [user("external")];
    const llm = new ScriptedStream(["a", "b", "c"]);
    const agent = agentWith(llm, [], { getFollowUpMessages: async () => external.splice(0) });
    agent.followUp(user("internal"));
    await agent.prompt("p");
    expect(texts(agent.state.messages)).toEqual([
      "user:p",
      "assistant:a",
      "user:internal",
      "assistant:b",
      "user:external",
      "assistant:c",
    ]);
  });

  it("clear*Queue() drops queued messages", () => {
    const agent = agentWith(new ScriptedStream());
    agent.steer(user("s"));
    agent.followUp(user("f"));
    agent.clearSteeringQueue();
    expect(agent.hasQueuedMessages()).toBe(true);
    agent.clearFollowUpQueue();
    expect(agent.hasQueuedMessages()).toBe(false);
    agent.steer(user("s"));
    agent.followUp(user("f"));
    agent.clearAllQueues();
    expect(agent.hasQueuedMessages()).toBe(false);
  });
});
