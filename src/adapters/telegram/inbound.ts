/**
 * Telegram updates to the seam's inbound events.
 *
 * Which messages reach the bot: in private chats every message; in groups only messages that
 * mention the bot (`@username` or a text mention), reply to one of its messages, or are commands
 * (Telegram's privacy mode delivers roughly that set; with privacy off, the rest is only remembered
 * for thread context). Threads: the whole private chat is one thread; in groups a top-level message
 * starts a reply chain rooted at itself and replies join their parent's chain; forum topics keep
 * their chains apart. A native command in a group that replies to nothing addresses the group's
 * top level (root 0, where its defaults for new chains live). Input is untrusted: malformed updates throw `MalformedUpdateError`, which the
 * adapter logs before skipping the update; update kinds Switchboard does not use yield no event.
 */

import type { Message, MessageEntity, ReactionType, Update, User } from "grammy/types";
import { SwitchboardError } from "../../agent/errors.js";
import {
  type AttachmentRef,
  type ChatUser,
  capInboundText,
  DEFAULT_MAX_INBOUND_CHARS,
  type InboundCommand,
  type InboundMessage,
  type InboundReaction,
} from "../types.js";
import { fromTelegramReaction } from "./emoji.js";
import { eventIdOf, messageRefOf, threadKeyOf } from "./ids.js";
import type { RecentMessages } from "./recent-messages.js";

export type InboundEvent =
  | { kind: "message"; event: InboundMessage }
  | { kind: "command"; event: InboundCommand }
  | { kind: "reaction"; event: InboundReaction };

/** Thrown (and caught by the adapter, which logs and skips the update) for updates that make no sense. */
class MalformedUpdateError extends SwitchboardError {
  constructor(message: string) {
    super("telegram.malformed_update", message);
  }
}

