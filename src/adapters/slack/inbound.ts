/**
 * Slack events (plain JSON as Slack sends them) → the contract's inbound shapes. Pure functions:
 * they read untrusted input defensively and return undefined for anything malformed or not meant
 * for the bot; the adapter decides delivery (dedupe, thread membership) and logs drops.
 */
import type { AttachmentRef, ChatUser, InboundCommand, InboundMessage } from "../types.js";
import { emojiFromSlackName } from "./emoji.js";
import { encodeMessageRef, encodeThreadKey, isDmChannel, tsToMs } from "./ids.js";

/** The fields of a Slack message / app_mention event the adapter reads. */
export interface SlackMessageEvent {
  type: "message" | "app_mention";
  subtype?: string;
  channel: string;
  channelType?: string;
  user?: string;
  botId?: string;
  text: string;
  ts: string;
  threadTs?: string;
  files: unknown[];
}

export interface SlackReactionEvent {
  added: boolean;
  user: string;
  name: string;
  channel: string;
  ts: string;
}

/** Message subtypes that are people writing; the rest (joins, edits, bot posts, …) are ignored. */
const USER_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Read a `message`/`app_mention` event; undefined when a required field is missing. */
export function readMessageEvent(raw: unknown): SlackMessageEvent | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const e = raw as Record<string, unknown>;
  const type = e.type === "message" || e.type === "app_mention" ? e.type : undefined;
  const channel = str(e.channel);
  const ts = str(e.ts);
  if (!type || !channel || !ts || !/^\d+\.\d+$/.test(ts)) return undefined;
  const threadTs = str(e.thread_ts);
  const user = str(e.user);
  const botId = str(e.bot_id);
  const subtype = str(e.subtype);
  const channelType = str(e.channel_type);
  return {
    type,
    channel,
    ts,
    text: typeof e.text === "string" ? e.text : "",
    files: Array.isArray(e.files) ? e.files : [],
    ...(subtype ? { subtype } : {}),
    ...(channelType ? { channelType } : {}),
    ...(user ? { user } : {}),
    ...(botId ? { botId } : {}),
    ...(threadTs && /^\d+\.\d+$/.test(threadTs) ? { threadTs } : {}),
  };
}

/** True for events written by a person (not a bot, not a system message). */
export function isFromPerson(e: SlackMessageEvent, botUserId: string): boolean {
  return !e.botId && e.user !== undefined && e.user !== botUserId && USER_SUBTYPES.has(e.subtype);
}

/** True when the text mentions the bot user (`<@U123>` or `<@U123|name>`). */
export function mentionsBot(text: string, botUserId: string): boolean {
  return text.includes(`<@${botUserId}>`) || text.includes(`<@${botUserId}|`);
}

/**
 * Slack's wire text → what a person typed: the bot's mention removed, user/channel/link tokens made
 * readable (links become Markdown), and `&amp; &lt; &gt;` unescaped.
 */
export function slackTextToPlain(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, "g"), "")
    .replace(/<@([A-Z0-9]+)\|([^>]+)>/g, "@$2")
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, (_m, id: string, name: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(\|[^>]*)?>/g, "@$1")
    .replace(/<((?:https?|mailto):[^>|]+)\|([^>]+)>/g, "[$2]($1)")
    .replace(/<((?:https?|mailto):[^>|]+)>/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

function kindOf(mime: string | undefined): AttachmentRef["kind"] {
  if (!mime) return "file";
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("audio/")) return "audio";
  if (mime.startsWith("video/")) return "video";
  return "file";
}

/** Slack `files` → attachment references (`url_private` needs the bot token to download). */
function readFiles(files: unknown[]): AttachmentRef[] {
  const out: AttachmentRef[] = [];
  for (const f of files) {
    if (!f || typeof f !== "object") continue;
    const r = f as Record<string, unknown>;
    const id = str(r.id);
    if (!id) continue;
    const mime = str(r.mimetype);
    const name = str(r.name);
    const url = str(r.url_private);
    out.push({
      id,
      kind: kindOf(mime),
      ...(name ? { name } : {}),
      ...(mime ? { mimeType: mime } : {}),
      ...(typeof r.size === "number" ? { sizeBytes: r.size } : {}),
      ...(url ? { url } : {}),
    });
  }
  return out;
}

