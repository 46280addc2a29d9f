/**
 * How a compaction made during a run shrinks the engine loop's own copy of the history. The loop
 * hands the same growing array to `transformContext` before every LLM call. A compaction is made
 * after every earlier write reached the session, so at that moment the session's branch and the
 * loop's history hold the same messages: everything up to the loop's last message (the anchor,
 * found again by object identity) is replaced by the session's compacted context (summary and
 * kept messages). Later calls of the same run reuse the view without reading the session again.
 */
import { isAssistantMessage } from "../../agent/agent-loop.js";
import type { AgentMessage } from "../../agent/types.js";

export interface CompactionView {
  /** What the session's context is up to the anchor: the summary, then the kept messages. */
  prefix: AgentMessage[];
  /** The last message of the agent's history when the compaction was made. */
  anchor: AgentMessage;
}

/**
 * `messages` with everything up to and including the view's anchor replaced by its prefix.
 * Unchanged when there is no view or the anchor is not in `messages` (which is also the case for
 * an already compacted list, so applying a view twice is harmless).
 */
export function applyView(messages: AgentMessage[], view: CompactionView | undefined): AgentMessage[] {
  if (!view) return messages;
  const i = messages.lastIndexOf(view.anchor);
  if (i < 0) return messages;
  return [...view.prefix, ...messages.slice(i + 1)];
}

/** `messages` without its trailing failed (error or aborted) assistant replies. */
export function withoutFailedTail(messages: readonly AgentMessage[]): AgentMessage[] {
  let end = messages.length;
  while (end > 0) {
    const m = messages[end - 1];
    if (!m || !isAssistantMessage(m) || (m.stopReason !== "error" && m.stopReason !== "aborted")) break;
    end--;
  }
  return messages.slice(0, end);
}
