/**
 * discord.js events → the contract's inbound shapes. Decides what is addressed to the bot (a
 * mention, a reply to the bot, a DM, any message in a thread the bot owns or was mentioned in),
 * which conversation it belongs to, and its event id. Bad or unexpected input is logged and dropped.
 */
import {
  type Attachment,
  type ChatInputCommandInteraction,
  type Client,
  type Message,
  type MessageReaction,
  MessageType,
  type PartialMessage,
  type PartialMessageReaction,
  type PartialUser,
  type User,
} from "discord.js";
import type { AttachmentRef, ChatUser, InboundCommand, InboundMessage, InboundReaction } from "../types.js";
import type { Conversations } from "./conversations.js";
import { emojiFromDiscord } from "./emoji.js";
import { encodeMessageRef, encodeThreadKey } from "./ids.js";

const THREAD_TYPES = new Set([10, 11, 12]);

function kindOf(mime: string | null | undefined): AttachmentRef["kind"] {
  if (!mime) return "file";
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("audio/")) return "audio";
  if (mime.startsWith("video/")) return "video";
  return "file";
}

function attachmentRef(a: Attachment): AttachmentRef {
  return {
    id: a.id,
    kind: kindOf(a.contentType),
    name: a.name,
    ...(a.contentType ? { mimeType: a.contentType } : {}),
    sizeBytes: a.size,
    url: a.url,
  };
}

function chatUser(u: User | PartialUser): ChatUser {
  const name = u.partial ? undefined : (u.globalName ?? u.username);
  return { id: u.id, isBot: u.partial ? false : u.bot, ...(name ? { name } : {}) };
}

