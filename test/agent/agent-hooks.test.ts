/**
 * `Agent.addHooks`: hooks composed onto a built agent (a runtime adds its inbox and per-call
 * compaction this way) run with the construction options' own, in the documented order, from the
 * next call on, and stop when removed.
 */
import { describe, expect, it } from "vitest";
import { Agent, type AgentMessage } from "../../src/agent/index.js";
import { createGate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { user } from "./helpers.js";

const model = scriptedModel();

function userTexts(messages: readonly AgentMessage[]): string[] {
  return messages.flatMap((m) => {
    if (m.role !== "user") return [];
    if (typeof m.content === "string") return [m.content];
    return [m.content.map((c) => (c.type === "text" ? c.text : "")).join("")];
  });
}

describe("Agent.addHooks", () => {
  it("a transform added first sees the full history; the construction transform sees its result", async () => {
    const llm = new ScriptedStream(["one", "two"]);
    const seenByOwn: string[][] = [];
    const agent = new Agent({
      initialState: { model },
      streamFn: llm.streamFn,
      transformContext: (messages) => {
        seenByOwn.push(userTexts(messages));
        return [...messages, user("own note")];
      },
    });
    const seenByAdded: string[][] = [];
    const remove = agent.addHooks(
      {
        transformContext: async (messages) => {
          seenByAdded.push(userTexts(messages));
          return messages.slice(-1);
        },
      },
      { position: "first" },
    );
    agent.appendMessage(user("old"));
    await agent.prompt("new");
    expect(seenByAdded).toEqual([["old", "new"]]);
    expect(seenByOwn).toEqual([["new"]]);
    expect(userTexts(llm.calls[0]?.context.messages ?? [])).toEqual(["new", "own note"]);

    remove();
    await agent.prompt("again");
    expect(seenByAdded).toHaveLength(1);
    expect(userTexts(llm.calls[1]?.context.messages ?? [])).toEqual(["old", "new", "again", "own note"]);
  });

  it("a transform added last runs after the construction transform", async () => {
    const llm = new ScriptedStream(["ok"]);
    const order: string[] = [];
    const agent = new Agent({
      initialState: { model },
      streamFn: llm.streamFn,
      transformContext: (messages) => {
        order.push("own");
        return messages;
      },
    });
    agent.addHooks({
      transformContext: (messages) => {
        order.push("added");
        return messages;
      },
    });
    await agent.prompt("hi");
    expect(order).toEqual(["own", "added"]);
  });

  it("steering sources are drained in order at each checkpoint, and a source added during a run applies from the next checkpoint", async () => {
    const gate = createGate();
    const llm = new ScriptedStream([{ content: [{ type: "text", text: "first" }, gate] }, "second", "third"]);
    const own: AgentMessage[] = [];
    const agent = new Agent({
      initialState: { model },
      streamFn: llm.streamFn,
      getSteeringMessages: async () => own.splice(0),
    });
    const added: AgentMessage[] = [];
    const run = agent.prompt("start");
    await gate.reached;
    agent.addHooks({ getSteeringMessages: async () => added.splice(0) });
    own.push(user("from own"));
    added.push(user("from added"));
    gate.release();
    await run;
    // Both sources answered at the same checkpoint, the construction's first.
    expect(userTexts(llm.calls[1]?.context.messages ?? [])).toEqual(["start", "from own", "from added"]);
  });

  it("follow-up sources added first are drained before the construction's; removed ones are not asked", async () => {
    const llm = new ScriptedStream(["a", "b", "c"]);
    const asked: string[] = [];
    const agent = new Agent({
      initialState: { model },
      streamFn: llm.streamFn,
      getFollowUpMessages: async () => {
        asked.push("own");
        return [];
      },
    });
    const queue = [user("later")];
    const remove = agent.addHooks(
      {
        getFollowUpMessages: async () => {
          asked.push("added");
          return queue.splice(0);
        },
      },
      { position: "first" },
    );
    await agent.prompt("now");
    expect(asked).toEqual(["added", "own", "added", "own"]);
    expect(userTexts(agent.state.messages)).toEqual(["now", "later"]);
    remove();
    asked.length = 0;
    await agent.prompt("next");
    expect(asked).toEqual(["own"]);
  });
});
