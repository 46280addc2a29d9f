/**
 * Web chat ids. A conversation id is a short random token (`c` + 10 base-36 characters); a thread
 * key names a conversation (`web:<conversation>`); a message reference names the conversation and
 * the message (`web:<conversation>:<message>`), so an `edit` needs nothing else.
 */
import { randomBytes } from "node:crypto";
import { ChannelError } from "../types.js";

const CONVERSATION_ID = /^c[a-z0-9]{4,32}$/;
const MESSAGE_ID = /^m[0-9]{1,15}$/;

/** A new random conversation id. */
export function newConversationId(): string {
  const bytes = randomBytes(10);
  let id = "c";
  for (const b of bytes) id += (b % 36).toString(36);
  return id;
}

export const isConversationId = (id: string): boolean => CONVERSATION_ID.test(id);
export const isMessageId = (id: string): boolean => MESSAGE_ID.test(id);

export const threadKeyOf = (conversationId: string): string => `web:${conversationId}`;
export const messageRefOf = (conversationId: string, messageId: string): string =>
  `web:${conversationId}:${messageId}`;

/** The conversation of a thread key; throws `ChannelError("bad_request")` for a key that is not the web's. */
export function conversationOf(threadKey: string): string {
  const [platform, id, ...rest] = threadKey.split(":");
  if (platform !== "web" || id === undefined || rest.length > 0 || !isConversationId(id)) {
    throw new ChannelError(
      "bad_request",
      `"${threadKey.slice(0, 80)}" is not a web chat thread key (expected web:<conversation id>)`,
      "web",
    );
  }
  return id;
}

/** The conversation and message of a reference; throws `ChannelError("not_found")` when malformed. */
export function parseMessageRef(ref: string): { conversationId: string; messageId: string } {
  const [platform, conversationId, messageId, ...rest] = ref.split(":");
  if (
    platform !== "web" ||
    conversationId === undefined ||
    messageId === undefined ||
    rest.length > 0 ||
    !isConversationId(conversationId) ||
    !isMessageId(messageId)
  ) {
    throw new ChannelError(
      "not_found",
      `"${ref.slice(0, 80)}" is not a web chat message reference (expected web:<conversation>:<message>)`,
      "web",
    );
  }
  return { conversationId, messageId };
}
