import { describe, expect, it, onTestFinished } from "vitest";
import { registerModel, unregisterModel } from "../../src/agent/llm/models.js";
import type { AgentEvent } from "../../src/agent/types.js";
import { createSubAgentExtension } from "../../src/extensions/sub-agent.js";
import type { ExtensionEntry } from "../../src/extensions/types.js";
import { createGate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { createHarness, echoTool } from "./support/harness.js";
import { MemoryHost } from "./support/memory-host.js";

const spawnCall = (task: string) => ({ toolCalls: [{ name: "spawn_sub_agent", args: { task }, id: "s1" }] });

describe("spawn_sub_agent", () => {
  it("runs the task with its own context on the parent's model, with progress as tool updates", async () => {
    const sub = new ScriptedStream([
      { text: "Looking.", toolCalls: [{ name: "echo", args: { text: "from sub" } }] },
      "The answer is 42.",
    ]);
    const echo = echoTool();
    const h = await createHarness(
      [{ name: "sub-agent", factory: createSubAgentExtension({ streamFn: sub.streamFn }) }],
      {
        model: scriptedModel({ id: "parent-model" }),
        baseTools: [echo],
        replies: [spawnCall("find the answer"), "Parent got it."],
      },
    );
    const updates: AgentEvent[] = [];
    h.agent.subscribe((e) => {
      if (e.type === "tool_execution_update") updates.push(e);
    });
    await h.run("a long conversation message the sub-agent must not see");
    const result = h.toolResults()[0];
    expect(result?.isError).toBe(false);
    expect(h.resultText(result)).toBe("The answer is 42.");
    expect(result?.details).toMatchObject({
      task: "find the answer",
      model: "scripted/parent-model",
      turns: 2,
      toolCalls: 1,
    });
    expect(echo.calls).toEqual(["from sub"]);
    // Its own context: the task only, and its own system prompt.
    expect(sub.calls[0]?.model.id).toBe("parent-model");
    expect(JSON.stringify(sub.calls[0]?.context.messages)).not.toContain("long conversation");
    expect(sub.calls[0]?.context.systemPrompt).toContain("Task: find the answer");
    expect(sub.calls[0]?.context.tools?.map((t) => t.name)).toEqual(["echo"]);
    const texts = updates.map((u) =>
      u.type === "tool_execution_update" ? JSON.stringify(u.partialResult.content) : "",
    );
    expect(texts.some((t) => t.includes("🔧 echo"))).toBe(true);
    expect(texts.some((t) => t.includes("The answer is 42."))).toBe(true);
  });

  it("another model follows the settings policy of the person who started the run", async () => {
    const sub = new ScriptedStream(["from the other model"]);
    registerModel(scriptedModel({ id: "other-model" }));
    onTestFinished(() => {
      unregisterModel("scripted", "other-model");
    });
    const call = {
      toolCalls: [{ name: "spawn_sub_agent", args: { task: "t", model: "scripted/other-model" }, id: "s1" }],
    };
    for (const allowed of [false, true]) {
      const h = await createHarness(
        [
          {
            name: "sub-agent",
            factory: createSubAgentExtension({ streamFn: sub.streamFn, getKey: () => "k" }),
          },
        ],
        {
          model: scriptedModel({ id: "parent-model" }),
          settingsPolicy: () => allowed,
          host: new MemoryHost({ threadKey: "test:T9", platform: "slack", user: { id: "U2", name: "bob" } }),
          replies: [call, "done"],
        },
      );
      await h.run("go");
      const result = h.toolResults()[0];
      if (allowed) expect(h.resultText(result)).toBe("from the other model");
      else {
        expect(result?.isError).toBe(true);
        expect(h.resultText(result)).toContain(
          "scripted/other-model was not used: the channel's settings policy does not let bob choose models here",
        );
      }
    }
  });

  it("its tool calls pass the thread's gates", async () => {
    const sub = new ScriptedStream([
      { toolCalls: [{ name: "echo", args: { text: "rm everything" } }] },
      "I was blocked.",
    ]);
    const gate: ExtensionEntry = {
      name: "gate",
      factory: (api) =>
        api.on("tool_call", (e) =>
          e.toolName === "echo" ? { block: true, reason: "echo is gated" } : undefined,
        ),
    };
    const echo = echoTool();
    const h = await createHarness(
      [gate, { name: "sub-agent", factory: createSubAgentExtension({ streamFn: sub.streamFn }) }],
      {
        baseTools: [echo],
        replies: [spawnCall("try it"), "ok"],
      },
    );
    await h.run("go");
    expect(echo.calls).toEqual([]);
    expect(JSON.stringify(sub.calls[1]?.context.messages)).toContain("echo is gated");
    expect(h.resultText(h.toolResults()[0])).toBe("I was blocked.");
  });

  it("aborting the parent's run aborts the sub-agent", async () => {
    const pause = createGate();
    const sub = new ScriptedStream([
      { content: [{ type: "text", text: "thinking…" }, pause, { type: "text", text: " never" }] },
    ]);
    const h = await createHarness(
      [{ name: "sub-agent", factory: createSubAgentExtension({ streamFn: sub.streamFn }) }],
      {
        replies: [spawnCall("slow task")],
      },
    );
    const running = h.run("go");
    await pause.reached;
    h.agent.abort();
    await running;
    expect(sub.calls[0]?.signal?.aborted).toBe(true);
    const result = h.toolResults()[0];
    expect(result?.isError).toBe(true);
    expect(h.resultText(result)).toBe("Sub-agent stopped: the run was stopped.");
  });

  it("an unknown model is an error result; a runaway sub-agent is stopped after maxTurns", async () => {
    const sub = new ScriptedStream((call) => ({
      toolCalls: [{ name: "echo", args: { text: `turn ${call.index}` } }],
    }));
    const h = await createHarness(
      [{ name: "sub-agent", factory: createSubAgentExtension({ streamFn: sub.streamFn, maxTurns: 3 }) }],
      {
        baseTools: [echoTool()],
        replies: [
          { toolCalls: [{ name: "spawn_sub_agent", args: { task: "x", model: "nope/none" }, id: "s1" }] },
          spawnCall("loop forever"),
          "done",
        ],
      },
    );
    await h.run("go");
    const [unknown, runaway] = h.toolResults();
    expect(h.resultText(unknown)).toBe('Unknown model "nope/none"; leave model out to use your own.');
    expect(runaway?.isError).toBe(true);
    expect(h.resultText(runaway)).toMatch(/^Sub-agent stopped after 3 model calls without finishing/);
    expect(sub.calls).toHaveLength(3);
  });
});
