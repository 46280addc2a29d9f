/**
 * Commands end to end through the embedded queue runtime: the gateway side runs commands through a
 * runner bound to the production host (`ThreadHost`); the worker side builds each thread's agent
 * with the same runner's tools and hooks. (Platform adapters are not involved: routing their commands and
 * reactions to the runner is the gateway wiring.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/adapters/types.js";
import { Agent } from "../../src/agent/agent.js";
import { systemClock } from "../../src/agent/clock.js";
import { registerModel, unregisterModel } from "../../src/agent/llm/models.js";
import type { Context, Model, SimpleStreamOptions } from "../../src/agent/llm/types.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import type { AgentTool } from "../../src/agent/types.js";
import { createCommandsExtension } from "../../src/extensions/commands/index.js";
import { resolveModelRef } from "../../src/extensions/context.js";
import { silentLogger } from "../../src/extensions/logger.js";
import { ExtensionRunner } from "../../src/extensions/runner.js";
import { createToolsExtension, ensureWorkspace } from "../../src/extensions/tools/index.js";
import type { ThreadView } from "../../src/extensions/types.js";
import { ThreadHost, type ThreadHostDeps } from "../../src/gateway/app/thread-host.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import type { AgentFactory } from "../../src/queue/types.js";
import { RecordingAdapter } from "../adapters/support/recording-adapter.js";
import { createGate, type Gate, ScriptedStream, scriptedModel } from "../support/scripted-stream.js";

const alpha: Model = scriptedModel({
  id: "alpha-1",
  name: "Alpha",
  provider: "alpha",
  baseUrl: "http://127.0.0.1:9",
});
const beta: Model = scriptedModel({
  id: "beta-1",
  name: "Beta",
  provider: "beta",
  baseUrl: "http://127.0.0.1:9",
});
const DEFAULT_MODEL = "alpha/alpha-1";

beforeAll(() => {
  registerModel(alpha);
  registerModel(beta);
});
afterAll(() => {
  unregisterModel("alpha", "alpha-1");
  unregisterModel("beta", "beta-1");
});

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface World {
  runtime: EmbeddedRuntime;
  streams: { alpha: ScriptedStream; beta: ScriptedStream };
  thread: ThreadView;
  gateway: ReturnType<ExtensionRunner["bind"]>;
  /** What the gateway-side host answered the invoker of a command. */
  replies: string[];
  root: string;
  deliver(text: string): Promise<unknown>;
  idle(): Promise<void>;
}

/** What the gateway gives every thread host, over the test's runtime and a recording web adapter. */
function deps(runtime: EmbeddedRuntime): ThreadHostDeps {
  const adapter = new RecordingAdapter(systemClock);
  return {
    runtime,
    store: runtime.store,
    adapterOf: (p) => (p === "web" ? adapter : undefined),
    defaultModel: () => DEFAULT_MODEL,
    logger: silentProcessLogger(),
  };
}

let seq = 0;

/** A chat message in `thread` from its user. */
function inboundFor(thread: ThreadView, text: string): InboundMessage {
  seq++;
  return {
    platform: "web",
    threadKey: thread.threadKey,
    eventId: `web:event:${thread.threadKey}:${seq}`,
    messageId: `web:${thread.threadKey}:${seq}`,
    channelId: "web",
    user: { id: thread.user?.id ?? "u1", name: thread.user?.name ?? "Ada", isBot: false },
    text,
    attachments: [],
    mentioned: true,
    isDirect: true,
    timestamp: Date.now(),
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(extraTools: AgentTool[] = []): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "sb-ext-e2e-"));
  const root = join(dir, "workspaces");
  const runner = new ExtensionRunner({ logger: silentLogger });
  await runner.load([
    { name: "commands", factory: createCommandsExtension() },
    { name: "tools", factory: createToolsExtension({ root, names: ["bash"] }) },
  ]);
  const streams = { alpha: new ScriptedStream(), beta: new ScriptedStream() };
  const streamFn = (model: Model, context: Context, options?: SimpleStreamOptions) =>
    (model.provider === "beta" ? streams.beta : streams.alpha).streamFn(model, context, options);
  let runtime: EmbeddedRuntime | undefined;
  const agentFactory: AgentFactory = (ctx) => {
    if (!runtime) throw new Error("runtime not ready");
    const host = new ThreadHost(deps(runtime), {
      threadKey: ctx.threadKey,
      platform: "web",
      user: () => undefined,
    });
    const thread = runner.bind(host);
    const model = resolveModelRef(ctx.model ?? DEFAULT_MODEL) ?? alpha;
    const agent = new Agent({
      initialState: {
        model,
        thinkingLevel: ctx.thinkingLevel ?? "off",
        messages: ctx.messages,
        tools: thread.tools(extraTools),
      },
      streamFn,
      convertToLlm,
      ...thread.agentHooks(),
    });
    thread.attach(agent);
    return agent;
  };
  runtime = new EmbeddedRuntime({
    dataDir: join(dir, "data"),
    sinks: new RecordingSinks().factory,
    agentFactory,
    leaseTtlMs: 3000,
    controlPollMs: 100,
  });
  await runtime.start();
  const rt = runtime;
  cleanups.push(async () => {
    await rt.stop({ graceMs: 500 });
    rmSync(dir, { recursive: true, force: true });
  });
  const thread: ThreadView = {
    threadKey: `web:e2e-${Math.random().toString(36).slice(2)}`,
    platform: "web",
    user: { id: "u1", name: "Ada" },
  };
  const replies: string[] = [];
  const gatewayHost = new ThreadHost(deps(rt), {
    threadKey: thread.threadKey,
    platform: "web",
    user: () => thread.user,
    reply: async (text) => {
      replies.push(text);
    },
  });
  return {
    runtime: rt,
    streams,
    thread,
    gateway: runner.bind(gatewayHost),
    replies,
    root,
    deliver: (text) => rt.deliver(inboundFor(thread, text)),
    idle: () =>
      until(
        async () => {
          const s = await rt.status(thread.threadKey);
          return !s.active && s.inboxDepth === 0;
        },
        10_000,
        "the thread to be idle",
      ),
  };
}

