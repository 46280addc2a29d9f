/**
 * The web chat store on Redis, shared by every gateway and worker: a worker posts and edits the
 * bot's messages here, the gateway that serves the page reads them and forwards the changes to its
 * event streams. Layout and atomic steps: `web-redis-scripts.ts`. Keys: `WebChatKeys` (src/redis-keys.ts); besides one conversation's:
 *
 * | key | type | holds |
 * |---|---|---|
 * | `<prefix>web:conversations` | sorted set | conversation ids scored by `updatedAt` (the page's list) |
 * | `<prefix>web:typing` | sorted set | conversation ids scored by the time the typing indicator ends |
 * | `<prefix>web:events` | pub/sub channel | every change as a `WebChatEvent` JSON |
 *
 * Those three are single-key commands, so they work on a cluster too. The state is written first and
 * the change published after, so a page that (re)reads the state never misses what an event said;
 * when the subscriber's connection drops, listeners get `resync` and read the state again.
 */
import {
  byRecency,
  edited,
  newConversation,
  newMessage,
  reacted,
  type StoredConversation,
  titleFrom,
  viewOf,
} from "../../adapters/web/conversation-state.js";
import { newConversationId, threadKeyOf } from "../../adapters/web/ids.js";
import type {
  ConversationKind,
  WebChatEvent,
  WebConversation,
  WebMessage,
} from "../../adapters/web/model.js";
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
} from "../../adapters/web/store-types.js";
import { WebChatKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";
import { publishInOrder } from "../redis/ordered-publish.js";
import { runScript } from "../redis/run-script.js";
import { RedisSubscriber } from "../redis/subscriber.js";
import { ADD, CREATE, NEXT_ID, READ, REMOVE, REPLACE } from "./web-redis-scripts.js";

export interface RedisWebChatStoreOptions extends WebStoreLimits {
  redis: RedisClient;
  /** Key prefix (default `DEFAULT_KEY_PREFIX`), the runtime's. */
  prefix?: string;
  /** Told about feed messages that could not be read and subscriber trouble. */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

/** How long a page's client ids are remembered after the conversation's last send. */
const CLIENT_IDS_TTL_MS = 24 * 60 * 60 * 1000;
/** Compare-and-set attempts before an edit or reaction gives up (only under a storm of writers). */
const MAX_ATTEMPTS = 20;

export class RedisWebChatStore implements WebChatStore {
  private readonly redis: RedisClient;
  private readonly keys: WebChatKeys;
  private readonly maxConversations: number;
  private readonly maxMessages: number;
  private readonly now: () => number;
  private readonly warn: (message: string, detail: Record<string, unknown>) => void;
  private readonly listeners = new Set<WebStoreListener>();
  private subscriber: RedisSubscriber | undefined;

  constructor(o: RedisWebChatStoreOptions) {
    this.redis = o.redis;
    this.keys = new WebChatKeys(o.prefix);
    this.maxConversations = Math.max(1, o.maxConversations ?? DEFAULT_MAX_CONVERSATIONS);
    this.maxMessages = Math.max(1, o.maxMessagesPerConversation ?? DEFAULT_MAX_MESSAGES);
    this.now = o.now ?? Date.now;
    this.warn = o.onWarning ?? (() => {});
  }

  // ── keys ────────────────────────────────────────────────────────────────

  private chat = (id: string) => this.keys.chat(threadKeyOf(id));
  private msgs = (id: string) => this.keys.messages(threadKeyOf(id));
  private order = (id: string) => this.keys.order(threadKeyOf(id));
  private clients = (id: string) => this.keys.clients(threadKeyOf(id));
  private get listKey() {
    return this.keys.conversations;
  }
  private get typingKey() {
    return this.keys.typing;
  }
  private get channel() {
    return this.keys.events;
  }

  // ── reads ───────────────────────────────────────────────────────────────

  async list(): Promise<WebConversation[]> {
    const ids = await this.redis.zrevrange(this.listKey, 0, this.maxConversations - 1);
    const found = await Promise.all(ids.map((id) => this.get(id)));
    return found.filter((c): c is WebConversation => c !== undefined).sort(byRecency);
  }

  async get(conversationId: string): Promise<WebConversation | undefined> {
    const fields = await this.redis.hgetall(this.chat(conversationId));
    const stored = conversationOf(fields);
    return stored ? viewOf(stored) : undefined;
  }

  async messages(conversationId: string): Promise<WebMessage[] | undefined> {
    const reply = (await runScript(
      this.redis,
      READ,
      [this.chat(conversationId), this.order(conversationId), this.msgs(conversationId)],
      [],
    )) as unknown as (string | null)[] | null;
    if (!reply) return undefined;
    return reply.flatMap((json) => (json ? [JSON.parse(json) as WebMessage] : []));
  }

  async message(conversationId: string, messageId: string): Promise<WebMessage | undefined> {
    const json = await this.redis.hget(this.msgs(conversationId), messageId);
    return json ? (JSON.parse(json) as WebMessage) : undefined;
  }

  async typingNow(): Promise<Array<{ conversationId: string; durationMs: number }>> {
    const now = this.now();
    const flat = await this.redis.zrangebyscore(this.typingKey, `(${now}`, "+inf", "WITHSCORES");
    const out: Array<{ conversationId: string; durationMs: number }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2)
      out.push({ conversationId: flat[i] as string, durationMs: Number(flat[i + 1]) - now });
    return out;
  }

  async clientRecord(conversationId: string, clientId: string): Promise<ClientRecord | undefined> {
    const json = await this.redis.hget(this.clients(conversationId), clientId);
    return json ? (JSON.parse(json) as ClientRecord) : undefined;
  }

  // ── writes ──────────────────────────────────────────────────────────────

  async create(
    opts: { id?: string; title?: string; kind?: ConversationKind } = {},
  ): Promise<WebConversation> {
    const id = opts.id ?? newConversationId();
    const fresh = newConversation(id, opts, this.now());
    const reply = (await runScript(
      this.redis,
      CREATE,
      [this.chat(id)],
      [id, fresh.title, fresh.kind, fresh.createdAt, fresh.titled ? "1" : "0"],
    )) as unknown as [number, ...string[]];
    const [created, ...flat] = reply;
    const stored = conversationOf(pairs(flat));
    if (!stored) throw new Error(`web chat: conversation ${id} could not be created`);
    if (created !== 1) return viewOf(stored);
    await this.redis.zadd(this.listKey, stored.updatedAt, id);
    await this.publish({ type: "conversation", conversation: viewOf(stored) });
    await this.evict(id);
    return viewOf(stored);
  }

  async add(conversationId: string, input: NewWebMessage): Promise<WebMessage> {
    const chat = this.chat(conversationId);
    const seq = (await runScript(this.redis, NEXT_ID, [chat], [])) as unknown as number | null;
    if (seq === null) throw new WebConversationMissingError(conversationId);
    const now = this.now();
    const message = newMessage(conversationId, seq, input, now);
    const title = input.from.isBot ? "" : (titleFrom(input.text) ?? "");
    const reply = (await runScript(
      this.redis,
      ADD,
      [chat, this.msgs(conversationId), this.order(conversationId)],
      [message.id, JSON.stringify(message), now, title, this.maxMessages],
    )) as unknown as [string[], ...string[]] | null;
    if (!reply) throw new WebConversationMissingError(conversationId);
    const [removed, ...flat] = reply;
    const stored = conversationOf(pairs(flat));
    if (stored) await this.redis.zadd(this.listKey, stored.updatedAt, conversationId);
    await this.publish({ type: "message", change: "posted", message });
    for (const id of removed) await this.publish({ type: "message_deleted", conversationId, messageId: id });
    if (stored) await this.publish({ type: "conversation", conversation: viewOf(stored) });
    return message;
  }

  async edit(
    conversationId: string,
    messageId: string,
    text: string,
    format: WebMessage["format"],
  ): Promise<WebMessage | undefined> {
    const r = await this.update(conversationId, messageId, (m) => edited(m, text, format, this.now()));
    if (r?.changed) await this.publish({ type: "message", change: "edited", message: r.message });
    return r?.message;
  }

  async react(
    conversationId: string,
    messageId: string,
    emoji: string,
    by: ReactionBy,
    added: boolean,
  ): Promise<{ message: WebMessage; changed: boolean } | undefined> {
    const r = await this.update(conversationId, messageId, (m) => reacted(m, emoji, by, added));
    if (r?.changed) await this.publish({ type: "message", change: "reactions", message: r.message });
    return r;
  }

  async remove(conversationId: string, messageId: string): Promise<boolean> {
    const n = (await runScript(
      this.redis,
      REMOVE,
      [this.msgs(conversationId), this.order(conversationId)],
      [messageId],
    )) as unknown as number;
    if (n !== 1) return false;
    await this.publish({ type: "message_deleted", conversationId, messageId });
    return true;
  }

  async typing(conversationId: string, durationMs: number): Promise<void> {
    const now = this.now();
    await this.redis.zadd(this.typingKey, now + durationMs, conversationId);
    await this.publish({ type: "typing", conversationId, durationMs });
    // Keeps the set small; whatever ended before now is of no use.
    await this.redis.zremrangebyscore(this.typingKey, "-inf", now);
  }

  async rememberClient(conversationId: string, clientId: string, record: ClientRecord): Promise<void> {
    const key = this.clients(conversationId);
    await this.redis
      .multi()
      .hset(key, clientId, JSON.stringify(record))
      .pexpire(key, CLIENT_IDS_TTL_MS)
      .exec();
  }

  // ── the feed ────────────────────────────────────────────────────────────

  async subscribe(listener: WebStoreListener): Promise<() => void> {
    this.listeners.add(listener);
    const unsubscribe = () => {
      this.listeners.delete(listener);
    };
    try {
      await this.listen();
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  /** One subscriber connection per store, made on first use. */
  private listen(): Promise<void> {
    this.subscriber ??= new RedisSubscriber(
      this.redis,
      [this.channel],
      {
        message: (channel, payload) => {
          if (channel !== this.channel) return;
          let event: WebChatEvent;
          try {
            event = JSON.parse(payload) as WebChatEvent;
          } catch (err) {
            this.warn("web chat: skipped an unreadable change", { err, bytes: payload.length });
            return;
          }
          this.emit(event);
        },
        // Back after a drop (or on another cluster node): what was published meanwhile is lost, so
        // listeners re-read the state.
        resubscribed: () => this.emit({ type: "resync" }),
        error: (err) => this.warn("web chat: change feed connection error", { err }),
      },
      this.keys.feed,
    );
    return this.subscriber.ready;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const sub = this.subscriber;
    this.subscriber = undefined;
    await sub?.close();
  }

  private emit(event: WebStoreEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  private async publish(event: WebChatEvent): Promise<void> {
    await publishInOrder(this.redis, this.channel, JSON.stringify(event));
  }

  // ── helpers ─────────────────────────────────────────────────────────────

  /** Read, change, compare-and-set until it holds; `change` returns undefined for "nothing to do". */
  private async update(
    conversationId: string,
    messageId: string,
    change: (m: WebMessage) => WebMessage | undefined,
  ): Promise<{ message: WebMessage; changed: boolean } | undefined> {
    const key = this.msgs(conversationId);
    let json = await this.redis.hget(key, messageId);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (!json) return undefined;
      const current = JSON.parse(json) as WebMessage;
      const next = change(current);
      if (!next) return { message: current, changed: false };
      const r = (await runScript(
        this.redis,
        REPLACE,
        [key],
        [messageId, current.version, JSON.stringify(next)],
      )) as unknown as number | string;
      if (r === 1) return { message: next, changed: true };
      if (r === 0) return undefined;
      json = r as string;
    }
    throw new Error(`web chat: message ${messageId} kept changing; the change was not saved`);
  }

  /** Removes the least recently updated conversations beyond the limit (never `keep`). */
  private async evict(keep: string): Promise<void> {
    const excess = (await this.redis.zcard(this.listKey)) - this.maxConversations;
    if (excess <= 0) return;
    const oldest = (await this.redis.zrange(this.listKey, "0", String(excess)))
      .filter((id) => id !== keep)
      .slice(0, excess);
    for (const id of oldest) {
      await this.redis.del(this.chat(id), this.msgs(id), this.order(id), this.clients(id));
      await this.redis.zrem(this.listKey, id);
      await this.publish({ type: "conversation_removed", conversationId: id });
    }
  }
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

function conversationOf(f: Record<string, string>): StoredConversation | undefined {
  if (!f.id) return undefined;
  return {
    id: f.id,
    threadKey: threadKeyOf(f.id),
    title: f.title ?? "",
    kind: f.kind === "group" ? "group" : "direct",
    createdAt: Number(f.createdAt),
    updatedAt: Number(f.updatedAt),
    titled: f.titled === "1",
  };
}
