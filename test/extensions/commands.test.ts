import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerModel, unregisterModel } from "../../src/agent/llm/models.js";
import type { Model } from "../../src/agent/llm/types.js";
import { createCommandsExtension } from "../../src/extensions/commands/index.js";
import {
  isStopCommand,
  parseCommandText,
  parseModeOverride,
  parseNativeCommand,
} from "../../src/extensions/commands/parser.js";
import { silentLogger } from "../../src/extensions/logger.js";
import { ExtensionRunner } from "../../src/extensions/runner.js";
import type { ExtensionEntry } from "../../src/extensions/types.js";
import { createGate } from "../support/scripted-stream.js";
import { createHarness } from "./support/harness.js";
import { MemoryHost } from "./support/memory-host.js";

function fakeModel(id: string, overrides: Partial<Model> = {}): Model {
  return {
    id,
    name: `Fake ${id}`,
    api: "scripted",
    provider: "cmdtest",
    baseUrl: "http://127.0.0.1:9/v1",
    reasoning: true,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 8000,
    ...overrides,
  };
}

const thinker = fakeModel("thinker-1"); // off … high, no xhigh
const deepThinker = fakeModel("deep-thinker-1", {
  thinkingLevels: ["off", "minimal", "low", "medium", "high", "xhigh"],
});
const plain = fakeModel("plain-1", { reasoning: false, contextWindow: 32_000 });
const remote = fakeModel("remote-1", {
  provider: "cmdtest-remote",
  baseUrl: "https://models.example.com/v1",
});
const ALL = [thinker, deepThinker, plain, remote];

beforeAll(() => {
  for (const m of ALL) registerModel(m);
});
afterAll(() => {
  for (const m of ALL) unregisterModel(m.provider, m.id);
});

const commands: ExtensionEntry = {
  name: "commands",
  factory: createCommandsExtension({ models: () => ALL, getApiKey: () => undefined }),
};

async function gateway(host = new MemoryHost()) {
  const runner = new ExtensionRunner({ logger: silentLogger });
  await runner.load([commands]);
  host.settings = { model: "cmdtest/thinker-1", thinkingLevel: "medium" };
  const thread = runner.bind(host);
  const run = async (text: string) => {
    const parsed = parseCommandText(text);
    if (!parsed) throw new Error(`not a command: ${text}`);
    const handled = await thread.runCommand(parsed.name, parsed.args);
    return { handled, reply: host.lastReply() };
  };
  return { runner, host, thread, run };
}

describe("parseCommandText", () => {
  it.each([
    ["/model claude", { name: "model", args: "claude" }],
    ["/model@switchboard_bot claude", { name: "model", args: "claude" }],
    ["@switchboard /model  claude ", { name: "model", args: "claude" }],
    ["<@U123ABC> /think high", { name: "think", args: "high" }],
    ["/STATUS", { name: "status", args: "" }],
    ["stop", { name: "stop", args: "" }],
    ["  Stop! ", { name: "stop", args: "" }],
    ["@bot stop.", { name: "stop", args: "" }],
    ["/steer first line\nsecond line", { name: "steer", args: "first line\nsecond line" }],
  ])("%j is a command", (text, expected) => {
    expect(parseCommandText(text)).toEqual(expected);
  });

  it.each(["hello", "stop the server please", "/etc/hosts is broken", "please /model x", "", "/"])(
    "%j is not a command",
    (text) => {
      expect(parseCommandText(text)).toBeUndefined();
    },
  );

  it.each(["stop", "Stop!", "/stop", "/STOP", "/stop@switchboard_bot", "@bot stop.", "<@U1> /stop"])(
    "%j is a stop request for the runtime",
    (text) => {
      expect(isStopCommand(text)).toBe(true);
    },
  );

  it.each(["stop the server please", "/stop now", "/stopwatch", "please stop", ""])(
    "%j is not a bare stop",
    (text) => {
      expect(isStopCommand(text)).toBe(false);
    },
  );

  it.each([
    ["/steer use the other file", "steer", "use the other file"],
    ["/followup and then this", "followUp", "and then this"],
    ["/follow-up@switchboard_bot then", "followUp", "then"],
    ["@bot /collect one\ntwo", "collect", "one\ntwo"],
    ["/INTERRUPT", "interrupt", ""],
  ] as const)("%j is delivered as %s", (text, mode, rest) => {
    expect(parseModeOverride(text)).toEqual({ mode, text: rest });
  });

  it.each(["steer left", "/steering wheel", "/model x", "/constructor x", "hello"])(
    "%j keeps the channel's mode and its text",
    (text) => {
      expect(parseModeOverride(text)).toEqual({ mode: undefined, text });
    },
  );

  it("normalises native commands", () => {
    expect(parseNativeCommand({ name: "/Model@SwitchboardBot", args: "  plain-1 " })).toEqual({
      name: "model",
      args: "plain-1",
    });
  });

  it("unknown command names are not handled (the text goes to the agent)", async () => {
    const g = await gateway();
    expect(await g.thread.runCommand("etc", "hosts")).toBe(false);
  });
});