/**
 * The thread a message belongs to. Channel messages always live in a thread: a top-level message
 * starts one rooted at its own `ts`. A DM's top level is one running conversation (`threadTs`
 * undefined), and a thread inside a DM is its own conversation.
 */
export function threadOf(e: SlackMessageEvent): string | undefined {
  if (e.threadTs) return e.threadTs;
  return isDmChannel(e.channel) || e.channelType === "im" ? undefined : e.ts;
}

export function toInboundMessage(
  e: SlackMessageEvent,
  ctx: { team: string; eventId: string; botUserId: string; mentioned: boolean; user: ChatUser },
): InboundMessage {
  const isDirect = e.channelType === "im" || isDmChannel(e.channel);
  const thread = threadOf(e);
  const replyTo =
    e.threadTs && e.threadTs !== e.ts ? encodeMessageRef(ctx.team, e.channel, e.threadTs) : undefined;
  return {
    platform: "slack",
    threadKey: encodeThreadKey(ctx.team, e.channel, thread),
    eventId: ctx.eventId,
    messageId: encodeMessageRef(ctx.team, e.channel, e.ts),
    channelId: e.channel,
    user: ctx.user,
    text: slackTextToPlain(e.text, ctx.botUserId),
    attachments: readFiles(e.files),
    mentioned: ctx.mentioned || isDirect,
    isDirect,
    ...(replyTo ? { replyTo } : {}),
    timestamp: tsToMs(e.ts),
  };
}

/** Read a `reaction_added`/`reaction_removed` event on a message; undefined otherwise. */
export function readReactionEvent(raw: unknown): SlackReactionEvent | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const e = raw as Record<string, unknown>;
  const added = e.type === "reaction_added" ? true : e.type === "reaction_removed" ? false : undefined;
  const item = e.item && typeof e.item === "object" ? (e.item as Record<string, unknown>) : undefined;
  const user = str(e.user);
  const name = str(e.reaction);
  const channel = str(item?.channel);
  const ts = str(item?.ts);
  if (added === undefined || item?.type !== "message" || !user || !name || !channel || !ts) return undefined;
  return { added, user, name, channel, ts };
}

export function reactionEmoji(name: string): string {
  return emojiFromSlackName(name);
}

/** The fields of a slash command payload the adapter reads. */
export interface SlackCommandPayload {
  command: string;
  text: string;
  team: string;
  channel: string;
  user: string;
  userName?: string;
  triggerId: string;
  channelName?: string;
}

export function readCommand(raw: unknown): SlackCommandPayload | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const c = raw as Record<string, unknown>;
  const command = str(c.command);
  const team = str(c.team_id);
  const channel = str(c.channel_id);
  const user = str(c.user_id);
  const triggerId = str(c.trigger_id);
  if (!command || !team || !channel || !user || !triggerId) return undefined;
  const userName = str(c.user_name);
  const channelName = str(c.channel_name);
  return {
    command,
    text: typeof c.text === "string" ? c.text : "",
    team,
    channel,
    user,
    triggerId,
    ...(userName ? { userName } : {}),
    ...(channelName ? { channelName } : {}),
  };
}

/** A slash command → `InboundCommand` (without `respond`, which the adapter binds). */
export function toInboundCommand(c: SlackCommandPayload, timestamp: number): Omit<InboundCommand, "respond"> {
  const isDirect = c.channelName === "directmessage" || isDmChannel(c.channel);
  return {
    platform: "slack",
    // Slash commands carry no thread: they address the channel's (or DM's) top level.
    threadKey: encodeThreadKey(c.team, c.channel, undefined),
    eventId: `slack:command:${c.triggerId}`,
    name: c.command.replace(/^\//, "").toLowerCase(),
    args: c.text.trim(),
    user: { id: c.user, isBot: false, ...(c.userName ? { name: c.userName } : {}) },
    channelId: c.channel,
    isDirect,
    timestamp,
  };
}