function waitingTool(gate: Gate): AgentTool {
  return {
    name: "wait",
    label: "wait",
    description: "waits",
    parameters: Type.Object({}),
    async execute() {
      await gate.arrive();
      return { content: [{ type: "text", text: "waited" }], details: {} };
    },
  };
}

describe("commands through the embedded runtime", () => {
  it("/model switches a running thread to another provider at its next model call, with the history", async () => {
    const gate = createGate();
    const w = await start([waitingTool(gate)]);
    w.streams.alpha.enqueue({ text: "Let me wait.", toolCalls: [{ name: "wait", args: {} }] });
    w.streams.beta.enqueue("Beta finishing the first run.", "Beta answering the second message.");
    await w.deliver("hello there");
    await gate.reached;
    expect(await w.gateway.runCommand("model", "beta-1")).toBe(true);
    expect(w.replies.at(-1)).toBe("Model set to beta/beta-1 (Beta).");
    gate.release();
    await w.idle();
    expect(w.streams.alpha.calls).toHaveLength(1);
    const first = w.streams.beta.calls[0];
    expect(first?.model.id).toBe("beta-1");
    expect(first?.context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(JSON.stringify(first?.context.messages)).toContain("Let me wait.");

    await w.deliver("and now?");
    await w.idle();
    const second = w.streams.beta.calls[1];
    expect(JSON.stringify(second?.context.messages)).toContain("hello there");
    expect(JSON.stringify(second?.context.messages)).toContain("Beta finishing the first run.");
    expect((await w.runtime.store.getThreadMeta(w.thread.threadKey))?.model).toBe("beta/beta-1");
    await w.gateway.runCommand("status", "");
    expect(w.replies.at(-1)).toMatch(/^Thread: web:\S+\nModel: beta\/beta-1 \(Beta\)\nThinking: off\n/);
  });

  it("/stop during a running `bash sleep` ends it and its children within a second", async () => {
    const w = await start();
    const workspace = await ensureWorkspace(w.root, w.thread.threadKey);
    const pidFile = join(workspace, "sleep.pid");
    w.streams.alpha.enqueue({
      toolCalls: [{ name: "bash", args: { command: "sleep 30 & echo $! > sleep.pid; wait" } }],
    });
    await w.deliver("sleep for a while");
    await until(
      () => existsSync(pidFile) && /^\d+\n/.test(readFileSync(pidFile, "utf8")),
      5000,
      "the sleep to start",
    );
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(alive(pid)).toBe(true);
    const stoppedAt = Date.now();
    expect(await w.gateway.runCommand("stop", "")).toBe(true);
    expect(w.replies.at(-1)).toBe("⏹️ Stopped.");
    await until(() => !alive(pid), 1000, "the sleep to be killed");
    expect(Date.now() - stoppedAt).toBeLessThan(1000);
    await w.idle();
  });

  it("/new starts a fresh session and keeps the old one", async () => {
    const w = await start();
    w.streams.alpha.enqueue("First answer.", "Fresh answer.");
    await w.deliver("remember the number 7");
    await w.idle();
    const replies = w.replies.length;
    expect(await w.gateway.runCommand("new", "")).toBe(true);
    // One confirmation: the runtime's notice once the session exists, none from the command.
    expect(w.replies).toHaveLength(replies);
    await w.idle();
    await w.deliver("what was the number?");
    await w.idle();
    const sessions = await w.runtime.store.listSessions(w.thread.threadKey);
    expect(sessions).toHaveLength(2);
    expect(sessions[0]?.entryCount).toBeGreaterThan(0);
    expect(w.streams.alpha.calls[1]?.context.messages.map((m) => m.role)).toEqual(["user"]);
  });
});
