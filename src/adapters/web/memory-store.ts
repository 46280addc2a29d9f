/**
 * The web chat store in this process's memory. With a `journal` and a `load` function it is also the
 * heart of the file store (`file-store.ts`): the state is held here, every change
 * is written through the journal before the call resolves, and `load` restores it at first use.
 *
 * Changes to one conversation reach the journal in the order they were made (the journal is called
 * synchronously, right after the change), so a replay rebuilds the same state.
 */
import {
  byPosting,
  byRecency,
  copyMessage,
  edited,
  newConversation,
  newMessage,
  reacted,
  type StoredConversation,
  seqOf,
  touched,
  viewOf,
} from "./conversation-state.js";
import { newConversationId } from "./ids.js";
import type { ConversationKind, WebConversation, WebMessage } from "./model.js";
import {
  type ClientRecord,
  DEFAULT_MAX_CONVERSATIONS,
  DEFAULT_MAX_MESSAGES,
  type NewWebMessage,
  type ReactionBy,
  type WebChatStore,
  WebConversationMissingError,
  type WebStoreEvent,
  type WebStoreLimits,
  type WebStoreListener,
} from "./store-types.js";

/** Client ids remembered per conversation (a retried send within that many sends is recognised). */
const CLIENT_IDS_KEPT = 200;

/** One conversation's state, as the journal replays it. */
export interface ConversationState {
  conversation: StoredConversation;
  /** Oldest first. */
  messages: WebMessage[];
  clients: Array<[string, ClientRecord]>;
  /** The highest message number ever used in the conversation (deleted messages included). */
  seq: number;
}

/**
 * Where the changes go. Each call is made right after the change in memory, in order; the store's
 * operation resolves when the returned promise does.
 */
export interface WebStoreJournal {
  conversation(c: StoredConversation): Promise<void>;
  message(m: WebMessage): Promise<void>;
  messageRemoved(conversationId: string, messageId: string): Promise<void>;
  client(conversationId: string, clientId: string, record: ClientRecord): Promise<void>;
  conversationRemoved(conversationId: string): Promise<void>;
  close(): Promise<void>;
}

export interface MemoryWebChatStoreOptions extends WebStoreLimits {
  journal?: WebStoreJournal;
  /** Restores the state, called once before the first operation. */
  load?: () => Promise<ConversationState[]>;
}

interface Held {
  conversation: StoredConversation;
  messages: WebMessage[];
  seq: number;
  clients: Map<string, ClientRecord>;
  typingUntil: number;
}

export class MemoryWebChatStore implements WebChatStore {
  private readonly conversations = new Map<string, Held>();
  private readonly listeners = new Set<WebStoreListener>();
  private readonly maxConversations: number;
  private readonly maxMessages: number;
  private readonly journal: WebStoreJournal | undefined;
  private loading: Promise<void> | undefined;
  private readonly loader: (() => Promise<ConversationState[]>) | undefined;
  readonly now: () => number;

  constructor(options: MemoryWebChatStoreOptions = {}) {
    this.maxConversations = Math.max(1, options.maxConversations ?? DEFAULT_MAX_CONVERSATIONS);
    this.maxMessages = Math.max(1, options.maxMessagesPerConversation ?? DEFAULT_MAX_MESSAGES);
    this.now = options.now ?? Date.now;
    this.journal = options.journal;
    this.loader = options.load;
  }

