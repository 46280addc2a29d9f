/**
 * Thread context: when the bot is first addressed inside a thread it has no session for (a
 * mention deep in an existing Slack thread, a Telegram reply chain, a Discord thread), the thread's
 * earlier messages travel with the message into the inbox and the formatter puts them in front of
 * it, marked as earlier context, so the first model request sees what the mention refers to.
 *
 * The messages ride on the inbound message itself (`threadContext`), because the worker that
 * formats it may be another process with no access to the gateway's platform connection.
 */
import type { ChannelAdapter, InboundMessage } from "../../adapters/types.js";
import type { TextContent, UserMessage } from "../../agent/llm/types.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { InboundFormatter } from "../../queue/types.js";
import { plainInboundFormatter } from "../../queue/worker/item-messages.js";
import type { Logger } from "../log.js";

/** One earlier message of the thread, as the model is shown it. */
export interface ContextMessage {
  author: string;
  text: string;
  fromBot: boolean;
}

/** An inbound message carrying the thread's earlier messages. */
export type InboundWithContext = InboundMessage & { threadContext?: ContextMessage[] };

const HEADER = "[Earlier messages in this thread, before you were added to it — context only]";
const FOOTER = "[End of earlier messages. The message to answer:]";

/**
 * `inbound` with up to `limit` earlier messages attached when the thread has no session yet and the
 * adapter can fetch its history; `inbound` unchanged otherwise. Never rejects: a history failure
 * only loses the context (logged).
 */
export async function attachThreadContext(
  inbound: InboundMessage,
  o: { adapter: ChannelAdapter; store: SessionStore; limit: number; logger: Logger },
): Promise<InboundMessage> {
  const fetchHistory = o.adapter.fetchHistory?.bind(o.adapter);
  if (o.limit <= 0 || !fetchHistory) return inbound;
  try {
    if (await o.store.getThreadMeta(inbound.threadKey)) return inbound;
    const before = inbound.messageId || undefined;
    const history = await fetchHistory(inbound.threadKey, o.limit + 1, before);
    const earlier = history
      .filter((h) => h.messageId !== inbound.messageId && h.text.trim() !== "")
      .slice(-o.limit)
      .map((h) => ({
        author: h.fromBot ? "you" : (h.user.name ?? h.user.id),
        text: h.text,
        fromBot: h.fromBot,
      }));
    if (earlier.length === 0) return inbound;
    const out: InboundWithContext = { ...inbound, threadContext: earlier };
    return out;
  } catch (err) {
    o.logger.warn(
      { threadKey: inbound.threadKey, err: err instanceof Error ? err.message : String(err) },
      "could not fetch the thread's earlier messages; starting without them",
    );
    return inbound;
  }
}

/** The text block that shows `context` to the model. */
export function contextBlock(context: readonly ContextMessage[]): string {
  const lines = context.map((c) => `${c.author}: ${c.text}`);
  return [HEADER, ...lines, FOOTER].join("\n");
}

/**
 * The runtime's formatter with thread context: the plain formatter's user message, preceded by the
 * earlier messages any of `messages` carries.
 */
export const threadContextFormatter: InboundFormatter = (messages: InboundMessage[]): UserMessage => {
  const base = plainInboundFormatter(messages);
  const context = messages.flatMap((m) => (m as InboundWithContext).threadContext ?? []);
  if (context.length === 0) return base;
  const [first, ...rest] = base.content as TextContent[];
  const text = `${contextBlock(context)}\n\n${first?.text ?? ""}`;
  return { ...base, content: [{ type: "text", text }, ...rest] };
};
