/**
 * What the adapter remembers of chats, because the Bot API cannot fetch history or look a message
 * up: a bounded buffer of recent messages per chat (every message the bot saw or wrote in this
 * process) and, through an optional shared `KeyValueStore`, which reply chain a bot or addressed
 * message belongs to, so a reply to a message written by another process still finds its thread.
 */

import { DEFAULT_KEY_PREFIX, telegramMessageKey } from "../../redis-keys.js";
import type { ChatUser, KeyValueStore } from "../types.js";

export interface SeenMessage {
  chatId: number;
  messageId: number;
  topic: number;
  /** Reply-chain root (0 for DMs). */
  root: number;
  user: ChatUser;
  text: string;
  timestamp: number;
  fromBot: boolean;
}

export interface RecentMessagesOptions {
  /** Messages kept per chat (default 200). */
  perChat?: number;
  /** Chats kept; the least recently active is forgotten first (default 1000). */
  maxChats?: number;
  store?: KeyValueStore;
  /** Key prefix in the store (default `DEFAULT_KEY_PREFIX`). */
  prefix?: string;
  /** How long the store keeps a message's thread (default 14 days). */
  ttlMs?: number;
  /** Where a failed shared write of `noteInbound` is reported (it is not waited for). */
  onShareError?: (error: unknown) => void;
}

export class RecentMessages {
  private readonly chats = new Map<number, SeenMessage[]>();
  private readonly perChat: number;
  private readonly maxChats: number;

  constructor(private readonly o: RecentMessagesOptions = {}) {
    this.perChat = o.perChat ?? 200;
    this.maxChats = o.maxChats ?? 1000;
  }

  /** Remember a message; `share` also records its thread in the shared store. */
  async add(m: SeenMessage, share = false): Promise<void> {
    let list = this.chats.get(m.chatId);
    if (list) this.chats.delete(m.chatId);
    else list = [];
    this.chats.set(m.chatId, list);
    const at = list.findIndex((x) => x.messageId === m.messageId);
    if (at >= 0) list.splice(at, 1);
    list.push(m);
    if (list.length > this.perChat) list.splice(0, list.length - this.perChat);
    if (this.chats.size > this.maxChats) {
      const oldest = this.chats.keys().next().value;
      if (oldest !== undefined) this.chats.delete(oldest);
    }
    if (share && this.o.store) {
      await this.o.store.set(
        this.key(m.chatId, m.messageId),
        `${m.topic}:${m.root}`,
        this.o.ttlMs ?? 14 * 86_400_000,
      );
    }
  }

  /**
   * Remembers an inbound message at once; its shared record (`share`) is written without waiting:
   * the message is handled meanwhile, and only a reply to it, which comes later, reads the record.
   * A failed write goes to `onShareError` and costs only that lookup.
   */
  noteInbound(m: SeenMessage, share: boolean): void {
    void this.add(m, share).catch((e: unknown) => this.o.onShareError?.(e));
  }

  find(chatId: number, messageId: number): SeenMessage | undefined {
    return this.chats.get(chatId)?.find((m) => m.messageId === messageId);
  }

  /** The thread (topic and root) a message belongs to, if known here or in the shared store. */
  async threadOf(chatId: number, messageId: number): Promise<{ topic: number; root: number } | undefined> {
    const seen = this.find(chatId, messageId);
    if (seen) return { topic: seen.topic, root: seen.root };
    if (!this.o.store) return undefined;
    const v = await this.o.store.get(this.key(chatId, messageId));
    const m = v ? /^(-?\d+):(-?\d+)$/.exec(v) : null;
    return m ? { topic: Number(m[1]), root: Number(m[2]) } : undefined;
  }

  /**
   * Messages of one thread, oldest first, at most `limit`, older than `beforeId` when given. Root 0
   * means the whole chat (or topic).
   */
  thread(chatId: number, topic: number, root: number, limit: number, beforeId?: number): SeenMessage[] {
    const list = this.chats.get(chatId) ?? [];
    const picked = list.filter(
      (m) =>
        m.topic === topic &&
        (root === 0 || m.root === root) &&
        (beforeId === undefined || m.messageId < beforeId),
    );
    return picked.slice(Math.max(0, picked.length - limit));
  }

  private key(chatId: number, messageId: number): string {
    return telegramMessageKey(this.o.prefix ?? DEFAULT_KEY_PREFIX, chatId, messageId);
  }
}
