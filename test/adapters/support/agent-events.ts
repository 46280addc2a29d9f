/** Builders for the agent events a renderer receives, so tests read like a run. */

import type { AssistantMessage, StopReason, UserMessage } from "../../../src/agent/llm/types.js";
import type { AgentEvent } from "../../../src/agent/types.js";

export function assistant(
  text: string,
  stopReason: StopReason = "stop",
  errorMessage?: string,
): AssistantMessage {
  return {
    role: "assistant",
    content: text ? [{ type: "text", text }] : [],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "test-model",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason,
    ...(errorMessage ? { errorMessage } : {}),
    timestamp: 0,
  };
}

/** The `message_update` event for a text delta, given the text so far. */
export function textUpdate(soFar: string, delta: string): AgentEvent {
  const partial = assistant(soFar);
  return {
    type: "message_update",
    message: partial,
    assistantMessageEvent: { type: "text_delta", delta, contentIndex: 0, partial },
  };
}

/** Events of a streamed assistant text, one update per delta, ending with `message_end`. */
export function streamedText(deltas: string[]): AgentEvent[] {
  const events: AgentEvent[] = [{ type: "message_start", message: assistant("") }];
  let soFar = "";
  for (const d of deltas) {
    soFar += d;
    events.push(textUpdate(soFar, d));
  }
  events.push({ type: "message_end", message: assistant(soFar) });
  return events;
}

export function toolStart(id: string, name: string, args: Record<string, unknown>): AgentEvent {
  return { type: "tool_execution_start", toolCallId: id, toolName: name, args };
}

export function toolEnd(id: string, name: string, isError = false): AgentEvent {
  return {
    type: "tool_execution_end",
    toolCallId: id,
    toolName: name,
    args: {},
    result: { content: [{ type: "text", text: isError ? "failed" : "ok" }], details: {} },
    isError,
  };
}

/** A user message as the runtime hands it to the agent (a steer or a follow-up taken mid-run). */
export function userMessage(text: string): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: 0 };
}

/** The events of a user message the run takes. */
export function userTurn(message: UserMessage): AgentEvent[] {
  return [
    { type: "message_start", message },
    { type: "message_end", message },
  ];
}