describe("/model", () => {
  it("without an argument lists the models that have credentials and marks the current one", async () => {
    const { reply } = await (await gateway()).run("/model");
    expect(reply).toContain("▶ cmdtest/thinker-1 — Fake thinker-1, 200K context (current)");
    expect(reply).toContain("• cmdtest/plain-1");
    expect(reply).toContain("• cmdtest/deep-thinker-1");
    expect(reply).not.toContain("remote-1");
  });

  it("switches by bare id and persists per thread", async () => {
    const g = await gateway();
    const { reply } = await g.run("/model deep-thinker-1");
    expect(reply).toContain("Model set to cmdtest/deep-thinker-1");
    expect(g.host.settings.model).toBe("cmdtest/deep-thinker-1");
    const other = await gateway(new MemoryHost({ threadKey: "test:T2", platform: "slack" }));
    expect(other.host.settings.model).toBe("cmdtest/thinker-1");
  });

  it("clamps the thread's thinking level to the new model and says so", async () => {
    const g = await gateway();
    g.host.settings.thinkingLevel = "high";
    const { reply } = await g.run("/model cmdtest/plain-1");
    expect(reply).toContain("Thinking level high is not supported by Fake plain-1; it is now off.");
    expect(g.host.settings).toEqual({ model: "cmdtest/plain-1", thinkingLevel: "off" });
  });

  it("an unknown name gets the closest matches and changes nothing", async () => {
    const g = await gateway();
    const { reply } = await g.run("/model thinker-2");
    expect(reply).toMatch(/^Unknown model "thinker-2"\. Closest matches: .*cmdtest\/thinker-1/);
    expect(reply).toContain("Nothing changed");
    expect(g.host.settings.model).toBe("cmdtest/thinker-1");
    expect(g.host.calls).not.toContain("setModel");
  });

  it("a model without credentials is refused", async () => {
    const g = await gateway();
    const { reply } = await g.run("/model cmdtest-remote/remote-1");
    expect(reply).toBe(
      "cmdtest-remote/remote-1 has no API key configured here, so it cannot be used. Nothing changed.",
    );
    expect(g.host.settings.model).toBe("cmdtest/thinker-1");
  });

  it("completes model names", async () => {
    const g = await gateway();
    const items = await g.thread.completions("model", "think");
    expect(items.map((i) => i.value)).toEqual(["cmdtest/thinker-1", "cmdtest/deep-thinker-1"]);
  });

  it("reaches a running agent at its next model call", async () => {
    const gate = createGate();
    const slowTool = {
      name: "slow",
      label: "slow",
      description: "waits",
      parameters: Type.Object({}),
      async execute() {
        await gate.arrive();
        return { content: [{ type: "text" as const, text: "done" }], details: {} };
      },
    };
    const host = new MemoryHost();
    const h = await createHarness([commands], {
      host,
      model: thinker,
      baseTools: [slowTool],
      replies: [{ toolCalls: [{ name: "slow", args: {} }] }, "answered"],
    });
    const running = h.run("go");
    await gate.reached;
    expect(await h.thread.runCommand("model", "plain-1")).toBe(true);
    gate.release();
    await running;
    expect(h.stream.calls.map((c) => c.model.id)).toEqual(["thinker-1", "plain-1"]);
    expect(host.settings.model).toBe("cmdtest/plain-1");
  });
});

