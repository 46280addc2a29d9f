/**
 * Finding a post again by its idempotency key (`PostOptions.idempotencyKey`): Slack has no such key,
 * so the adapter attaches it as message metadata and looks for it in the conversation, as a worker
 * does that recovers what a dead one may have posted already (docs/runtime.md, "The render journal").
 */
import type { MessageRef } from "../types.js";
import { decodeMessageRef, decodeThreadKey, encodeMessageRef, isDmChannel } from "./ids.js";
import type { SlackWeb } from "./web.js";

type Json = Record<string, unknown>;

/** The metadata event type of posts made with an idempotency key. */
const POST_EVENT_TYPE = "switchboard_post";

/** The thread a post into `threadKey` (replying to `replyTo`) goes to; undefined: the top level. */
export async function postThread(
  web: SlackWeb,
  threadKey: string,
  replyTo: MessageRef | undefined,
): Promise<string | undefined> {
  const t = decodeThreadKey(threadKey);
  // A reply goes into the replied message's thread; a DM's top level stays the top level.
  if (replyTo && t.threadTs === undefined && !isDmChannel(t.channel)) {
    const r = decodeMessageRef(replyTo);
    return (await web.threadOf(r.channel, r.ts)) ?? r.ts;
  }
  return t.threadTs;
}

/** `chat.postMessage`'s `metadata` for a post with idempotency key `key`. */
export function postMetadata(key: string): Json {
  return { event_type: POST_EVENT_TYPE, event_payload: { key } };
}

/**
 * The bot's message in `threadKey` posted with key `key` (as a reply to `replyTo`): among the first
 * 1,000 replies of its thread, or the newest 200 messages of the top level (a DM, a channel).
 * Undefined when there is none; rejects when Slack cannot be asked.
 */
export async function findPostedByKey(
  web: SlackWeb,
  threadKey: string,
  key: string,
  replyTo: MessageRef | undefined,
): Promise<MessageRef | undefined> {
  const { team, channel } = decodeThreadKey(threadKey);
  const threadTs = await postThread(web, threadKey, replyTo);
  const found = (messages: unknown) => {
    const ts = (Array.isArray(messages) ? (messages as Json[]) : []).find((m) => {
      const meta = m.metadata as Json | undefined;
      return meta?.event_type === POST_EVENT_TYPE && (meta.event_payload as Json | undefined)?.key === key;
    })?.ts;
    return typeof ts === "string" ? encodeMessageRef(team, channel, ts) : undefined;
  };
  if (threadTs === undefined) {
    const r = await web.call("conversations.history", { channel, limit: 200, include_all_metadata: true });
    return found(r.messages);
  }
  for await (const page of web.replyPages(channel, threadTs, { include_all_metadata: true }, 5)) {
    const ref = found(page);
    if (ref) return ref;
  }
  return undefined;
}
