/**
 * How full the context is: the last assistant message's reported usage plus a character-based
 * estimate (~4 characters per token) of everything after it.
 */
import type { Usage } from "../../llm/types.js";
import type { AgentMessage } from "../../types.js";

export interface CompactionSettings {
  /** False turns automatic compaction off (manual `/compact` still works). Default true. */
  enabled: boolean;
  /** Tokens left free for the next reply and the summary request: compact above `contextWindow − reserveTokens`. */
  reserveTokens: number;
  /** Roughly how many tokens of recent conversation to keep verbatim after a compaction. */
  keepRecentTokens: number;
}

export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = {
  enabled: true,
  reserveTokens: 16_384,
  keepRecentTokens: 20_000,
};

/**
 * Estimated tokens of an image block: 1600, what Anthropic bills the largest picture Switchboard
 * shows a model (1568 px on the long edge, about 1.15 megapixels: width × height / 750); OpenAI and
 * Google bill such a picture less. Pictures from elsewhere (an imported pi session) count the same.
 */
export const IMAGE_TOKENS = 1600;

function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

function contentChars(content: string | readonly { type: string; text?: string }[]): {
  chars: number;
  images: number;
} {
  if (typeof content === "string") return { chars: content.length, images: 0 };
  let chars = 0;
  let images = 0;
  for (const block of content) {
    if (block.type === "text" && typeof block.text === "string") chars += block.text.length;
    else if (block.type === "image") images++;
  }
  return { chars, images };
}

/**
 * Estimated tokens of one message at ~4 characters per token (images `IMAGE_TOKENS`). It tends to
 * overestimate English prose, which errs towards compacting early rather than overflowing.
 */
export function estimateTokens(message: AgentMessage): number {
  switch (message.role) {
    case "user":
    case "toolResult":
    case "custom": {
      const { chars, images } = contentChars(message.content);
      return charsToTokens(chars) + images * IMAGE_TOKENS;
    }
    case "assistant": {
      let chars = 0;
      for (const block of message.content) {
        if (block.type === "text") chars += block.text.length;
        else if (block.type === "thinking") chars += block.thinking.length;
        else if (block.type === "toolCall")
          chars += block.name.length + JSON.stringify(block.arguments).length;
      }
      return charsToTokens(chars);
    }
    case "compactionSummary":
    case "branchSummary":
      return charsToTokens(message.summary.length);
    case "bashExecution":
      return message.excludeFromContext ? 0 : charsToTokens(message.command.length + message.output.length);
    default:
      return 0;
  }
}

/** The context size a response reports: `totalTokens`, or the sum of its parts when that is missing. */
export function usageContextTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

export interface ContextEstimate {
  /** The estimate: `usageTokens + trailingTokens`. */
  tokens: number;
  /** Context size reported by the last usable assistant message (0 when none). */
  usageTokens: number;
  /** Character-based estimate of the messages after it (all messages when none). */
  trailingTokens: number;
  /** Index in `messages` of that assistant message, or -1. */
  lastUsageIndex: number;
}

/**
 * Estimates the context size of `messages` (as `buildSessionContext` returns them). The last
 * assistant message that succeeded and reported usage anchors the estimate; messages after it
 * are counted at ~4 characters per token. Usage from before a compaction (messages before the
 * summary, or kept messages older than it) describes the old, larger context, so it is never
 * used: then every message is estimated.
 */
export function estimateContextTokens(messages: readonly AgentMessage[]): ContextEstimate {
  let lastUsageIndex = -1;
  let usageTokens = 0;
  // Kept messages follow the summary in the context but predate it: their usage is stale too.
  let compactedAt = Number.NEGATIVE_INFINITY;
  for (const m of messages) if (m.role === "compactionSummary") compactedAt = m.timestamp;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m) continue;
    if (m.role === "compactionSummary") break;
    if (
      m.role === "assistant" &&
      m.timestamp > compactedAt &&
      m.stopReason !== "error" &&
      m.stopReason !== "aborted"
    ) {
      const t = usageContextTokens(m.usage);
      if (t > 0) {
        lastUsageIndex = i;
        usageTokens = t;
        break;
      }
    }
  }
  let trailingTokens = 0;
  for (let i = lastUsageIndex + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m) trailingTokens += estimateTokens(m);
  }
  return { tokens: usageTokens + trailingTokens, usageTokens, trailingTokens, lastUsageIndex };
}

/**
 * True when a context of `contextTokens` should be compacted: automatic compaction is enabled and
 * the context exceeds `contextWindow − reserveTokens`. Check it after every turn.
 */
export function shouldCompact(
  contextTokens: number,
  contextWindow: number,
  settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
): boolean {
  if (!settings.enabled) return false;
  return contextTokens > contextWindow - settings.reserveTokens;
}
