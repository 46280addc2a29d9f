import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { AssistantMessageEventStream } from "../../src/agent/llm/event-stream.js";
import { findModel } from "../../src/agent/llm/models.js";
import { getApiProvider } from "../../src/agent/llm/registry.js";
import type { Model, StreamFunction } from "../../src/agent/llm/types.js";
import { silentLogger } from "../../src/extensions/logger.js";
import { ExtensionRunner } from "../../src/extensions/runner.js";
import type { ExtensionAPI, ExtensionEntry } from "../../src/extensions/types.js";
import { createHarness, echoTool } from "./support/harness.js";
import { MemoryHost } from "./support/memory-host.js";

const callEcho = (text: string, id = "c1") => ({ toolCalls: [{ name: "echo", args: { text }, id }] });

describe("tool_call", () => {
  it("a handler that returns block stops the call and the model gets the reason", async () => {
    const tool = echoTool();
    const gate: ExtensionEntry = {
      name: "gate",
      factory: (api) =>
        api.on("tool_call", (event) =>
          String(event.input.text).includes("rm") ? { block: true, reason: "No deleting here." } : undefined,
        ),
    };
    const h = await createHarness([gate], { baseTools: [tool], replies: [callEcho("rm -rf x"), "ok"] });
    await h.run("go");
    expect(tool.calls).toEqual([]);
    const result = h.toolResults()[0];
    expect(result?.isError).toBe(true);
    expect(h.resultText(result)).toBe("No deleting here.");
    // The second model call saw the error result.
    expect(h.stream.calls[1]?.context.messages.at(-1)).toMatchObject({ role: "toolResult", isError: true });
  });

  it("a handler that throws blocks the call, disables the extension and reports it", async () => {
    const tool = echoTool();
    let seen = 0;
    const broken: ExtensionEntry = {
      name: "broken",
      factory: (api) =>
        api.on("tool_call", () => {
          seen++;
          throw new Error("policy service unreachable");
        }),
    };
    const h = await createHarness([broken], {
      baseTools: [tool],
      replies: [callEcho("first", "c1"), callEcho("second", "c2"), "done"],
    });
    await h.run("go");
    const [first, second] = h.toolResults();
    expect(first?.isError).toBe(true);
    expect(h.resultText(first)).toContain('extension "broken" failed');
    expect(h.resultText(first)).toContain("policy service unreachable");
    // Disabled: the handler is not asked again and the next call runs.
    expect(seen).toBe(1);
    expect(second?.isError).toBe(false);
    expect(tool.calls).toEqual(["second"]);
    expect(h.failures).toEqual([
      expect.objectContaining({
        extension: "broken",
        phase: "tool_call",
        error: "policy service unreachable",
      }),
    ]);
    expect(h.host.lastText()).toContain('Extension "broken" failed (tool_call) and was disabled');
    expect(h.runner.extensions()[0]?.enabled).toBe(false);
  });

  it("handlers run in load order and the first block wins", async () => {
    const order: string[] = [];
    const a: ExtensionEntry = {
      name: "a",
      factory: (api) =>
        api.on("tool_call", () => {
          order.push("a");
          return { block: true, reason: "a says no" };
        }),
    };
    const b: ExtensionEntry = {
      name: "b",
      factory: (api) => api.on("tool_call", () => void order.push("b")),
    };
    const h = await createHarness([a, b], { baseTools: [echoTool()], replies: [callEcho("x"), "ok"] });
    await h.run("go");
    expect(order).toEqual(["a"]);
    expect(h.resultText(h.toolResults()[0])).toBe("a says no");
  });
});

