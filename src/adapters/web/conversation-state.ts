/**
 * The rules of the web chat's state as pure functions, so every store applies them identically:
 * how a message is made, edited and reacted to, how a conversation is named, and how messages and
 * ids order. Each returns a new object (or undefined when nothing changes); nothing here does I/O.
 */
import { messageRefOf, threadKeyOf } from "./ids.js";
import { titleText } from "./input.js";
import type { ConversationKind, WebConversation, WebMessage, WebReaction } from "./model.js";
import type { NewWebMessage, ReactionBy } from "./store-types.js";

const DEFAULT_TITLE = "New conversation";
const TITLE_CHARS = 60;

/** A conversation as stored: what the page sees plus whether its title is settled. */
export interface StoredConversation extends WebConversation {
  /** The title was given, or taken from the first message; later messages do not change it. */
  titled: boolean;
}

export function newConversation(
  id: string,
  opts: { title?: string; kind?: ConversationKind },
  now: number,
): StoredConversation {
  const title = opts.title === undefined ? undefined : titleText(opts.title)?.slice(0, TITLE_CHARS);
  return {
    id,
    threadKey: threadKeyOf(id),
    title: title || DEFAULT_TITLE,
    kind: opts.kind ?? "direct",
    createdAt: now,
    updatedAt: now,
    titled: Boolean(title),
  };
}

/** The page's view of a stored conversation. */
export function viewOf(c: StoredConversation): WebConversation {
  const { titled: _titled, ...view } = c;
  return view;
}

/**
 * A conversation title from the first line a person wrote: visible characters only, no
 * bidirectional overrides (`titleText`); undefined for blank text.
 */
export function titleFrom(text: string): string | undefined {
  const line = titleText(text);
  if (!line) return undefined;
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}

/** The conversation after a message was added at `now` (named after it when it is the first by a person). */
export function touched(c: StoredConversation, m: NewWebMessage, now: number): StoredConversation {
  const next = { ...c, updatedAt: Math.max(c.updatedAt, now) };
  if (!c.titled && !m.from.isBot) {
    const title = titleFrom(m.text);
    if (title) return { ...next, title, titled: true };
  }
  return next;
}

/** Message number `seq` of a conversation. */
function messageIdOf(seq: number): string {
  return `m${seq}`;
}

/** The number in a message id (`m12` → 12). */
export function seqOf(messageId: string): number {
  return Number(messageId.slice(1));
}

export function newMessage(conversationId: string, seq: number, m: NewWebMessage, now: number): WebMessage {
  const id = messageIdOf(seq);
  return {
    id,
    ref: messageRefOf(conversationId, id),
    conversationId,
    from: { id: m.from.id, name: m.from.name, isBot: m.from.isBot },
    text: m.text,
    format: m.format,
    createdAt: now,
    version: 1,
    reactions: [],
    ...(m.replyTo !== undefined ? { replyTo: m.replyTo } : {}),
    ...(m.files && m.files.length > 0 ? { files: m.files.map((f) => ({ ...f })) } : {}),
  };
}

/** The message with new text, or undefined when text and format are already that. */
export function edited(
  m: WebMessage,
  text: string,
  format: WebMessage["format"],
  now: number,
): WebMessage | undefined {
  if (m.text === text && m.format === format) return undefined;
  return { ...m, text, format, editedAt: now, version: m.version + 1 };
}

/** The message with one reaction added or removed, or undefined when it already was so. */
export function reacted(
  m: WebMessage,
  emoji: string,
  by: ReactionBy,
  added: boolean,
): WebMessage | undefined {
  const current = m.reactions.find((r) => r.emoji === emoji);
  const has = current ? (by === "bot" ? current.bot : current.users.includes(by.userId)) : false;
  if (has === added) return undefined;
  const base: WebReaction = current
    ? { emoji, bot: current.bot, users: [...current.users] }
    : { emoji, bot: false, users: [] };
  if (by === "bot") base.bot = added;
  else if (added) base.users.push(by.userId);
  else base.users = base.users.filter((u) => u !== by.userId);
  const keep = base.bot || base.users.length > 0;
  const reactions = current
    ? m.reactions.flatMap((r) => (r === current ? (keep ? [base] : []) : [r]))
    : [...m.reactions, base];
  return { ...m, reactions, version: m.version + 1 };
}

/** Oldest first: by id number (ids grow in posting order). */
export function byPosting(a: WebMessage, b: WebMessage): number {
  return seqOf(a.id) - seqOf(b.id);
}

/** Most recently updated first. */
export function byRecency(a: WebConversation, b: WebConversation): number {
  return b.updatedAt - a.updatedAt || b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1);
}

/** A deep copy, so callers never share a stored object. */
export function copyMessage(m: WebMessage): WebMessage {
  return {
    ...m,
    from: { ...m.from },
    reactions: m.reactions.map((r) => ({ ...r, users: [...r.users] })),
    ...(m.files ? { files: m.files.map((f) => ({ ...f })) } : {}),
  };
}
