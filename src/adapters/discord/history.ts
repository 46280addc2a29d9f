/**
 * Earlier messages of a Discord conversation, for the context of a session that starts mid-way:
 * a thread's messages (with the message it was started on, which lives in the parent channel), a
 * reply chain's messages (following `message_reference` links up from `before`), or a DM's.
 */
import { type HistoryMessage, isChannelError, type MessageRef } from "../types.js";
import type { DiscordApi, RawMessage } from "./api.js";
import type { Conversations } from "./conversations.js";
import { decodeMessageRef, decodeThreadKey, encodeMessageRef } from "./ids.js";

/** Message types people write (default, reply); system messages are left out. */
const USER_TYPES = new Set([0, 19]);

function toHistory(m: RawMessage, botId: string): HistoryMessage | undefined {
  if (m.type !== undefined && !USER_TYPES.has(m.type)) return undefined;
  const author = m.author;
  if (!author) return undefined;
  const fromBot = author.id === botId;
  const name = author.global_name ?? author.username;
  return {
    messageId: encodeMessageRef(m.channel_id, m.id),
    user: { id: author.id, isBot: fromBot || author.bot === true, ...(name ? { name } : {}) },
    text: m.content.replace(new RegExp(`<@!?${botId}>`, "g"), "").trim(),
    timestamp: m.timestamp ? Date.parse(m.timestamp) : 0,
    fromBot,
  };
}

const older = (a: string, b: string) => BigInt(a) < BigInt(b);

export async function fetchHistory(
  api: DiscordApi,
  conv: Conversations,
  threadKey: string,
  limit: number,
  before?: MessageRef,
): Promise<HistoryMessage[]> {
  if (limit <= 0) return [];
  const k = decodeThreadKey(threadKey);
  const beforeId = before ? decodeMessageRef(before).message : undefined;
  const botId = await api.botUserId();
  let raw: RawMessage[] = [];
  const target = await conv.target(threadKey, false);
  if (!target.replyTo) {
    raw = (await api.listMessages(target.channel, limit, beforeId)).reverse();
    // A thread started on a message: that message (in the parent channel) opened the conversation.
    if (
      k.anchor &&
      target.channel === k.anchor &&
      raw.length < limit &&
      (!beforeId || older(k.anchor, beforeId))
    ) {
      try {
        raw.unshift(await api.getMessage(k.channel, k.anchor));
      } catch (err) {
        if (!isChannelError(err, "not_found")) throw err;
      }
    }
  } else {
    // Reply chain: walk up from the message before which history is wanted.
    let id: string | undefined = beforeId ? undefined : target.replyTo;
    if (beforeId) {
      try {
        id = (await api.getMessage(target.channel, beforeId)).message_reference?.message_id;
      } catch (err) {
        if (!isChannelError(err, "not_found")) throw err;
      }
    }
    while (id && raw.length < limit) {
      let m: RawMessage;
      try {
        m = await api.getMessage(target.channel, id);
      } catch (err) {
        if (isChannelError(err, "not_found")) break;
        throw err;
      }
      raw.unshift(m);
      id = m.message_reference?.message_id;
    }
  }
  return raw
    .map((m) => toHistory(m, botId))
    .filter((m): m is HistoryMessage => m !== undefined)
    .slice(-limit);
}