export interface BotIdentity {
  id: number;
  username: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

function userOf(u: User): ChatUser {
  const name = u.username ?? [u.first_name, u.last_name].filter(Boolean).join(" ");
  return { id: String(u.id), isBot: u.is_bot, ...(name ? { name } : {}) };
}

function isWellFormedMessage(m: unknown): m is Message {
  return (
    isObject(m) &&
    typeof m.message_id === "number" &&
    typeof m.date === "number" &&
    isObject(m.chat) &&
    typeof m.chat.id === "number" &&
    typeof m.chat.type === "string"
  );
}

/** The forum topic of a message (0 outside topics). */
function topicOf(m: Message): number {
  return m.is_topic_message && typeof m.message_thread_id === "number" ? m.message_thread_id : 0;
}

/** The message `m` really replies to: in topics Telegram sets `reply_to_message` to the topic opener. */
function realReplyTo(m: Message): Message | undefined {
  const r = m.reply_to_message;
  if (!isWellFormedMessage(r)) return undefined;
  if (m.is_topic_message && (r.message_id === m.message_thread_id || r.forum_topic_created)) return undefined;
  return r;
}

function attachmentsOf(m: Message): AttachmentRef[] {
  const out: AttachmentRef[] = [];
  const photo = m.photo?.at(-1);
  if (photo)
    out.push({
      id: photo.file_id,
      kind: "image",
      ...(photo.file_size ? { sizeBytes: photo.file_size } : {}),
    });
  const d = m.document;
  if (d) {
    out.push({
      id: d.file_id,
      kind: d.mime_type?.startsWith("image/") ? "image" : "file",
      ...(d.file_name ? { name: d.file_name } : {}),
      ...(d.mime_type ? { mimeType: d.mime_type } : {}),
      ...(d.file_size ? { sizeBytes: d.file_size } : {}),
    });
  }
  for (const [a, kind] of [
    [m.voice, "audio"],
    [m.audio, "audio"],
    [m.video, "video"],
    [m.video_note, "video"],
    [m.sticker, "other"],
  ] as const) {
    if (a) out.push({ id: a.file_id, kind, ...(a.file_size ? { sizeBytes: a.file_size } : {}) });
  }
  return out;
}

/** Remove the bot's `@mention` entities from the text (UTF-16 offsets, as Telegram counts). */
function stripMentions(
  text: string,
  entities: MessageEntity[],
  bot: BotIdentity,
): { text: string; mentioned: boolean } {
  let mentioned = false;
  const cuts: Array<[number, number]> = [];
  for (const e of entities) {
    const slice = text.slice(e.offset, e.offset + e.length);
    if (e.type === "mention" && slice.toLowerCase() === `@${bot.username.toLowerCase()}`) {
      mentioned = true;
      cuts.push([e.offset, e.offset + e.length]);
    } else if (e.type === "text_mention" && e.user?.id === bot.id) {
      mentioned = true;
    }
  }
  let out = text;
  for (const [a, b] of cuts.sort((x, y) => y[0] - x[0])) out = out.slice(0, a) + out.slice(b);
  return { text: out.replace(/[ \t]{2,}/g, " ").trim(), mentioned };
}

/** `/name@bot args` at the start of the text, if addressed to this bot (or to no bot in particular). */
function commandOf(
  text: string,
  entities: MessageEntity[],
  bot: BotIdentity,
): { name: string; args: string } | undefined {
  const first = entities.find((e) => e.type === "bot_command" && e.offset === 0);
  if (!first) return undefined;
  const raw = text.slice(1, first.length);
  const [name = "", target] = raw.split("@");
  if (target && target.toLowerCase() !== bot.username.toLowerCase()) return undefined;
  if (!/^[a-z0-9_]{1,32}$/i.test(name)) return undefined;
  return { name: name.toLowerCase(), args: text.slice(first.length).trim() };
}

/**
 * Normalise one update. Remembers every message in `recent` (for thread context and reply chains)
 * and returns the events to deliver (usually zero or one). Message text longer than
 * `maxInboundChars` (default 20,000) is cut with a visible marker (`capInboundText`).
 */
export async function normalizeUpdate(
  raw: unknown,
  bot: BotIdentity,
  recent: RecentMessages,
  maxInboundChars: number = DEFAULT_MAX_INBOUND_CHARS,
): Promise<InboundEvent[]> {
  if (!isObject(raw) || typeof raw.update_id !== "number")
    throw new MalformedUpdateError("update without update_id");
  const update = raw as unknown as Update;
  if ("message" in update)
    return normalizeMessage(update.update_id, update.message as Message, bot, recent, maxInboundChars);
  if ("message_reaction" in update) {
    return normalizeReaction(
      update.update_id,
      update.message_reaction as NonNullable<Update["message_reaction"]>,
      bot,
      recent,
    );
  }
  return [];
}

async function normalizeMessage(
  updateId: number,
  m: Message,
  bot: BotIdentity,
  recent: RecentMessages,
  maxInboundChars: number,
): Promise<InboundEvent[]> {
  if (!isWellFormedMessage(m) || !m.from || typeof m.from.id !== "number") {
    throw new MalformedUpdateError("message without message_id, date, chat or sender");
  }
  if (m.from.id === bot.id) return [];
  const chatId = m.chat.id;
  const isDirect = m.chat.type === "private";
  const topic = topicOf(m);
  const reply = realReplyTo(m);
  const rawText = typeof m.text === "string" ? m.text : typeof m.caption === "string" ? m.caption : "";
  const entities = (m.entities ?? m.caption_entities ?? []).filter(
    (e) => isObject(e) && typeof e.offset === "number" && typeof e.length === "number",
  );
  const repliedToBot = reply?.from?.id === bot.id;
  let root = 0;
  if (!isDirect) {
    // A parent at the group's top level (root 0: the answer to a group-wide command) starts a chain.
    const parent = reply ? await recent.threadOf(chatId, reply.message_id) : undefined;
    root = parent?.root || reply?.message_id || m.message_id;
  }
  const { text, mentioned: mentionedByName } = stripMentions(rawText, entities, bot);
  const command = commandOf(rawText, entities, bot);
  const mentioned = isDirect || mentionedByName || repliedToBot;
  const user = userOf(m.from);
  const timestamp = m.date * 1000;
  recent.noteInbound(
    { chatId, messageId: m.message_id, topic, root, user, text: rawText, timestamp, fromBot: false },
    mentioned || command !== undefined,
  );
  const threadKey = threadKeyOf({ chatId, topic, root });
  const base = {
    platform: "telegram" as const,
    threadKey,
    eventId: eventIdOf(updateId),
    user,
    channelId: String(chatId),
  };
  if (command) {
    // A command in a group that replies to nothing addresses the group (its defaults for new
    // conversations, root 0); one that replies into a chain addresses that chain.
    const commandKey = !isDirect && !reply ? threadKeyOf({ chatId, topic, root: 0 }) : threadKey;
    return [
      {
        kind: "command",
        event: {
          ...base,
          threadKey: commandKey,
          name: command.name,
          args: command.args,
          messageId: messageRefOf(chatId, m.message_id),
          isDirect,
          timestamp,
        },
      },
    ];
  }
  if (!mentioned) return [];
  const attachments = attachmentsOf(m);
  if (!text && attachments.length === 0) return [];
  return [
    {
      kind: "message",
      event: {
        ...base,
        messageId: messageRefOf(chatId, m.message_id),
        text: capInboundText(text, maxInboundChars),
        attachments,
        mentioned,
        isDirect,
        timestamp,
        ...(reply ? { replyTo: messageRefOf(chatId, reply.message_id) } : {}),
      },
    },
  ];
}

function emojiOf(r: ReactionType): string | undefined {
  if (!isObject(r)) return undefined;
  if (r.type === "emoji" && typeof r.emoji === "string") return fromTelegramReaction(r.emoji);
  if (r.type === "custom_emoji" && typeof r.custom_emoji_id === "string") return `:${r.custom_emoji_id}:`;
  return undefined;
}

async function normalizeReaction(
  updateId: number,
  r: NonNullable<Update["message_reaction"]>,
  bot: BotIdentity,
  recent: RecentMessages,
): Promise<InboundEvent[]> {
  if (
    !isObject(r) ||
    !isObject(r.chat) ||
    typeof r.chat.id !== "number" ||
    typeof r.message_id !== "number"
  ) {
    throw new MalformedUpdateError("message_reaction without chat or message_id");
  }
  if (!r.user || r.user.id === bot.id) return [];
  const chatId = r.chat.id;
  const before = new Set((Array.isArray(r.old_reaction) ? r.old_reaction : []).map(emojiOf).filter(Boolean));
  const after = new Set((Array.isArray(r.new_reaction) ? r.new_reaction : []).map(emojiOf).filter(Boolean));
  const thread = (await recent.threadOf(chatId, r.message_id)) ?? {
    topic: 0,
    root: r.chat.type === "private" ? 0 : r.message_id,
  };
  const base = {
    platform: "telegram" as const,
    threadKey: threadKeyOf({ chatId, ...thread }),
    messageId: messageRefOf(chatId, r.message_id),
    channelId: String(chatId),
    user: userOf(r.user),
    timestamp: (typeof r.date === "number" ? r.date : 0) * 1000,
  };
  const out: InboundEvent[] = [];
  for (const e of after) {
    if (e && !before.has(e))
      out.push({
        kind: "reaction",
        event: { ...base, emoji: e, added: true, eventId: eventIdOf(updateId, `+${e}`) },
      });
  }
  for (const e of before) {
    if (e && !after.has(e))
      out.push({
        kind: "reaction",
        event: { ...base, emoji: e, added: false, eventId: eventIdOf(updateId, `-${e}`) },
      });
  }
  return out;
}
