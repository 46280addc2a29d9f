/**
 * Reading a session's tail after a crash: which tool calls never got a result, and whether the
 * conversation ends in something the model has not answered yet.
 */
import type { ToolResultMessage } from "../../agent/llm/types.js";
import type { AgentMessage } from "../../agent/types.js";

/** The text of the error result that closes a tool call whose worker died. */
export const INTERRUPTED_TOOL_TEXT =
  "interrupted: the worker stopped (whatever the call had begun to post in the chat, a file included, is finished by the next worker: do not send it again)";

/**
 * Error results for the tool calls of the last assistant message that have no result yet, when
 * nothing but tool results follows it (the run died while its tools ran).
 */
export function danglingToolResults(
  messages: readonly AgentMessage[],
  now = Date.now(),
): ToolResultMessage[] {
  let a = messages.length - 1;
  while (a >= 0 && messages[a]?.role === "toolResult") a--;
  const assistant = messages[a];
  if (assistant?.role !== "assistant") return [];
  if (assistant.stopReason === "error" || assistant.stopReason === "aborted") return [];
  const answered = new Set<string>();
  for (const m of messages.slice(a + 1)) if (m.role === "toolResult") answered.add(m.toolCallId);
  const out: ToolResultMessage[] = [];
  for (const block of assistant.content) {
    if (block.type !== "toolCall" || answered.has(block.id)) continue;
    out.push({
      role: "toolResult",
      toolCallId: block.id,
      toolName: block.name,
      content: [{ type: "text", text: INTERRUPTED_TOOL_TEXT }],
      isError: true,
      timestamp: now,
    });
  }
  return out;
}

/**
 * True when the history ends in a message the model still has to answer: a user message or a tool
 * result. A finished, failed or aborted assistant reply is an end (a failure was already shown).
 */
export function needsAnswer(messages: readonly AgentMessage[]): boolean {
  const last = messages[messages.length - 1];
  return last !== undefined && (last.role === "user" || last.role === "toolResult");
}