describe("who may change a thread's settings", () => {
  async function withPolicy(allowed: boolean, isDirect = false) {
    const runner = new ExtensionRunner({ logger: silentLogger, settingsPolicy: () => allowed });
    await runner.load([
      {
        name: "commands",
        factory: createCommandsExtension({ models: () => ALL, getApiKey: () => undefined }),
      },
    ]);
    const host = new MemoryHost({
      threadKey: "telegram:-1:0:5",
      platform: "telegram",
      isDirect,
      user: { id: "9" },
    });
    host.settings = { model: "cmdtest/thinker-1", thinkingLevel: "medium" };
    const thread = runner.bind(host);
    return { host, thread };
  }

  it("someone the policy does not allow is told so, and nothing changes", async () => {
    const { host, thread } = await withPolicy(false);
    await thread.runCommand("model", "plain-1");
    expect(host.lastReply()).toBe(
      "Only admins can change the model in this channel; nothing changed. (An admin can allow everyone with channels.telegram.settings: everyone.)",
    );
    await thread.runCommand("thinking", "high");
    expect(host.lastReply()).toContain("Only admins can change the thinking level in this channel");
    expect(host.settings).toEqual({ model: "cmdtest/thinker-1", thinkingLevel: "medium" });
  });

  it("showing stays open to everyone: /model and /thinking without an argument", async () => {
    const { host, thread } = await withPolicy(false);
    await thread.runCommand("model", "");
    expect(host.lastReply()).toContain("Models you can use");
    await thread.runCommand("thinking", "");
    expect(host.lastReply()).toContain("Thinking level: medium.");
  });

  it("in a direct message the refusal names the conversation", async () => {
    const { host, thread } = await withPolicy(false, true);
    await thread.runCommand("model", "plain-1");
    expect(host.lastReply()).toContain("Only admins can change the model in this conversation");
  });

  it("someone allowed changes the model as before", async () => {
    const { host, thread } = await withPolicy(true);
    await thread.runCommand("model", "plain-1");
    expect(host.lastReply()).toContain("Model set to cmdtest/plain-1");
  });

  it("an extension changing settings for someone the policy refuses is refused the same way", async () => {
    const runner = new ExtensionRunner({ logger: silentLogger, settingsPolicy: () => false });
    const seen: string[] = [];
    await runner.load([
      {
        name: "picker",
        factory: (api) =>
          api.registerCommand("pick", {
            description: "picks a model for the thread",
            async handler(_args, ctx) {
              seen.push(String(ctx.mayChangeSettings()));
              await ctx.setModel("cmdtest/plain-1").catch((e: Error) => seen.push(e.message));
              await ctx.setThinkingLevel("high").catch((e: Error) => seen.push(e.message));
            },
          }),
      },
    ]);
    const host = new MemoryHost({ threadKey: "telegram:-1:0:5", platform: "telegram", user: { id: "9" } });
    host.settings = { model: "cmdtest/thinker-1", thinkingLevel: "medium" };
    await runner.bind(host).runCommand("pick", "");
    expect(seen).toEqual([
      "false",
      "Only admins can change the model in this channel; nothing changed. (An admin can allow everyone with channels.telegram.settings: everyone.)",
      "Only admins can change the thinking level in this channel; nothing changed. (An admin can allow everyone with channels.telegram.settings: everyone.)",
    ]);
    expect(host.settings).toEqual({ model: "cmdtest/thinker-1", thinkingLevel: "medium" });
  });
});

describe("/thinking", () => {
  it("xhigh on a model without it is clamped, persisted and said", async () => {
    const g = await gateway();
    const { reply } = await g.run("/thinking xhigh");
    expect(reply).toBe("Fake thinker-1 does not support thinking level xhigh; set to high instead.");
    expect(g.host.settings.thinkingLevel).toBe("high");
  });

  it("a supported level is set as is, also through the /think alias", async () => {
    const g = await gateway();
    g.host.settings.model = "cmdtest/deep-thinker-1";
    expect((await g.run("/think xhigh")).reply).toBe("Thinking level set to xhigh.");
    expect(g.host.settings.thinkingLevel).toBe("xhigh");
  });

  it("an invalid level is explained and changes nothing", async () => {
    const g = await gateway();
    const { reply } = await g.run("/thinking banana");
    expect(reply).toBe(
      'Unknown thinking level "banana". Use one of: off, minimal, low, medium, high, xhigh. Nothing changed.',
    );
    expect(g.host.settings.thinkingLevel).toBe("medium");
    expect(g.host.calls).not.toContain("setThinkingLevel");
  });

  it("without an argument shows the level and what the model supports", async () => {
    const { reply } = await (await gateway()).run("/thinking");
    expect(reply).toBe("Thinking level: medium. Fake thinker-1 supports: off, minimal, low, medium, high.");
  });

  it("completes levels", async () => {
    const g = await gateway();
    expect((await g.thread.completions("think", "m")).map((i) => i.value)).toEqual(["minimal", "medium"]);
  });
});