describe("tool_result", () => {
  it("replaces the content the model sees, and later handlers see the replacement", async () => {
    const redact: ExtensionEntry = {
      name: "redact",
      factory: (api) =>
        api.on("tool_result", (event) => {
          const text = event.content.map((c) => (c.type === "text" ? c.text : "")).join("");
          return { content: [{ type: "text", text: text.replace(/secret-\w+/g, "[redacted]") }] };
        }),
    };
    const seen: string[] = [];
    const observer: ExtensionEntry = {
      name: "observer",
      factory: (api) =>
        api.on("tool_result", (event) => {
          seen.push(event.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
        }),
    };
    const h = await createHarness([redact, observer], {
      baseTools: [echoTool()],
      replies: [callEcho("token secret-abc123"), "ok"],
    });
    await h.run("go");
    expect(h.resultText(h.toolResults()[0])).toBe("echo: token [redacted]");
    expect(seen).toEqual(["echo: token [redacted]"]);
    const sentResult = h.stream.calls[1]?.context.messages.find((m) => m.role === "toolResult");
    expect(JSON.stringify(sentResult?.content)).not.toContain("secret-abc123");
  });
});

describe("context", () => {
  it("rewrites the messages sent to the model without changing the stored history", async () => {
    const prune: ExtensionEntry = {
      name: "prune",
      factory: (api) =>
        api.on("context", (event) => ({
          messages: event.messages.filter(
            (m) => !(m.role === "user" && JSON.stringify(m).includes("ignore me")),
          ),
        })),
    };
    const h = await createHarness([prune], { replies: ["first", "second"] });
    await h.run("ignore me please");
    await h.run("hello");
    const sent = h.stream.calls[1]?.context.messages ?? [];
    expect(JSON.stringify(sent)).not.toContain("ignore me");
    expect(JSON.stringify(sent)).toContain("hello");
    expect(JSON.stringify(h.agent.state.messages)).toContain("ignore me");
  });
});

describe("before_agent_start", () => {
  it("adds a message and extends the system prompt for each run, without piling up", async () => {
    const ext: ExtensionEntry = {
      name: "ctx",
      factory: (api) =>
        api.on("before_agent_start", (event) => ({
          message: { customType: "ctx:note", content: `Note for: ${event.prompt}`, display: false },
          systemPrompt: `${event.systemPrompt}\nAlways answer in French.`,
        })),
    };
    const h = await createHarness([ext], { replies: ["un", "deux"], systemPrompt: "Base prompt." });
    await h.run("hello");
    await h.run("again");
    expect(h.stream.calls[0]?.context.systemPrompt).toBe("Base prompt.\nAlways answer in French.");
    expect(h.stream.calls[1]?.context.systemPrompt).toBe("Base prompt.\nAlways answer in French.");
    const firstSent = JSON.stringify(h.stream.calls[0]?.context.messages);
    expect(firstSent).toContain("Note for: hello");
    expect(h.agent.state.messages.filter((m) => m.role === "custom")).toHaveLength(2);
  });
});

describe("sendMessage", () => {
  it("steer, followUp and nextTurn reach the attached agent at the right moment", async () => {
    const tool = echoTool();
    const ext: ExtensionEntry = {
      name: "nudger",
      factory: (api) => {
        api.on("tool_execution_end", async () => {
          await api.sendMessage(
            { customType: "n", content: "steered note", display: false },
            { deliverAs: "steer" },
          );
        });
        api.on("agent_start", async (_e, ctx) => {
          if (ctx.thread.threadKey !== "test:T1") return;
          await ctx.sendMessage(
            { customType: "n", content: "later note", display: false },
            { deliverAs: "nextTurn" },
          );
        });
      },
    };
    const h = await createHarness([ext], {
      baseTools: [tool],
      replies: [callEcho("x"), "after tool", "second run"],
    });
    await h.run("go");
    expect(JSON.stringify(h.stream.calls[1]?.context.messages)).toContain("steered note");
    expect(JSON.stringify(h.stream.calls[1]?.context.messages)).not.toContain("later note");
    await h.run("again");
    expect(JSON.stringify(h.stream.calls[2]?.context.messages)).toContain("later note");
  });

  it("without an agent (gateway side) goes to the host; api methods outside a handler throw", async () => {
    let api: ExtensionAPI | undefined;
    const ext: ExtensionEntry = {
      name: "cmd",
      factory: (a) => {
        api = a;
        a.registerCommand("ping", {
          description: "ping",
          handler: async () => {
            await a.sendMessage(
              { customType: "p", content: "pong", display: true },
              { deliverAs: "followUp" },
            );
            await a.appendEntry("cmd:state", { n: 1 });
          },
        });
      },
    };
    const runner = new ExtensionRunner({ logger: silentLogger });
    await runner.load([ext]);
    const host = new MemoryHost();
    expect(await runner.bind(host).runCommand("ping", "")).toBe(true);
    expect(host.sent).toEqual([
      { message: expect.objectContaining({ content: "pong", role: "custom" }), deliverAs: "followUp" },
    ]);
    expect(host.entries).toEqual([{ customType: "cmd:state", data: { n: 1 } }]);
    await expect(api?.sendMessage({ customType: "p", content: "x", display: false })).rejects.toThrow(
      /outside a handler/,
    );
  });
});

describe("tools", () => {
  it("registered tools get the thread context; wrappers wrap; activeTools filters", async () => {
    const ext: ExtensionEntry = {
      name: "tools",
      factory: (api) => {
        api.registerTool({
          name: "whoami",
          label: "Who am I",
          description: "Says the thread",
          parameters: Type.Object({}),
          async execute(_id, _params, _signal, _onUpdate, ctx) {
            return {
              content: [{ type: "text", text: `${ctx.thread.threadKey} ${ctx.thread.user?.name}` }],
              details: {},
            };
          },
        });
        api.wrapTool("echo", (inner) => ({
          ...inner,
          async execute(id, params, signal, onUpdate) {
            const out = await inner.execute(id, params, signal, onUpdate);
            return { ...out, content: [{ type: "text", text: `[wrapped] ${JSON.stringify(out.content)}` }] };
          },
        }));
      },
    };
    const h = await createHarness([ext], {
      baseTools: [echoTool(), echoTool("hidden")],
      activeTools: ["echo", "whoami"],
      replies: [
        {
          toolCalls: [
            { name: "whoami", args: {} },
            { name: "echo", args: { text: "hi" } },
          ],
        },
        "ok",
      ],
    });
    expect(h.agent.state.tools.map((t) => t.name).sort()).toEqual(["echo", "whoami"]);
    await h.run("go");
    const [who, echo] = h.toolResults();
    expect(h.resultText(who)).toBe("test:T1 alice");
    expect(h.resultText(echo)).toContain("[wrapped]");
    expect(h.resultText(echo)).toContain("echo: hi");
  });
});

describe("tool sources", () => {
  it("tools found at run time are offered from the next run on, whatever activeTools says, and get the thread context", async () => {
    let offer = ["first"];
    const found: ExtensionEntry = {
      name: "found",
      factory: (api) =>
        api.registerToolSource(async (ctx) =>
          offer.map((name) => ({
            name: `found_${name}`,
            label: name,
            description: `Found tool ${name}`,
            parameters: Type.Object({}),
            async execute() {
              return {
                content: [{ type: "text" as const, text: `${name} in ${ctx.thread.threadKey}` }],
                details: {},
              };
            },
          })),
        ),
    };
    const h = await createHarness([found], {
      baseTools: [echoTool()],
      activeTools: ["echo"],
      replies: [
        { toolCalls: [{ name: "found_first", args: {} }] },
        "ok",
        { toolCalls: [{ name: "found_second", args: {} }] },
        "ok",
      ],
    });
    await h.run("go");
    expect(h.agent.state.tools.map((t) => t.name).sort()).toEqual(["echo", "found_first"]);
    expect(h.resultText(h.toolResults()[0])).toBe("first in test:T1");
    offer = ["second"];
    await h.run("again");
    expect(h.agent.state.tools.map((t) => t.name).sort()).toEqual(["echo", "found_second"]);
    expect(h.resultText(h.toolResults()[1])).toBe("second in test:T1");
  });

  it("a source that rejects is reported and disabled; the run goes on with the other tools", async () => {
    const broken: ExtensionEntry = {
      name: "broken-source",
      factory: (api) =>
        api.registerToolSource(async () => {
          throw new Error("catalog service down");
        }),
    };
    const h = await createHarness([broken], { baseTools: [echoTool()], replies: [callEcho("still"), "ok"] });
    await h.run("go");
    expect(h.agent.state.tools.map((t) => t.name)).toEqual(["echo"]);
    expect(h.resultText(h.toolResults()[0])).toContain("echo: still");
    expect(h.failures).toEqual([
      expect.objectContaining({
        extension: "broken-source",
        phase: "tool source",
        error: expect.stringContaining("catalog service down"),
      }),
    ]);
  });
});

describe("failures", () => {
  it("a factory that throws is reported and disabled, and what it registered is gone", async () => {
    const bad: ExtensionEntry = {
      name: "bad",
      factory: (api) => {
        api.registerCommand("bad", { description: "x", handler: async () => {} });
        throw new Error("missing config key");
      },
    };
    const good: ExtensionEntry = {
      name: "good",
      factory: (api) =>
        api.registerCommand("good", { description: "fine", handler: async (_a, ctx) => ctx.reply("fine") }),
    };
    const h = await createHarness([bad, good]);
    expect(h.failures).toEqual([
      expect.objectContaining({ extension: "bad", phase: "load", error: "missing config key" }),
    ]);
    expect(await h.thread.runCommand("bad", "")).toBe(false);
    expect(await h.thread.runCommand("good", "")).toBe(true);
    expect(h.host.lastReply()).toBe("fine");
  });

  it("a throwing agent-event handler disables the extension without failing the run", async () => {
    const ext: ExtensionEntry = {
      name: "noisy",
      factory: (api) =>
        api.on("turn_end", () => {
          throw new Error("boom");
        }),
    };
    const h = await createHarness([ext], { replies: ["hello"] });
    await h.run("go");
    expect(h.agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
    await waitUntil(() => h.failures.length === 1);
    expect(h.failures[0]).toMatchObject({ extension: "noisy", phase: "turn_end", threadKey: "test:T1" });
  });

  it("a disabled extension's providers and models are unregistered", async () => {
    const stream: StreamFunction = () => new AssistantMessageEventStream();
    const model: Model = {
      id: "ext-model-1",
      name: "Ext model",
      api: "ext-test-api",
      provider: "ext-test",
      baseUrl: "http://127.0.0.1:9",
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 1000,
      maxTokens: 100,
    };
    const ext: ExtensionEntry = {
      name: "provider-ext",
      factory: (api) => {
        api.registerProvider({ api: "ext-test-api", stream, streamSimple: stream, models: [model] });
        api.registerCommand("explode", {
          description: "fails",
          handler: async () => {
            throw new Error("kaboom");
          },
        });
      },
    };
    const h = await createHarness([ext]);
    expect(getApiProvider("ext-test-api")).toBeDefined();
    expect(findModel("ext-test/ext-model-1")).toBeDefined();
    expect(await h.thread.runCommand("explode", "")).toBe(true);
    expect(h.host.lastReply()).toContain("/explode failed: kaboom");
    expect(getApiProvider("ext-test-api")).toBeUndefined();
    expect(findModel("ext-test/ext-model-1")).toBeUndefined();
  });
});

describe("session events and reactions", () => {
  it("session_before_compact can cancel; reactions report whether one was handled", async () => {
    const ext: ExtensionEntry = {
      name: "sess",
      factory: (api) => {
        api.on("session_before_compact", () => ({ cancel: true, reason: "keep everything" }));
        api.on("reaction", (event) => ({ handled: event.emoji === "✅" }));
      },
    };
    const h = await createHarness([ext]);
    expect(await h.thread.emitSession({ type: "session_before_compact" })).toEqual({
      cancel: true,
      reason: "keep everything",
    });
    const reaction = { messageRef: "m1", user: { id: "U2", isBot: false }, added: true };
    expect(await h.thread.handleReaction({ ...reaction, emoji: "✅" })).toBe(true);
    expect(await h.thread.handleReaction({ ...reaction, emoji: "👍" })).toBe(false);
  });
});

/** Bounded poll for a condition set by fire-and-forget handlers. */
async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}
