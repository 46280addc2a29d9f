/**
 * The web chat's storage seam: what the page shows (conversations, their messages with edits,
 * reactions and tool lines, who is typing) and the live feed of changes. Three implementations run
 * one contract suite (test/adapters/web/store-contract.ts):
 *
 * | | where | used by |
 * |---|---|---|
 * | `MemoryWebChatStore` | this process's memory | tests, an adapter built without a store |
 * | `FileWebChatStore` | JSONL files under `<dataDir>/web/` | the embedded mode (one process) |
 * | `RedisWebChatStore` | Redis keys hash-tagged `{web:<id>}`, pub/sub for the feed | gateways and workers sharing Redis |
 *
 * Every write resolves once it is durable in the backend and its event has been handed to the feed,
 * so a worker that posts a reply and a gateway that serves the page agree after any restart.
 */
import { SwitchboardError } from "../../agent/errors.js";
import type {
  ConversationKind,
  WebAuthor,
  WebChatEvent,
  WebConversation,
  WebFile,
  WebMessage,
} from "./model.js";

/** Who adds or removes a reaction: the bot, or a user by id. */
export type ReactionBy = "bot" | { userId: string };

/** A message to append. */
export interface NewWebMessage {
  from: WebAuthor;
  text: string;
  format: WebMessage["format"];
  /** Id of a message in the same conversation that this one answers. */
  replyTo?: string;
  /** Files already in the upload store. */
  files?: WebFile[];
}

/** What a page's request with a client id (a retried send) found or left behind. */
export interface ClientRecord {
  messageId: string;
  /** The message reached the dispatcher (a retry then delivers nothing again). */
  delivered: boolean;
}

/**
 * A change in the feed. `resync` tells listeners that changes may have been missed (the feed's
 * connection dropped and came back): whoever shows state should read it again.
 */
export type WebStoreEvent = WebChatEvent | { type: "resync" };

export type WebStoreListener = (event: WebStoreEvent) => void;

/** Limits every implementation applies, and its clock. */
export interface WebStoreLimits {
  /** Most conversations kept (default 200); the least recently updated one is removed first. */
  maxConversations?: number;
  /** Most messages kept per conversation (default 500); the oldest are removed first. */
  maxMessagesPerConversation?: number;
  /** Time source for timestamps (default `Date.now`). */
  now?: () => number;
}

export const DEFAULT_MAX_CONVERSATIONS = 200;
export const DEFAULT_MAX_MESSAGES = 500;

/**
 * The store. Methods reject only when the backend fails (disk, Redis); a missing conversation or
 * message is an `undefined` answer, except for `add` (the conversation must exist: `create` first).
 */
export interface WebChatStore {
  /** Conversations, most recently updated first. */
  list(): Promise<WebConversation[]>;
  get(conversationId: string): Promise<WebConversation | undefined>;
  /**
   * Starts a conversation. With `id` it is idempotent: an existing conversation of that id is
   * returned as it is (a worker posting into a conversation it has not seen).
   */
  create(opts?: { id?: string; title?: string; kind?: ConversationKind }): Promise<WebConversation>;
  /** The conversation's messages, oldest first; undefined when there is no such conversation. */
  messages(conversationId: string): Promise<WebMessage[] | undefined>;
  message(conversationId: string, messageId: string): Promise<WebMessage | undefined>;
  /**
   * Appends a message (id `m<n>`, the next number of the conversation) and updates the
   * conversation's time; the first message by a person names an untitled conversation. Rejects when
   * the conversation does not exist.
   */
  add(conversationId: string, message: NewWebMessage): Promise<WebMessage>;
  /**
   * Replaces a message's text. Returns the message after the change (unchanged, with the same
   * version, when text and format were already that), or undefined when it does not exist.
   */
  edit(
    conversationId: string,
    messageId: string,
    text: string,
    format: WebMessage["format"],
  ): Promise<WebMessage | undefined>;
  /** Removes a message; false when it did not exist. */
  remove(conversationId: string, messageId: string): Promise<boolean>;
  /**
   * Adds or removes one reaction. `changed` is false when it was already so (a retried request
   * changes nothing and sends no event); undefined when the message does not exist.
   */
  react(
    conversationId: string,
    messageId: string,
    emoji: string,
    by: ReactionBy,
    added: boolean,
  ): Promise<{ message: WebMessage; changed: boolean } | undefined>;
  /** The bot is typing in the conversation for `durationMs`. */
  typing(conversationId: string, durationMs: number): Promise<void>;
  /** Conversations where the bot is typing now, with the time left. */
  typingNow(): Promise<Array<{ conversationId: string; durationMs: number }>>;
  /** What an earlier request with this client id left (see `ClientRecord`). */
  clientRecord(conversationId: string, clientId: string): Promise<ClientRecord | undefined>;
  rememberClient(conversationId: string, clientId: string, record: ClientRecord): Promise<void>;
  /**
   * Calls `listener` with every change made through any instance sharing the backend, in the order
   * each writer made them, until the returned function is called. Resolves once every change made
   * from then on will reach the listener.
   */
  subscribe(listener: WebStoreListener): Promise<() => void>;
  /** Releases connections and pending writes. */
  close(): Promise<void>;
}

/** `add` into a conversation that does not exist (never made, or removed as the oldest). */
export class WebConversationMissingError extends SwitchboardError {
  constructor(readonly conversationId: string) {
    super(
      "web.conversation_missing",
      `web chat: there is no conversation ${conversationId}; create it first`,
    );
  }
}

/**
 * Where the bytes of the web chat's files live, so that any process can serve or fetch them: the
 * page's uploads (the worker that answers downloads them through the adapter) and the bot's
 * `send_file` posts (the page downloads them). Implementations: `MemoryWebUploadStore` (one
 * process, tests), `DirWebUploadStore` (files under `<dataDir>/web/files`), `RedisWebUploadStore`
 * (src/queue/store, kept 30 days).
 */
export interface WebUploadStore {
  /**
   * Stores `body` as file `id` of the conversation, streamed, at most `maxBytes`: past it the
   * store keeps nothing and rejects with `WebUploadTooLargeError`. A file `id` that exists already
   * is kept as it is (`body` is not read): a repeated upload under the same id changes nothing.
   * Resolves with the stored size and the first bytes (at most 4,100, for sniffing its type).
   */
  put(
    conversationId: string,
    id: string,
    body: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<{ size: number; head: Buffer }>;
  /** The file's bytes, streamed; undefined when there is no such file (any more). */
  get(
    conversationId: string,
    id: string,
  ): Promise<{ size: number; body: AsyncIterable<Uint8Array> } | undefined>;
}

/** An upload past the store's limit. */
export class WebUploadTooLargeError extends SwitchboardError {
  constructor(readonly maxBytes: number) {
    super("web.upload_too_large", `The file is larger than the ${maxBytes} bytes the web chat takes.`);
  }
}
