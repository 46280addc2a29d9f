/**
 * The benchmark's model: a `StreamFn` that streams a reply at a chosen pace with no network, and
 * records when each request arrived and when its stream ended, keyed by the message tag `[m<n>]`
 * of the last user message. A message asks for a paced reply with `tokens=<n> ms=<total>`;
 * without it the reply is immediate (`ok [m<n>]`), which is the zero-latency scripted model.
 */
import { AssistantMessageEventStream } from "../../src/agent/llm/event-stream.js";
import type { AssistantMessage, Model, TextContent } from "../../src/agent/llm/types.js";
import { calculateCost, createAssistantMessage } from "../../src/agent/llm/usage.js";
import type { StreamFn } from "../../src/agent/types.js";

export const TAG = /\[(m\d+)\]/;

export function pacedModelInfo(): Model {
  return {
    id: "paced-1",
    name: "Paced",
    api: "scripted",
    provider: "scripted",
    reasoning: false,
    input: ["text"],
    // Priced like a hosted model, so a reply's usage and cost reach the thread's totals as a real
    // provider's do (the commands section counts those writes).
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 100_000,
    maxTokens: 8_000,
  };
}

export interface PacedModel {
  streamFn: StreamFn;
  /** Tag → time (ms, `performance.timeOrigin`-based) the request arrived. */
  requestedAt: Map<string, number>;
  /** Tag → time the stream's `done` was pushed. */
  endedAt: Map<string, number>;
  /** Tag → the reply's full text. */
  finalText: Map<string, string>;
  calls: number;
}

/**
 * The tags of the user messages after the last assistant message: the messages this request
 * answers (a thread that was busy, or waited for a worker, gets several in one run).
 */
function trailingUserTags(messages: readonly { role: string; content: unknown }[]): string[] {
  const tags: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "assistant") break;
    if (m?.role !== "user") continue;
    const text =
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("")
          : "";
    const tag = TAG.exec(text)?.[1];
    if (tag) tags.push(tag);
  }
  return tags;
}

function lastUserText(messages: readonly { role: string; content: unknown }[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      return (m.content as { type: string; text?: string }[])
        .filter((c) => c.type === "text")
        .map((c) => c.text ?? "")
        .join("");
    }
  }
  return "";
}

/** Wall-clock ms with sub-ms precision, comparable across this process. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export function createPacedModel(): PacedModel {
  const pm: PacedModel = {
    requestedAt: new Map(),
    endedAt: new Map(),
    finalText: new Map(),
    calls: 0,
    streamFn: (model, context, options) => {
      pm.calls++;
      const text = lastUserText(context.messages as never);
      const tag = TAG.exec(text)?.[1] ?? `untagged${pm.calls}`;
      // Every message this request answers counts as requested (and ended) with it.
      const answered = [...new Set([tag, ...trailingUserTags(context.messages as never)])];
      for (const t of answered) if (!pm.requestedAt.has(t)) pm.requestedAt.set(t, nowMs());
      const pace = /tokens=(\d+) ms=(\d+)/.exec(text);
      const tokens = pace ? Number(pace[1]) : 1;
      const totalMs = pace ? Number(pace[2]) : 0;
      const words = Array.from({ length: tokens }, (_, i) => (i === 0 ? `ok [${tag}]` : ` w${i}`));
      for (const t of answered) pm.finalText.set(t, words.join(""));
      const out = new AssistantMessageEventStream();
      const message: AssistantMessage = createAssistantMessage(model);
      const content: TextContent = { type: "text", text: "" };
      const signal = options?.signal;
      void (async () => {
        out.push({ type: "start", partial: message });
        message.content.push(content);
        out.push({ type: "text_start", contentIndex: 0, partial: message });
        const interval = tokens > 1 ? totalMs / tokens : 0;
        const t0 = nowMs();
        for (let i = 0; i < words.length; i++) {
          if (interval > 0) {
            const due = t0 + interval * (i + 1);
            const wait = due - nowMs();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
          if (signal?.aborted) {
            message.stopReason = "aborted";
            message.errorMessage = "Request was aborted.";
            out.push({ type: "error", reason: "aborted", error: message });
            return;
          }
          const delta = words[i] as string;
          content.text += delta;
          out.push({ type: "text_delta", contentIndex: 0, delta, partial: message });
        }
        out.push({ type: "text_end", contentIndex: 0, content, partial: message });
        message.stopReason = "stop";
        // Usage as a provider reports it (the prompt's size a rough guess: counting it would cost
        // the bench's CPU figures more than the count is worth).
        message.usage.input = 1000 + 50 * context.messages.length;
        message.usage.output = tokens;
        message.usage.totalTokens = message.usage.input + tokens;
        calculateCost(model, message.usage);
        for (const t of answered) pm.endedAt.set(t, nowMs());
        out.push({ type: "done", reason: "stop", message });
      })();
      return out;
    },
  };
  return pm;
}
