/**
 * The web chat's memory: conversations and their messages, bounded (oldest conversations and
 * messages are forgotten first), and the typing state. Every change is published as a
 * `WebChatEvent` to the listeners (the event streams of connected pages, tests).
 *
 * The store lives in one process: the web chat needs the gateway and the worker in the same process
 * (`--role all`, the default).
 */
import { newConversationId, threadKeyOf } from "./ids.js";
import type {
  ConversationKind,
  WebAuthor,
  WebChatEvent,
  WebConversation,
  WebMessage,
  WebReaction,
} from "./model.js";

export interface ConversationStoreOptions {
  /** Most conversations kept (default 200); the least recently updated one goes first. */
  maxConversations?: number;
  /** Most messages kept per conversation (default 500); the oldest go first. */
  maxMessagesPerConversation?: number;
  now?: () => number;
}

interface Conversation {
  view: WebConversation;
  /** The title was given explicitly, so the first message does not replace it. */
  titled: boolean;
  messages: WebMessage[];
  typingUntil: number;
}

export type StoreListener = (event: WebChatEvent) => void;

const DEFAULT_TITLE = "New conversation";
const TITLE_CHARS = 60;

const copyMessage = (m: WebMessage): WebMessage => ({
  ...m,
  from: { ...m.from },
  reactions: m.reactions.map((r) => ({ ...r, users: [...r.users] })),
});

export class ConversationStore {
  private readonly conversations = new Map<string, Conversation>();
  /** message id → conversation id */
  private readonly index = new Map<string, string>();
  private readonly listeners = new Set<StoreListener>();
  private seq = 0;
  private readonly maxConversations: number;
  private readonly maxMessages: number;
  readonly now: () => number;

  constructor(options: ConversationStoreOptions = {}) {
    this.maxConversations = Math.max(1, options.maxConversations ?? 200);
    this.maxMessages = Math.max(1, options.maxMessagesPerConversation ?? 500);
    this.now = options.now ?? Date.now;
  }

  /** Calls `listener` with every change until the returned function is called. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Conversations, most recently updated first. */
  list(): WebConversation[] {
    return [...this.conversations.values()]
      .map((c) => ({ ...c.view }))
      .sort((a, b) => b.updatedAt - a.updatedAt || b.createdAt - a.createdAt);
  }

  get(conversationId: string): WebConversation | undefined {
    const c = this.conversations.get(conversationId);
    return c ? { ...c.view } : undefined;
  }

  /** Messages of a conversation, oldest first (undefined when there is no such conversation). */
  messages(conversationId: string): WebMessage[] | undefined {
    return this.conversations.get(conversationId)?.messages.map(copyMessage);
  }

  message(messageId: string): WebMessage | undefined {
    const m = this.find(messageId);
    return m ? copyMessage(m) : undefined;
  }

  /** Starts a conversation (with `id` when given: a worker posting into a conversation this process forgot). */
  create(opts: { title?: string; kind?: ConversationKind; id?: string } = {}): WebConversation {
    const id = opts.id ?? newConversationId();
    const existing = this.conversations.get(id);
    if (existing) return { ...existing.view };
    const now = this.now();
    const title = opts.title?.trim().slice(0, TITLE_CHARS);
    const conversation: Conversation = {
      view: {
        id,
        threadKey: threadKeyOf(id),
        title: title || DEFAULT_TITLE,
        kind: opts.kind ?? "direct",
        createdAt: now,
        updatedAt: now,
      },
      titled: Boolean(title),
      messages: [],
      typingUntil: 0,
    };
    this.conversations.set(id, conversation);
    this.evictConversations();
    this.emit({ type: "conversation", conversation: { ...conversation.view } });
    return { ...conversation.view };
  }

  /** Appends a message; the conversation must exist. */
  add(conversationId: string, from: WebAuthor, text: string, format: WebMessage["format"]): WebMessage {
    const c = this.require(conversationId);
    const now = this.now();
    const id = `m${++this.seq}`;
    const message: WebMessage = {
      id,
      ref: `web:${conversationId}:${id}`,
      conversationId,
      from: { ...from },
      text,
      format,
      createdAt: now,
      version: 1,
      reactions: [],
    };
    c.messages.push(message);
    this.index.set(id, conversationId);
    while (c.messages.length > this.maxMessages) {
      const old = c.messages.shift();
      if (old) this.index.delete(old.id);
    }
    const firstUserText = !from.isBot && !c.titled && !c.messages.some((m) => !m.from.isBot && m !== message);
    this.touch(c, now, firstUserText ? text : undefined);
    this.emit({ type: "message", change: "posted", message: copyMessage(message) });
    return copyMessage(message);
  }