describe("run and session commands", () => {
  it("/stop aborts a running thread and says what was discarded; a bare stop does the same", async () => {
    const g = await gateway();
    g.host.running = true;
    g.host.inboxDepth = 2;
    expect((await g.run("/stop")).reply).toBe("⏹️ Stopped.\nDiscarded 2 queued messages.");
    expect((await g.run("stop")).reply).toBe("Nothing was running.");
    expect(g.host.calls.filter((c) => c === "stop")).toHaveLength(2);
  });

  it("/new asks for a fresh session and leaves the one confirmation to the runtime's notice", async () => {
    const g = await gateway();
    expect((await g.run("/new")).reply).toBe("");
    expect(g.host.calls).toContain("newSession");
    g.host.running = true;
    g.host.inboxDepth = 1;
    expect((await g.run("/new")).reply).toBe("⏹️ Stopped the run in progress.");
  });

  it("/compact passes the instructions and reports the sizes", async () => {
    const g = await gateway();
    expect((await g.run("/compact keep the decisions")).reply).toBe(
      "Compacted the session. Context: 50,000 → 8,000 tokens.",
    );
    expect(g.host.compactions).toEqual(["keep the decisions"]);
    g.host.compactOutcome = { compacted: false, reason: "a run is active" };
    expect((await g.run("/compact")).reply).toBe("Nothing compacted: a run is active.");
    expect(g.host.compactions).toEqual(["keep the decisions", undefined]);
    g.host.compactOutcome = { compacted: false, queued: true };
    expect((await g.run("/compact")).reply).toBe(
      "Compacting the conversation; a note here will say how much context it freed.",
    );
  });

  it("/steer and /followup deliver with their mode; without text they explain and send nothing", async () => {
    const g = await gateway();
    await g.run("/steer use the staging db");
    await g.run("/follow-up then write the summary");
    expect(g.host.delivered).toEqual([
      { text: "use the staging db", mode: "steer" },
      { text: "then write the summary", mode: "followUp" },
    ]);
    expect((await g.run("/steer")).reply).toBe("Usage: /steer <text>. Nothing was sent.");
    expect(g.host.delivered).toHaveLength(2);
  });

  it("/status shows the thread key, model, thinking, context, usage, queue mode, run state and session", async () => {
    const g = await gateway();
    g.host.running = true;
    g.host.inboxDepth = 1;
    g.host.session = { id: "0b6f4c1e", location: "Redis key sb:{test:T1}:s:0b6f4c1e" };
    expect((await g.run("/status")).reply).toBe(
      [
        "Thread: test:T1",
        "Model: cmdtest/thinker-1 (Fake thinker-1)",
        "Thinking: medium",
        "Context: 12,000 / 200,000 tokens (6%)",
        "Thread usage: 1,200 in · 340 out · $0.01",
        "Queue mode: steer · 1 waiting",
        "Run: active",
        "Session: 0b6f4c1e (Redis key sb:{test:T1}:s:0b6f4c1e)",
      ].join("\n"),
    );
  });

  it("/help lists every command with usage and aliases, each said once", async () => {
    const { reply } = await (await gateway()).run("/help");
    expect(reply.match(/bare `stop`/g)).toHaveLength(1);
    const lines = reply.split("\n");
    expect(new Set(lines).size).toBe(lines.length);
    for (const name of [
      "model",
      "thinking",
      "new",
      "compact",
      "stop",
      "status",
      "steer",
      "followup",
      "help",
    ]) {
      expect(reply).toContain(`/${name}`);
    }
    expect(reply).toContain(
      "/thinking [off|minimal|low|medium|high|xhigh] — Show or set this thread's thinking level (also /think)",
    );
  });

  it("/status shows how tools run when the process says so", async () => {
    const runner = new ExtensionRunner({ logger: silentLogger });
    await runner.load([
      {
        name: "commands",
        factory: createCommandsExtension({
          models: () => ALL,
          getApiKey: () => undefined,
          statusLines: () => ["Tools: sandboxed with bubblewrap (network none)"],
        }),
      },
    ]);
    const host = new MemoryHost();
    await runner.bind(host).runCommand("status", "");
    expect(host.lastReply().split("\n").at(-1)).toBe("Tools: sandboxed with bubblewrap (network none)");
  });

  it("a runtime failure is answered and does not disable the commands", async () => {
    const g = await gateway();
    g.host.failing = new Error("Redis connection refused");
    expect((await g.run("/stop")).reply).toBe("Could not stop the run: Redis connection refused");
    g.host.failing = undefined;
    await g.run("/new");
    expect(g.host.calls.filter((c) => c === "newSession")).toHaveLength(1);
    expect(g.runner.extensions()[0]?.enabled).toBe(true);
  });
});
