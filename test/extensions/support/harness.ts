/**
 * A thread with extensions wired the way the worker wires them: a runner, an in-memory host, an
 * `Agent` on a scripted model with the binding's hooks and tools, and `run(text)` that goes through
 * `prepareRun` like a real run.
 */
import { Type } from "@sinclair/typebox";
import { Agent } from "../../../src/agent/agent.js";
import type { Model, ToolResultMessage, UserMessage } from "../../../src/agent/llm/types.js";
import { convertToLlm } from "../../../src/agent/session/messages.js";
import type { AgentTool } from "../../../src/agent/types.js";
import { silentLogger } from "../../../src/extensions/logger.js";
import { ExtensionRunner } from "../../../src/extensions/runner.js";
import type { ThreadExtensionsOptions } from "../../../src/extensions/thread.js";
import type { ExtensionEntry, ExtensionFailure, SettingsPolicy } from "../../../src/extensions/types.js";
import { ScriptedStream, type ScriptedStreamReply, scriptedModel } from "../../support/scripted-stream.js";
import { MemoryHost } from "./memory-host.js";

function userMessage(text: string): UserMessage {
  return { role: "user", content: text, timestamp: Date.now() };
}

/** A tool that records its calls and echoes its `text` argument. */
export function echoTool(name = "echo", calls: string[] = []): AgentTool & { calls: string[] } {
  return {
    name,
    label: name,
    description: "Echoes text",
    parameters: Type.Object({ text: Type.String() }),
    calls,
    async execute(_id, params) {
      const text = (params as { text: string }).text;
      calls.push(text);
      return { content: [{ type: "text", text: `echo: ${text}` }], details: { text } };
    },
  };
}

export interface HarnessOptions extends ThreadExtensionsOptions {
  baseTools?: AgentTool[];
  replies?: (ScriptedStreamReply | string)[];
  host?: MemoryHost;
  model?: Model;
  systemPrompt?: string;
  /** The deployment's settings policy (`ExtensionRunnerOptions.settingsPolicy`). */
  settingsPolicy?: SettingsPolicy;
}

export async function createHarness(entries: ExtensionEntry[], options: HarnessOptions = {}) {
  const failures: ExtensionFailure[] = [];
  const runner = new ExtensionRunner({
    logger: silentLogger,
    onFailure: (f) => failures.push(f),
    ...(options.settingsPolicy ? { settingsPolicy: options.settingsPolicy } : {}),
  });
  await runner.load(entries);
  const host = options.host ?? new MemoryHost();
  const thread = runner.bind(host, options);
  const stream = new ScriptedStream(options.replies ?? []);
  const agent = new Agent({
    initialState: {
      model: options.model ?? scriptedModel(),
      tools: thread.tools(options.baseTools ?? []),
      systemPrompt: options.systemPrompt ?? "You are a test agent.",
    },
    streamFn: stream.streamFn,
    convertToLlm,
    ...thread.agentHooks(),
  });
  thread.attach(agent);
  const run = async (text: string) => agent.prompt(await thread.prepareRun([userMessage(text)]));
  const toolResults = () =>
    agent.state.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  const resultText = (r: ToolResultMessage | undefined) =>
    (r?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
  return { runner, host, thread, stream, agent, failures, run, toolResults, resultText };
}
