/**
 * Messages and entry chains for session tests.
 */

import type { AssistantMessage, ToolResultMessage, UserMessage } from "../../src/agent/llm/types.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import type { SessionEntry } from "../../src/agent/session/types.js";

export function user(text: string): UserMessage {
  return { role: "user", content: text, timestamp: 1_700_000_000_000 };
}

export interface AssistantOptions {
  toolCalls?: { id: string; name: string; args?: Record<string, unknown> }[];
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; cost?: number };
  stopReason?: AssistantMessage["stopReason"];
  provider?: string;
  model?: string;
}

export function assistant(text: string, options: AssistantOptions = {}): AssistantMessage {
  const u = options.usage ?? {};
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  const cacheRead = u.cacheRead ?? 0;
  const cacheWrite = u.cacheWrite ?? 0;
  const cost = u.cost ?? 0;
  const content: AssistantMessage["content"] = text ? [{ type: "text", text }] : [];
  for (const c of options.toolCalls ?? [])
    content.push({ type: "toolCall", id: c.id, name: c.name, arguments: c.args ?? {} });
  return {
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: options.provider ?? "anthropic",
    model: options.model ?? "claude-test",
    usage: {
      input,
      output,
      cacheRead,
      cacheWrite,
      totalTokens: input + output + cacheRead + cacheWrite,
      cost: { input: cost, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
    },
    stopReason: options.stopReason ?? ((options.toolCalls?.length ?? 0) > 0 ? "toolUse" : "stop"),
    timestamp: 1_700_000_000_000,
  };
}

export function toolResult(toolCallId: string, text: string, toolName = "bash"): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId,
    toolName,
    content: [{ type: "text", text }],
    isError: false,
    timestamp: 1,
  };
}

/** A chain of simple conversation turns: user question, assistant answer (with usage). */
export function conversation(turns: number, start: string | null = null, words = "x"): SessionEntry[] {
  const chain = new EntryChain(start);
  for (let i = 0; i < turns; i++) {
    chain.add({ type: "message", message: user(`question ${i} ${words}`) });
    chain.add({
      type: "message",
      message: assistant(`answer ${i} ${words}`, { usage: { input: 10, output: 5 } }),
    });
  }
  return chain.entries;
}

/** The text of each message of a context, for compact assertions. */
export function texts(messages: readonly { role: string }[]): string[] {
  return messages.map((m) => {
    const msg = m as { role: string; content?: unknown; summary?: string };
    if (msg.role === "compactionSummary" || msg.role === "branchSummary") return `${msg.role}:${msg.summary}`;
    const c = msg.content;
    if (typeof c === "string") return `${msg.role}:${c}`;
    if (Array.isArray(c))
      return `${msg.role}:${c.map((b: { type: string; text?: string; name?: string }) => (b.type === "text" ? b.text : `[${b.type}${b.name ? ` ${b.name}` : ""}]`)).join("")}`;
    return msg.role;
  });
}

/** Collects warnings a store or parser logs. */
export function warnCollector(): { warn(obj: object, msg: string): void; messages: string[] } {
  const messages: string[] = [];
  return { warn: (_obj, msg) => messages.push(msg), messages };
}
