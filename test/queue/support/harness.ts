/**
 * Pieces the runtime tests share: inbound messages, a scripted-model agent factory, gated tools,
 * and reading a thread's session back.
 */
import { Type } from "@sinclair/typebox";
import type { InboundMessage } from "../../../src/adapters/types.js";
import { Agent } from "../../../src/agent/agent.js";
import type { Model, TextContent } from "../../../src/agent/llm/types.js";
import { buildSessionContext } from "../../../src/agent/session/context.js";
import { convertToLlm } from "../../../src/agent/session/messages.js";
import type { SessionEntry } from "../../../src/agent/session/types.js";
import type { AgentMessage, AgentTool } from "../../../src/agent/types.js";
import type { RecordingSinks } from "../../../src/queue/recording-sink.js";
import type { SessionStore } from "../../../src/queue/store/types.js";
import type { AgentFactory, DeliveryMode, Runtime } from "../../../src/queue/types.js";
import type { CompactionConfig } from "../../../src/queue/worker/holder-env.js";
import type { ManualClock } from "../../support/manual-clock.js";
import { type Gate, type ScriptedStream, scriptedModel } from "../../support/scripted-stream.js";
import type { LeaseLog } from "./lease-log.js";

let counter = 0;

/** A chat message for `threadKey`; `eventId` defaults to a fresh one. */
export function inbound(threadKey: string, text: string, eventId?: string): InboundMessage {
  counter++;
  return {
    platform: "web",
    threadKey,
    eventId: eventId ?? `web:event:${threadKey}:${counter}:${Math.random().toString(36).slice(2)}`,
    messageId: `web:${threadKey}:${counter}`,
    channelId: "web",
    user: { id: "u1", name: "Ada", isBot: false },
    text,
    attachments: [],
    mentioned: true,
    isDirect: true,
    timestamp: Date.now(),
  };
}

/** Models the tests switch between. */
const MODELS: Record<string, Model> = {
  "scripted/scripted-1": scriptedModel(),
  "scripted/other": scriptedModel({ id: "other", name: "Other" }),
};

export const resolveTestModel = (ref: string): Model | undefined => MODELS[ref];

/** An agent factory over one scripted stream: scripted model by default, the thread's model when set. */
export function scriptedFactory(stream: ScriptedStream, tools: AgentTool[] = []): AgentFactory {
  return (ctx) =>
    new Agent({
      initialState: {
        model: (ctx.model && MODELS[ctx.model]) || scriptedModel(),
        thinkingLevel: ctx.thinkingLevel ?? "off",
        messages: ctx.messages,
        tools,
      },
      streamFn: stream.streamFn,
      convertToLlm,
    });
}

/** What a gated tool saw: how often it ran, and whether its abort signal fired. */
export interface ToolSeen {
  runs: number;
  aborted?: boolean;
}

/** A tool that waits at `gate` (or until aborted) and records whether its signal fired. */
export function gatedTool(
  name: string,
  gate: () => Gate | undefined,
  seen: ToolSeen = { runs: 0 },
): AgentTool {
  return {
    name,
    label: name,
    description: `Test tool ${name}`,
    parameters: Type.Object({}),
    async execute(_id, _params, signal) {
      seen.runs++;
      const g = gate();
      if (g) {
        await new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(new Error("aborted"));
          signal?.addEventListener(
            "abort",
            () => {
              seen.aborted = true;
              reject(new Error("aborted"));
            },
            { once: true },
          );
          g.arrive().then(resolve);
        });
      }
      return { content: [{ type: "text", text: `${name} done` }], details: {} };
    },
  };
}

/** Plain text of a message's content. */
export function textOf(m: AgentMessage): string {
  const content = (m as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c): c is TextContent => (c as { type?: string }).type === "text")
    .map((c) => c.text)
    .join("");
}

/** The messages of a thread's current session, as the model would see them. */
export async function sessionMessages(store: SessionStore, threadKey: string): Promise<AgentMessage[]> {
  const branch = await store.readBranch(threadKey);
  if (!branch) return [];
  return buildSessionContext(branch.entries, branch.leafId).messages;
}

/** Every entry of a thread's current session. */
export async function sessionEntries(store: SessionStore, threadKey: string): Promise<SessionEntry[]> {
  const meta = await store.getThreadMeta(threadKey);
  if (!meta?.currentSessionId) return [];
  return (await store.readAll(threadKey, meta.currentSessionId)).entries;
}

/** What `waitIdle` watches: a runtime and its lease events. */
export interface Watched {
  runtime: Runtime;
  leases: LeaseLog;
}

/**
 * Resolves when the thread has nothing queued, nothing inflight and no holder. It re-reads the
 * status after each lease event of the thread (a thread becomes idle only when a tenure ends), so
 * it waits on the runtime, never on time.
 */
export async function waitIdle(w: Watched, threadKey: string): Promise<void> {
  for (;;) {
    const next = w.leases.next((e) => e.threadKey === threadKey);
    const s = await w.runtime.status(threadKey);
    if (!s.active && s.inboxDepth === 0) return;
    await next;
  }
}

/** A harness around one runtime instance, as the contract suite needs it. */
export interface RuntimeHarness extends Watched {
  store: SessionStore;
  sinks: RecordingSinks;
  /** The runtime's clock: it moves only when the test advances it. */
  clock: ManualClock;
  close(): Promise<void>;
}

export interface HarnessOptions {
  stream: ScriptedStream;
  tools?: AgentTool[];
  concurrency?: number;
  inboxCap?: number;
  collectDebounceMs?: number;
  defaultMode?: DeliveryMode;
  compaction?: CompactionConfig;
}

/** Creates (and starts) a runtime for one test. */
export type HarnessFactory = (options: HarnessOptions) => Promise<RuntimeHarness>;