  /** Replaces a message's text. Returns false when the text and format were already that (nothing changes). */
  edit(messageId: string, text: string, format: WebMessage["format"]): boolean | undefined {
    const m = this.find(messageId);
    if (!m) return undefined;
    if (m.text === text && m.format === format) return false;
    m.text = text;
    m.format = format;
    m.editedAt = this.now();
    m.version++;
    this.emit({ type: "message", change: "edited", message: copyMessage(m) });
    return true;
  }

  /** Removes a message. False when it does not exist. */
  remove(messageId: string): boolean {
    const conversationId = this.index.get(messageId);
    const c = conversationId ? this.conversations.get(conversationId) : undefined;
    if (!c || !conversationId) return false;
    const at = c.messages.findIndex((m) => m.id === messageId);
    if (at < 0) return false;
    c.messages.splice(at, 1);
    this.index.delete(messageId);
    this.emit({ type: "message_deleted", conversationId, messageId });
    return true;
  }

  /**
   * Adds or removes one reaction, by the bot (`who: "bot"`) or a user id. Returns whether anything
   * changed (undefined: no such message), so a repeated request delivers no second event.
   */
  react(
    messageId: string,
    emoji: string,
    who: "bot" | { userId: string },
    added: boolean,
  ): boolean | undefined {
    const m = this.find(messageId);
    if (!m) return undefined;
    let r: WebReaction | undefined = m.reactions.find((x) => x.emoji === emoji);
    const has = r ? (who === "bot" ? r.bot : r.users.includes(who.userId)) : false;
    if (has === added) return false;
    if (!r) {
      r = { emoji, bot: false, users: [] };
      m.reactions.push(r);
    }
    if (who === "bot") r.bot = added;
    else if (added) r.users.push(who.userId);
    else r.users = r.users.filter((u) => u !== who.userId);
    if (!r.bot && r.users.length === 0) m.reactions = m.reactions.filter((x) => x !== r);
    m.version++;
    this.emit({ type: "message", change: "reactions", message: copyMessage(m) });
    return true;
  }

  /** The bot is typing in the conversation for `durationMs`. */
  typing(conversationId: string, durationMs: number): void {
    const c = this.require(conversationId);
    c.typingUntil = this.now() + durationMs;
    this.emit({ type: "typing", conversationId, durationMs });
  }

  /** Conversations where the bot is typing now, with the time left. */
  typingNow(): Array<{ conversationId: string; durationMs: number }> {
    const now = this.now();
    return [...this.conversations.values()]
      .filter((c) => c.typingUntil > now)
      .map((c) => ({ conversationId: c.view.id, durationMs: c.typingUntil - now }));
  }

  private find(messageId: string): WebMessage | undefined {
    const conversationId = this.index.get(messageId);
    if (!conversationId) return undefined;
    return this.conversations.get(conversationId)?.messages.find((m) => m.id === messageId);
  }

  private require(conversationId: string): Conversation {
    const c = this.conversations.get(conversationId);
    if (!c) throw new Error(`web chat: no conversation ${conversationId}; create it first`);
    return c;
  }

  private touch(c: Conversation, now: number, firstUserText?: string): void {
    c.view.updatedAt = now;
    if (firstUserText !== undefined) {
      const line = firstUserText.replace(/\s+/g, " ").trim();
      if (line) c.view.title = line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
    }
    this.emit({ type: "conversation", conversation: { ...c.view } });
  }

  private evictConversations(): void {
    while (this.conversations.size > this.maxConversations) {
      let oldest: Conversation | undefined;
      for (const c of this.conversations.values())
        if (!oldest || c.view.updatedAt < oldest.view.updatedAt) oldest = c;
      if (!oldest) return;
      this.conversations.delete(oldest.view.id);
      for (const m of oldest.messages) this.index.delete(m.id);
      this.emit({ type: "conversation_removed", conversationId: oldest.view.id });
    }
  }

  private emit(event: WebChatEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure is its own; the store and the other listeners go on.
      }
    }
  }
}