/** The text a person typed: the bot's mention removed, other user mentions as `@name`. */
function plainText(message: Message, botId: string): string {
  return message.content
    .replace(new RegExp(`<@!?${botId}>`, "g"), "")
    .replace(/<@!?(\d+)>/g, (m, id: string) => {
      const u = message.mentions.users.get(id);
      return u ? `@${u.globalName ?? u.username}` : m;
    })
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/**
 * Normalise a `messageCreate`. Returns undefined for messages not meant for the bot (and for bots,
 * system messages, messages of other types).
 */
export async function toInboundMessage(
  message: Message,
  client: Client,
  conv: Conversations,
): Promise<InboundMessage | undefined> {
  const botId = client.user?.id;
  if (!botId || message.author.bot || message.system) return undefined;
  if (message.type !== MessageType.Default && message.type !== MessageType.Reply) return undefined;
  const text = plainText(message, botId);
  const base = {
    platform: "discord" as const,
    eventId: `discord:message:${message.id}`,
    messageId: encodeMessageRef(message.channelId, message.id),
    channelId: message.channelId,
    user: chatUser(message.author),
    text,
    attachments: [...message.attachments.values()].map(attachmentRef),
    timestamp: message.createdTimestamp,
    ...(message.reference?.messageId
      ? {
          replyTo: encodeMessageRef(
            message.reference.channelId ?? message.channelId,
            message.reference.messageId,
          ),
        }
      : {}),
  };
  if (!message.guildId) {
    return {
      ...base,
      threadKey: encodeThreadKey(undefined, message.channelId, undefined),
      mentioned: true,
      isDirect: true,
    };
  }
  const guild = message.guildId;
  const mentioned = message.mentions.users.has(botId) || message.mentions.repliedUser?.id === botId;
  const channel = message.channel;
  if (channel.isThread()) {
    const parent = channel.parentId;
    if (!parent) return undefined;
    const threadKey = encodeThreadKey(guild, parent, channel.id);
    await conv.markThread(threadKey);
    if (mentioned) await conv.join(threadKey, message.id);
    else if (channel.ownerId !== botId && !(await conv.joinedBefore(threadKey, message.id))) return undefined;
    return { ...base, threadKey, mentioned, isDirect: false };
  }
  if (!mentioned) return undefined;
  let threadKey: string;
  if (message.reference?.messageId) {
    threadKey = await conv.conversationOf(guild, message.channelId, message.reference.messageId);
  } else {
    threadKey = encodeThreadKey(guild, message.channelId, message.id);
    conv.suggestName(threadKey, text);
  }
  await conv.rememberMessage(message.channelId, message.id, threadKey);
  return { ...base, threadKey, mentioned: true, isDirect: false };
}

/**
 * Normalise a reaction. Partial reactions (on messages discord.js never cached) are fetched when
 * possible; the ids Discord sent are enough when that fails.
 */
export async function toInboundReaction(
  reaction: MessageReaction | PartialMessageReaction,
  user: User | PartialUser,
  added: boolean,
  eventId: string,
  timestamp: number,
  client: Client,
  conv: Conversations,
  fetchParent: (channel: string) => Promise<{ type: number; parent?: string | null } | undefined>,
): Promise<InboundReaction | undefined> {
  const botId = client.user?.id;
  if (!botId || user.id === botId || (!user.partial && user.bot)) return undefined;
  if (reaction.partial) {
    try {
      await reaction.fetch();
    } catch {
      // The message may be gone or out of reach; the ids from the event still identify it.
    }
  }
  const message: Message | PartialMessage = reaction.message;
  const channelId = message.channelId;
  const guild = message.guildId ?? undefined;
  let threadKey: string;
  if (!guild) {
    threadKey = encodeThreadKey(undefined, channelId, undefined);
  } else {
    const cached = client.channels.cache.get(channelId);
    const info =
      cached && !cached.partial
        ? { type: cached.type as number, parent: cached.isThread() ? cached.parentId : null }
        : await fetchParent(channelId);
    if (info && THREAD_TYPES.has(info.type) && info.parent) {
      threadKey = encodeThreadKey(guild, info.parent, channelId);
    } else {
      threadKey = await conv.conversationOf(guild, channelId, message.id);
    }
  }
  return {
    platform: "discord",
    threadKey,
    eventId,
    messageId: encodeMessageRef(channelId, message.id),
    channelId,
    emoji: emojiFromDiscord(reaction.emoji),
    user: chatUser(user),
    added,
    timestamp,
  };
}

/** An application command → `InboundCommand` without `respond` (bound by the adapter). */
export function toInboundCommand(i: ChatInputCommandInteraction): Omit<InboundCommand, "respond"> {
  const channel = i.channel;
  let threadKey: string;
  if (!i.guildId) threadKey = encodeThreadKey(undefined, i.channelId, undefined);
  else if (channel?.isThread() && channel.parentId)
    threadKey = encodeThreadKey(i.guildId, channel.parentId, channel.id);
  else threadKey = encodeThreadKey(i.guildId, i.channelId, undefined);
  const args = i.options.data
    .map((o) => (o.value === undefined || o.value === null ? "" : String(o.value)))
    .filter((v) => v !== "")
    .join(" ");
  return {
    platform: "discord",
    threadKey,
    eventId: `discord:interaction:${i.id}`,
    name: i.commandName.toLowerCase(),
    args: args.trim(),
    user: chatUser(i.user),
    channelId: i.channelId,
    isDirect: !i.guildId,
    timestamp: i.createdTimestamp,
  };
}

/** The fields of a raw MESSAGE_REACTION_ADD/REMOVE dispatch the adapter reads. */
export interface RawReaction {
  user_id?: unknown;
  channel_id?: unknown;
  message_id?: unknown;
  guild_id?: unknown;
  emoji?: { id?: string | null; name?: string | null };
}

/**
 * A reaction in a DM whose channel discord.js has not cached. Discord's reaction events carry no
 * channel type, so discord.js cannot build the DM channel and drops them; the raw dispatch has all
 * the contract needs.
 */
export function rawDmReaction(
  d: RawReaction,
  added: boolean,
  eventId: string,
  timestamp: number,
  botId: string | undefined,
): InboundReaction | undefined {
  const user = typeof d.user_id === "string" ? d.user_id : undefined;
  const channel = typeof d.channel_id === "string" ? d.channel_id : undefined;
  const message = typeof d.message_id === "string" ? d.message_id : undefined;
  if (!user || !channel || !message || !d.emoji || user === botId || d.guild_id !== undefined)
    return undefined;
  return {
    platform: "discord",
    threadKey: encodeThreadKey(undefined, channel, undefined),
    eventId,
    messageId: encodeMessageRef(channel, message),
    channelId: channel,
    emoji: emojiFromDiscord(d.emoji),
    user: { id: user, isBot: false },
    added,
    timestamp,
  };
}
