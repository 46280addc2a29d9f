/**
 * What the page's user did, as the platform-neutral events every channel delivers. A line typed
 * into the web chat is a command (`/model gpt-5`), delivered as an `InboundCommand` like other
 * platforms' native commands, or a message for the bot. In a group conversation a message reaches
 * the bot only when it mentions `@<bot name>`; the mention is removed from the delivered text. A
 * reaction on a message is an `InboundReaction`.
 */
import type { InboundCommand, InboundMessage, InboundReaction } from "../types.js";
import { threadKeyOf } from "./ids.js";
import type { ConversationKind, WebAuthor, WebConversation, WebMessage } from "./model.js";

export type TypedLine =
  | { kind: "command"; name: string; args: string }
  | { kind: "message"; text: string; mentioned: boolean };

/** `/name args`: the same names Telegram accepts; `/etc/hosts …` is not a command. */
const COMMAND = /^\/([A-Za-z0-9_]{1,32})(?:\s+([\s\S]*))?$/;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Interprets `text` typed by the user into a conversation of `kind`. */
export function interpretLine(text: string, kind: ConversationKind, botName: string): TypedLine {
  const trimmed = text.trim();
  const command = COMMAND.exec(trimmed);
  if (command)
    return { kind: "command", name: (command[1] ?? "").toLowerCase(), args: (command[2] ?? "").trim() };
  const pattern = `(^|[^\\w@])@${escapeRegExp(botName)}(?![\\w-])`;
  const mentioned = new RegExp(pattern, "i").test(trimmed);
  const stripped = mentioned
    ? trimmed
        .replace(new RegExp(pattern, "gi"), "$1")
        .replace(/[ \t]{2,}/g, " ")
        .replace(/^[\s,:]+/, "")
        .trim()
    : trimmed;
  if (kind === "direct") return { kind: "message", text: stripped || trimmed, mentioned: true };
  return { kind: "message", text: stripped, mentioned };
}

/**
 * The event a stored message of the page's user delivers: a command, a message for the bot, or
 * nothing (a group message that does not mention the bot). Event ids name the stored message, so a
 * retried delivery repeats them.
 */
export function inboundOfText(
  conversation: WebConversation,
  message: WebMessage,
  user: WebAuthor,
  botName: string,
): { command: InboundCommand } | { message: InboundMessage } | undefined {
  const line = interpretLine(message.text, conversation.kind, botName);
  const base = {
    platform: "web" as const,
    threadKey: conversation.threadKey,
    user: { ...user },
    channelId: conversation.id,
    isDirect: conversation.kind === "direct",
    timestamp: message.createdAt,
  };
  if (line.kind === "command") {
    return {
      command: {
        ...base,
        eventId: `web:command:${conversation.id}:${message.id}`,
        name: line.name,
        args: line.args,
        messageId: message.ref,
      },
    };
  }
  const files = message.files ?? [];
  if (!line.mentioned || (!line.text && files.length === 0)) return undefined;
  return {
    message: {
      ...base,
      eventId: `web:message:${conversation.id}:${message.id}`,
      messageId: message.ref,
      text: line.text,
      attachments: files.map((f) => ({
        id: `${conversation.id}/${f.id}`,
        kind: f.type.startsWith("image/") ? ("image" as const) : ("file" as const),
        name: f.name,
        mimeType: f.type,
        sizeBytes: f.size,
      })),
      mentioned: true,
    },
  };
}

/** The event of a reaction the page's user added or removed; `seq` and `now` make its id unique. */
export function inboundOfReaction(o: {
  conversationId: string;
  message: WebMessage;
  emoji: string;
  user: WebAuthor;
  added: boolean;
  seq: number;
  now: number;
}): InboundReaction {
  return {
    platform: "web",
    threadKey: threadKeyOf(o.conversationId),
    eventId: `web:reaction:${o.conversationId}:${o.message.id}:${o.seq}:${o.now}`,
    messageId: o.message.ref,
    channelId: o.conversationId,
    emoji: o.emoji,
    user: { ...o.user },
    added: o.added,
    timestamp: o.now,
  };
}
