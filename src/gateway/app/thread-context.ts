/**
 * Thread context: when the bot is first addressed inside a thread it has no session for (a
 * mention deep in an existing Slack thread, a Telegram reply chain, a Discord thread), the thread's
 * earlier messages travel with the message into the inbox and the formatter puts them in front of
 * it, marked as earlier context, so the first model request sees what the mention refers to. Each
 * line names its author (the display name, as the messages themselves do; "you" for the bot).
 *
 * The messages ride on the inbound message itself (`threadContext`), because the worker that
 * formats it may be another process with no access to the gateway's platform connection.
 *
 * Earlier messages are context only when they were not, and will not be, delivered to the thread
 * themselves, or the model would read them twice: never in a direct chat (every message there is
 * delivered, including those that arrive before the session exists), and in a group thread only for
 * the first delivery (once something is queued for the thread, the messages before it travel with
 * that first one, and those after it that the bot sees are delivered on their own).
 */
import type { ChannelAdapter, InboundMessage } from "../../adapters/types.js";
import type { SessionStore, ThreadMeta } from "../../queue/store/types.js";
import type { Logger } from "../log.js";
import { authorName, type InboundWithContext } from "./inbound-format.js";

/**
 * `inbound` with up to `limit` earlier messages attached when the thread has no session yet and the
 * adapter can fetch its history; `inbound` unchanged otherwise. Never rejects: a history failure
 * only loses the context (logged).
 */
export async function attachThreadContext(
  inbound: InboundMessage,
  o: {
    adapter: ChannelAdapter;
    store: SessionStore;
    limit: number;
    logger: Logger;
    /** The thread's metadata when the caller read it already (null: it has none). */
    meta?: ThreadMeta | null;
    /** Whether the thread has messages queued or in a run (delivered before this one). */
    queued?: () => Promise<boolean>;
  },
): Promise<InboundMessage> {
  const fetchHistory = o.adapter.fetchHistory?.bind(o.adapter);
  if (o.limit <= 0 || !fetchHistory || inbound.isDirect) return inbound;
  try {
    const meta = o.meta === undefined ? await o.store.getThreadMeta(inbound.threadKey) : o.meta;
    if (meta) return inbound;
    if (await o.queued?.()) return inbound;
    const before = inbound.messageId || undefined;
    const history = await fetchHistory(inbound.threadKey, o.limit + 1, before);
    const earlier = history
      .filter((h) => h.messageId !== inbound.messageId && h.text.trim() !== "")
      .slice(-o.limit)
      .map((h) => ({
        author: h.fromBot ? "you" : authorName(h.user),
        text: h.text,
        fromBot: h.fromBot,
      }));
    if (earlier.length === 0) return inbound;
    const out: InboundWithContext = { ...inbound, threadContext: earlier };
    return out;
  } catch (err) {
    o.logger.warn(
      { threadKey: inbound.threadKey, err },
      "could not fetch the thread's earlier messages; starting without them",
    );
    return inbound;
  }
}
