/**
 * Cross-provider history: rewrites a conversation so that the target model's API accepts it,
 * whatever models produced the earlier turns. Every provider calls `transformMessages` before it
 * converts messages to its wire format.
 */
import type {
  AssistantMessage,
  ImageContent,
  Message,
  Model,
  TextContent,
  ToolCall,
  ToolResultMessage,
} from "./types.js";

/** Maps a tool-call id to one the target model's API accepts. Must be deterministic. */
export type ToolCallIdNormalizer = (id: string, model: Model) => string;

/** Text of the error result inserted for a tool call that never got a result. */
export const MISSING_TOOL_RESULT_TEXT = "No result provided";

const IMAGE_OMITTED_TEXT = "(image omitted: the current model does not accept images)";

/** FNV-1a, 32 bit, base 36: a short deterministic tag for an id. */
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36).padStart(7, "0");
}

function sanitizeIdPart(part: string, maxLength: number): string {
  const cleaned = part
    .replace(/[^a-zA-Z0-9_-]/g, "_")
    .slice(0, maxLength)
    .replace(/_+$/, "");
  return cleaned.length > 0 ? cleaned : `call_${shortHash(part)}`;
}

/**
 * The built-in tool-call id rule for `model.api`:
 * - `anthropic-messages`, `google-generative-ai` and unknown apis: `[a-zA-Z0-9_-]{1,64}`;
 * - `openai-completions`: the same characters, at most 40 of them (OpenAI's limit);
 * - `openai-responses`: the `call_id` part only, `[a-zA-Z0-9_-]{1,64}`; a foreign item id is
 *   meaningless to the target and is dropped.
 * Ids of the form `call_id|item_id` (OpenAI Responses) keep their `call_id` part. Valid ids are
 * returned unchanged, so the rule is idempotent.
 */
export function defaultToolCallIdNormalizer(id: string, model: Model): string {
  const callPart = id.includes("|") ? (id.split("|")[0] ?? "") : id;
  const maxLength = model.api === "openai-completions" ? 40 : 64;
  return sanitizeIdPart(callPart.length > 0 ? callPart : id, maxLength);
}

function isSameModel(message: AssistantMessage, model: Model): boolean {
  return message.provider === model.provider && message.api === model.api && message.model === model.id;
}

function assistantForTarget(
  message: AssistantMessage,
  model: Model,
  rewriteId: (id: string) => string,
): AssistantMessage | undefined {
  const same = isSameModel(message, model);
  const content: AssistantMessage["content"] = [];
  for (const block of message.content) {
    if (block.type === "thinking") {
      if (same && (block.redacted || block.thinkingSignature)) content.push({ ...block });
      else if (block.redacted || block.thinking.trim() === "") continue;
      else if (same) content.push({ ...block });
      else content.push({ type: "text", text: block.thinking });
    } else if (block.type === "text") {
      if (same) content.push({ ...block });
      else if (block.text.length > 0) content.push({ type: "text", text: block.text });
    } else {
      const call: ToolCall = same
        ? { ...block }
        : { type: "toolCall", id: rewriteId(block.id), name: block.name, arguments: block.arguments };
      content.push(call);
    }
  }
  if (content.length === 0) return undefined;
  return { ...message, content };
}

function withoutImages<T extends TextContent | ImageContent>(content: T[]): (T | TextContent)[] {
  return content.map((c) => (c.type === "image" ? { type: "text", text: IMAGE_OMITTED_TEXT } : c));
}

function missingResult(call: ToolCall, timestamp: number): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: MISSING_TOOL_RESULT_TEXT }],
    isError: true,
    timestamp,
  };
}

/**
 * Returns a copy of `messages` that `model`'s API accepts. Pure: the input is never mutated.
 *
 * Rules:
 * - assistant messages with `stopReason` `error` or `aborted` are dropped, with their tool results;
 * - thinking from another model (provider, api or model id differ) becomes plain text; signed or
 *   redacted thinking is kept only for the same model; empty unsigned thinking is dropped;
 *   provider signatures on text and tool calls of another model are removed;
 * - tool-call ids of other models are rewritten by `normalizeToolCallId` (default
 *   `defaultToolCallIdNormalizer`, the target API's rules), kept unique, and every matching tool
 *   result is remapped to the new id;
 * - a tool call without a result gets a synthetic error result (`MISSING_TOOL_RESULT_TEXT`) before
 *   the next user or assistant message, or at the end; results without a pending call are dropped;
 * - images become a short text note when the model does not accept image input.
 * An assistant message left with no content is dropped.
 */
export function transformMessages(
  messages: Message[],
  model: Model,
  normalizeToolCallId: ToolCallIdNormalizer = defaultToolCallIdNormalizer,
): Message[] {
  const acceptsImages = model.input.includes("image");
  const rewritten = new Map<string, string>();
  const used = new Set<string>();
  for (const m of messages) {
    if (m.role !== "assistant" || !isSameModel(m, model)) continue;
    for (const b of m.content) if (b.type === "toolCall") used.add(b.id);
  }
  const rewriteId = (id: string): string => {
    const known = rewritten.get(id);
    if (known !== undefined) return known;
    let next = normalizeToolCallId(id, model);
    // Taken by the same model's own calls or by an earlier rewrite ("H " became "H"): a valid id
    // that arrives later is rewritten too, or two calls would share it.
    if (used.has(next)) {
      // At most 32 + 1 + 7 = 40 characters, inside every API's limit.
      const base = `${next.slice(0, 32)}_${shortHash(id)}`;
      next = base;
      for (let n = 2; used.has(next); n++) next = `${base.slice(0, base.length - String(n).length)}${n}`;
    }
    used.add(next);
    rewritten.set(id, next);
    return next;
  };

  const out: Message[] = [];
  // Tool calls of the latest kept assistant message, keyed by their original id, awaiting results.
  let pending = new Map<string, ToolCall>();
  let pendingTimestamp = 0;
  // Results of a dropped (errored or aborted) assistant message are dropped too.
  let dropping = new Set<string>();

  const closePending = (): void => {
    for (const call of pending.values()) out.push(missingResult(call, pendingTimestamp));
    pending = new Map();
  };

  for (const message of messages) {
    if (message.role === "user") {
      closePending();
      dropping = new Set();
      if (acceptsImages || typeof message.content === "string") out.push(message);
      else out.push({ ...message, content: withoutImages(message.content) });
    } else if (message.role === "assistant") {
      closePending();
      dropping = new Set();
      if (message.stopReason === "error" || message.stopReason === "aborted") {
        for (const b of message.content) if (b.type === "toolCall") dropping.add(b.id);
        continue;
      }
      const transformed = assistantForTarget(message, model, rewriteId);
      if (!transformed) continue;
      out.push(transformed);
      pendingTimestamp = message.timestamp;
      // Every tool call survives the transform, in order, so originals and results pair by position.
      const originals = message.content.filter((b): b is ToolCall => b.type === "toolCall");
      const targets = transformed.content.filter((b): b is ToolCall => b.type === "toolCall");
      originals.forEach((original, i) => {
        const target = targets[i];
        if (target && !pending.has(original.id)) pending.set(original.id, target);
      });
    } else {
      if (dropping.has(message.toolCallId)) continue;
      const call = pending.get(message.toolCallId);
      if (!call) continue;
      pending.delete(message.toolCallId);
      const content = acceptsImages ? message.content : withoutImages(message.content);
      out.push({ ...message, toolCallId: call.id, content });
    }
  }
  closePending();
  return out;
}