  async subscribe(listener: WebStoreListener): Promise<() => void> {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async list(): Promise<WebConversation[]> {
    await this.ready();
    return this.listNow();
  }

  /** `list()` without waiting (tests reading a store they filled). */
  listNow(): WebConversation[] {
    return [...this.conversations.values()].map((h) => viewOf(h.conversation)).sort(byRecency);
  }

  async get(conversationId: string): Promise<WebConversation | undefined> {
    await this.ready();
    const h = this.conversations.get(conversationId);
    return h ? viewOf(h.conversation) : undefined;
  }

  async create(
    opts: { id?: string; title?: string; kind?: ConversationKind } = {},
  ): Promise<WebConversation> {
    await this.ready();
    const id = opts.id ?? newConversationId();
    const existing = this.conversations.get(id);
    if (existing) return viewOf(existing.conversation);
    const conversation = newConversation(id, opts, this.now());
    this.conversations.set(id, { conversation, messages: [], seq: 0, clients: new Map(), typingUntil: 0 });
    const written = this.journal?.conversation(conversation);
    const evicted = this.evict(id);
    await written;
    this.emit({ type: "conversation", conversation: viewOf(conversation) });
    for (const gone of evicted) {
      await this.journal?.conversationRemoved(gone);
      this.emit({ type: "conversation_removed", conversationId: gone });
    }
    return viewOf(conversation);
  }

  async messages(conversationId: string): Promise<WebMessage[] | undefined> {
    await this.ready();
    return this.messagesNow(conversationId);
  }

  /** `messages()` without waiting (tests reading a store they filled). */
  messagesNow(conversationId: string): WebMessage[] | undefined {
    return this.conversations.get(conversationId)?.messages.map(copyMessage);
  }

  async message(conversationId: string, messageId: string): Promise<WebMessage | undefined> {
    await this.ready();
    const m = this.find(conversationId, messageId);
    return m ? copyMessage(m) : undefined;
  }

  async add(conversationId: string, input: NewWebMessage): Promise<WebMessage> {
    await this.ready();
    const h = this.conversations.get(conversationId);
    if (!h) throw new WebConversationMissingError(conversationId);
    const now = this.now();
    const message = newMessage(conversationId, ++h.seq, input, now);
    h.messages.push(message);
    const dropped =
      h.messages.length > this.maxMessages ? h.messages.splice(0, h.messages.length - this.maxMessages) : [];
    h.conversation = touched(h.conversation, input, now);
    const writes = [
      this.journal?.message(message),
      ...dropped.map((d) => this.journal?.messageRemoved(conversationId, d.id)),
      this.journal?.conversation(h.conversation),
    ];
    await Promise.all(writes);
    this.emit({ type: "message", change: "posted", message: copyMessage(message) });
    for (const d of dropped) this.emit({ type: "message_deleted", conversationId, messageId: d.id });
    this.emit({ type: "conversation", conversation: viewOf(h.conversation) });
    return copyMessage(message);
  }

  async edit(
    conversationId: string,
    messageId: string,
    text: string,
    format: WebMessage["format"],
  ): Promise<WebMessage | undefined> {
    await this.ready();
    const m = this.find(conversationId, messageId);
    if (!m) return undefined;
    const next = edited(m, text, format, this.now());
    if (!next) return copyMessage(m);
    this.replace(next);
    await this.journal?.message(next);
    this.emit({ type: "message", change: "edited", message: copyMessage(next) });
    return copyMessage(next);
  }

  async remove(conversationId: string, messageId: string): Promise<boolean> {
    await this.ready();
    const h = this.conversations.get(conversationId);
    const at = h ? h.messages.findIndex((m) => m.id === messageId) : -1;
    if (!h || at < 0) return false;
    h.messages.splice(at, 1);
    await this.journal?.messageRemoved(conversationId, messageId);
    this.emit({ type: "message_deleted", conversationId, messageId });
    return true;
  }

  async react(
    conversationId: string,
    messageId: string,
    emoji: string,
    by: ReactionBy,
    added: boolean,
  ): Promise<{ message: WebMessage; changed: boolean } | undefined> {
    await this.ready();
    const m = this.find(conversationId, messageId);
    if (!m) return undefined;
    const next = reacted(m, emoji, by, added);
    if (!next) return { message: copyMessage(m), changed: false };
    this.replace(next);
    await this.journal?.message(next);
    this.emit({ type: "message", change: "reactions", message: copyMessage(next) });
    return { message: copyMessage(next), changed: true };
  }

  async typing(conversationId: string, durationMs: number): Promise<void> {
    await this.ready();
    const h = this.conversations.get(conversationId);
    if (!h) return;
    h.typingUntil = this.now() + durationMs;
    this.emit({ type: "typing", conversationId, durationMs });
  }

  async typingNow(): Promise<Array<{ conversationId: string; durationMs: number }>> {
    await this.ready();
    const now = this.now();
    return [...this.conversations.values()]
      .filter((h) => h.typingUntil > now)
      .map((h) => ({ conversationId: h.conversation.id, durationMs: h.typingUntil - now }));
  }

  async clientRecord(conversationId: string, clientId: string): Promise<ClientRecord | undefined> {
    await this.ready();
    const r = this.conversations.get(conversationId)?.clients.get(clientId);
    return r ? { ...r } : undefined;
  }

  async rememberClient(conversationId: string, clientId: string, record: ClientRecord): Promise<void> {
    await this.ready();
    const h = this.conversations.get(conversationId);
    if (!h) return;
    h.clients.delete(clientId);
    h.clients.set(clientId, { ...record });
    while (h.clients.size > CLIENT_IDS_KEPT) {
      const oldest = h.clients.keys().next().value;
      if (oldest === undefined) break;
      h.clients.delete(oldest);
    }
    await this.journal?.client(conversationId, clientId, record);
  }

  /** One conversation's whole state, as a journal rewrites it. */
  stateOf(conversationId: string): ConversationState | undefined {
    const h = this.conversations.get(conversationId);
    if (!h) return undefined;
    return {
      conversation: { ...h.conversation },
      messages: h.messages.map(copyMessage),
      clients: [...h.clients].map(([id, r]) => [id, { ...r }]),
      seq: h.seq,
    };
  }

  async close(): Promise<void> {
    await this.loading?.catch(() => {});
    await this.journal?.close();
  }

  private ready(): Promise<void> {
    if (!this.loader) return Promise.resolve();
    this.loading ??= this.loader().then((states) => {
      for (const s of states) {
        const messages = [...s.messages].sort(byPosting).slice(-this.maxMessages);
        this.conversations.set(s.conversation.id, {
          conversation: s.conversation,
          messages,
          seq: Math.max(s.seq, ...s.messages.map((m) => seqOf(m.id))),
          clients: new Map(s.clients.slice(-CLIENT_IDS_KEPT)),
          typingUntil: 0,
        });
      }
    });
    return this.loading;
  }

  private find(conversationId: string, messageId: string): WebMessage | undefined {
    return this.conversations.get(conversationId)?.messages.find((m) => m.id === messageId);
  }

  private replace(m: WebMessage): void {
    const h = this.conversations.get(m.conversationId);
    if (!h) return;
    const at = h.messages.findIndex((x) => x.id === m.id);
    if (at >= 0) h.messages[at] = m;
  }

  /** Removes the least recently updated conversations beyond the limit, never `keep`; returns their ids. */
  private evict(keep: string): string[] {
    const gone: string[] = [];
    while (this.conversations.size > this.maxConversations) {
      let oldest: Held | undefined;
      for (const h of this.conversations.values())
        if (h.conversation.id !== keep && (!oldest || byRecency(h.conversation, oldest.conversation) > 0))
          oldest = h;
      if (!oldest) break;
      this.conversations.delete(oldest.conversation.id);
      gone.push(oldest.conversation.id);
    }
    return gone;
  }

  private emit(event: WebStoreEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure is its own; the store and the other listeners go on.
      }
    }
  }
}
