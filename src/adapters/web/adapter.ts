/**
 * The web chat as a `ChannelAdapter`: the "platform" is the gateway's own page. What the page shows
 * lives in a `WebChatStore` (memory, files under the data folder, or Redis shared by every process);
 * what a person types arrives over HTTP (`routes.ts`) and is delivered like any platform's events;
 * what the bot posts, edits, deletes, reacts and types changes the store, whose feed the gateway that
 * serves the page forwards to every open page over Server-Sent Events.
 *
 * Outbound methods work without `start()`, so a worker process renders into the shared store while
 * a gateway process serves the page. Thread keys are `web:<conversation>`, message references
 * `web:<conversation>:<message>`. The web user is one identity (`userId`, default `web:local`):
 * everyone who signs in to the page acts as that user.
 */

import type { Env, Hono } from "hono";
import type { BlankEnv } from "hono/types";
import { type StructuredLogger, silentLogger } from "../../agent/logger.js";
import {
  type AdapterCapabilities,
  type AttachmentRef,
  type ChannelAdapter,
  ChannelError,
  type ChannelMount,
  type CommandSpec,
  type ConnectionStatus,
  type DownloadedFile,
  type EditOptions,
  type HistoryMessage,
  type InboundHandlers,
  type MessageRef,
  type OutgoingFile,
  type PostOptions,
  type UploadOptions,
} from "../types.js";
import { WebAccess } from "./auth.js";
import { MemoryWebAuthStore, type WebAuthStore } from "./auth-store.js";
import { WebInputError } from "./errors.js";
import { WebFiles } from "./files.js";
import { conversationOf, parseMessageRef, threadKeyOf } from "./ids.js";
import { WEB_BOT, WEB_USER } from "./imported.js";
import { inboundOfReaction, inboundOfText } from "./inbound.js";
import { visibleText } from "./input.js";
import { MemoryWebChatStore } from "./memory-store.js";
import type {
  ConversationKind,
  WebAuthor,
  WebCommand,
  WebConversation,
  WebFile,
  WebIdentity,
  WebMessage,
} from "./model.js";
import { createWebChatApp } from "./routes.js";
import type { WebChatService } from "./service.js";
import {
  type NewWebMessage,
  type WebChatStore,
  WebConversationMissingError,
  type WebStoreEvent,
  type WebStoreListener,
  type WebUploadStore,
} from "./store-types.js";
import { MemoryWebUploadStore } from "./upload-store.js";

/** Settings of the web chat (the `channels.web` slice plus what the wiring gives it). */
export interface WebChatConfig {
  /** Display name of the person using the page (default "you"). */
  userName?: string;
  /** User id of that person (default `web:local`); list it in `admins` to approve tool calls from the page. */
  userId?: string;
  /** The bot's display name; `@<name>` addresses it in group conversations (default "Switchboard"). */
  botName?: string;
  /** User ids whose approval reactions count (`channels.web.admins`); the page greys the buttons out for others. */
  admins?: readonly string[];
  /** Where the gateway serves the page (`channels.web.path`, default `/`), as `mounts()` says. */
  path?: string;
  /** Where conversations live (default: this process's memory, bounded by the two limits below). */
  store?: WebChatStore;
  /** Where sign-ins live (default: this process's memory). */
  auth?: WebAuthStore;
  /** Where the bytes of files live (default: this process's memory). */
  uploads?: WebUploadStore;
  /** Largest file the page may upload and the bot may send (default 20 MB: `channels.web.files.maxFileMb`). */
  maxFileBytes?: number;
  /**
   * Which `Host` headers the chat answers (default: loopback names only, against DNS rebinding). The
   * wiring passes the HTTP server's rule: any name when it requires its access token.
   */
  isAllowedHost?: (host: string | undefined) => boolean;
  /** Most conversations kept by the default memory store (default 200). */
  maxConversations?: number;
  /** Most messages kept per conversation by the default memory store (default 500). */
  maxMessagesPerConversation?: number;
  /** Longest message a person may send, in characters (default 20 000). */
  maxInputChars?: number;
  /** Minimum interval between edits of one message (default 250 ms: the page is local). */
  editIntervalMs?: number;
  /** How long one `typing()` shows the indicator (default 3000 ms). */
  typingDurationMs?: number;
  /** Interval of keep-alive comments on event streams (default 20 000 ms). */
  heartbeatMs?: number;
  logger?: StructuredLogger;
  /** Clock for timestamps of the default store (tests). */
  now?: () => number;
}

/** Accepted reaction emoji: a short run of non-space characters, or `:name:`. */
const EMOJI = /^(?::[a-z0-9_+-]{1,40}:|[^\s\p{Cc}]{1,16})$/u;

/** The text as chat platforms show it: without trailing whitespace or leading blank lines. */
const visible = (text: string) => text.replace(/^(?:[ \t]*\n)+/, "").trimEnd();

export class WebChatAdapter implements ChannelAdapter, WebChatService {
  readonly platform = "web" as const;
  readonly capabilities: AdapterCapabilities;
  readonly store: WebChatStore;
  readonly access: WebAccess;
  readonly files: WebFiles;
  readonly config: Readonly<WebChatConfig>;
  private readonly user: WebAuthor;
  private readonly bot: WebAuthor;
  private readonly log: StructuredLogger;
  private readonly maxInput: number;
  private handlers: InboundHandlers | undefined;
  private state: ConnectionStatus | undefined;
  private commandList: WebCommand[] = [];
  private inFlight = 0;
  private idle: (() => void) | undefined;
  private readonly stopListeners = new Set<() => void>();
  private readonly listeners = new Set<WebStoreListener>();
  private feed: Promise<() => void> | undefined;
  private openStreams = 0;
  private reactionSeq = 0;
  private readonly now: () => number;

  constructor(config: WebChatConfig = {}) {
    this.config = config;
    this.now = config.now ?? Date.now;
    this.store =
      config.store ??
      new MemoryWebChatStore({
        ...(config.maxConversations !== undefined ? { maxConversations: config.maxConversations } : {}),
        ...(config.maxMessagesPerConversation !== undefined
          ? { maxMessagesPerConversation: config.maxMessagesPerConversation }
          : {}),
        now: this.now,
      });
    this.access = new WebAccess({
      store: config.auth ?? new MemoryWebAuthStore(),
      ...(config.isAllowedHost ? { isAllowedHost: config.isAllowedHost } : {}),
    });
    this.user = { ...WEB_USER, id: config.userId ?? WEB_USER.id, name: config.userName ?? WEB_USER.name };
    this.bot = { ...WEB_BOT, name: config.botName ?? WEB_BOT.name };
    this.log = config.logger ?? silentLogger;
    this.maxInput = config.maxInputChars ?? 20_000;
    const maxFile = config.maxFileBytes ?? 20 * 1024 * 1024;
    this.files = new WebFiles(config.uploads ?? new MemoryWebUploadStore(), this.store, maxFile);
    this.capabilities = {
      maxMessageLength: 100_000,
      editIntervalMs: config.editIntervalMs ?? 250,
      // The page renders CommonMark itself; "discord" is the dialect that leaves CommonMark as it is.
      markdown: "discord",
      nativeCommands: true,
      reactions: true,
      edits: true,
      typingDurationMs: config.typingDurationMs ?? 3000,
      history: true,
      files: { maxDownloadBytes: maxFile, maxUploadBytes: maxFile },
    };
  }

  /** The page's user and whether their approvals count. */
  get identity(): WebIdentity {
    return {
      id: this.user.id,
      name: this.user.name,
      isAdmin: (this.config.admins ?? []).includes(this.user.id),
      botName: this.bot.name,
    };
  }

  /** Commands for the page's help (from `registerCommands`). */
  get commands(): WebCommand[] {
    return this.commandList.map((c) => ({ ...c }));
  }

  /** The HTTP routes (page, API, event stream) for the gateway to mount under `channels.web.path`. */
  app<E extends Env = BlankEnv>(): Hono<E> {
    return createWebChatApp<E>(this);
  }

  /** The page's app at `path`, for the gateway to mount like any channel's. */
  mounts(): ChannelMount[] {
    return [{ prefix: this.config.path ?? "/", app: <E extends Env>() => this.app<E>() }];
  }

  get started(): boolean {
    return this.handlers !== undefined;
  }

  /** Starts taking input from the page and following the store's changes. */
  async start(handlers: InboundHandlers): Promise<void> {
    await this.follow();
    this.handlers = handlers;
    this.state = { name: "web:http", state: "connected", since: this.now() };
  }

  /** Stops delivering, ends every open event stream, and waits for handler calls in progress. */
  async stop(): Promise<void> {
    if (!this.handlers) return;
    this.handlers = undefined;
    this.state = { name: "web:http", state: "stopped", since: this.now() };
    for (const l of [...this.stopListeners]) l();
    const feed = this.feed;
    this.feed = undefined;
    if (feed) (await feed.catch(() => () => {}))();
    if (this.inFlight > 0) await new Promise<void>((r) => (this.idle = r));
  }

  connections(): ConnectionStatus[] {
    if (!this.state) return [];
    return [{ ...this.state, detail: `${this.openStreams} page(s) open` }];
  }

  /**
   * Calls `listener` with every change of the chat (what the page sees, from any process sharing the
   * store) until the returned function is called; `resync` means changes may have been missed.
   * Resolves once the store's feed is followed.
   */
  async subscribe(listener: WebStoreListener): Promise<() => void> {
    this.listeners.add(listener);
    await this.follow();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Calls `listener` once when the adapter stops (event streams close themselves). */
  onStop(listener: () => void): () => void {
    this.stopListeners.add(listener);
    return () => {
      this.stopListeners.delete(listener);
    };
  }

  /** Counts open event streams for `connections()`; returns the release. */
  trackStream(): () => void {
    this.openStreams++;
    let released = false;
    return () => {
      if (!released) this.openStreams--;
      released = true;
    };
  }

  /** A new one-time sign-in link for the page at `pageUrl` (e.g. `http://127.0.0.1:8787/`). */
  async signInLink(pageUrl: string, ttlMs?: number): Promise<string> {
    const token = await this.access.newSignInToken(ttlMs);
    const url = new URL(pageUrl);
    url.searchParams.set("token", token);
    return url.toString();
  }

  // ── outbound ────────────────────────────────────────────────────────────

  async post(threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    const conversationId = conversationOf(threadKey);
    this.checkText(text);
    const replyTo = opts.replyTo ? this.replyTarget(conversationId, opts.replyTo) : undefined;
    const message = {
      from: this.bot,
      text: visible(text),
      format: opts.format ?? "markdown",
      ...(replyTo ? { replyTo } : {}),
    } as const;
    return this.addBotMessage(conversationId, message);
  }

  /** A file the page uploaded with a message (`ref.id` is `<conversation>/<file id>`). */
  download(file: AttachmentRef): Promise<DownloadedFile> {
    return this.files.download(file);
  }

  /**
   * A bot message carrying `file` (stored first, under the upload key when given: a repeat with the
   * same key returns the message that carries it).
   */
  async uploadFile(threadKey: string, file: OutgoingFile, opts: UploadOptions = {}): Promise<MessageRef> {
    const conversationId = conversationOf(threadKey);
    const key = opts.idempotencyKey;
    if (key) {
      const earlier = await this.files.findUploaded(conversationId, key);
      if (earlier) return earlier;
    }
    const staged = await this.files.stage(conversationId, file, key);
    const replyTo = opts.replyTo ? this.replyTarget(conversationId, opts.replyTo) : undefined;
    const message = {
      from: this.bot,
      text: visible(opts.caption ?? ""),
      format: "markdown" as const,
      files: [staged],
      ...(replyTo ? { replyTo } : {}),
    };
    return this.addBotMessage(conversationId, message);
  }

  /** Adds the bot's `message` to `conversationId`, starting the conversation again when it is gone. */
  private async addBotMessage(conversationId: string, message: NewWebMessage): Promise<MessageRef> {
    try {
      return (await this.store.add(conversationId, message)).ref;
    } catch (err) {
      if (!(err instanceof WebConversationMissingError)) throw err;
      // A conversation removed as the oldest, or made by a process that lost it: start it again.
      await this.store.create({ id: conversationId, title: "Conversation" });
      return (await this.store.add(conversationId, message)).ref;
    }
  }

  /** The bot's message carrying the file uploaded with `key`, if the conversation has it. */
  findUploaded(threadKey: string, key: string): Promise<MessageRef | undefined> {
    return this.files.findUploaded(conversationOf(threadKey), key);
  }

  async edit(ref: MessageRef, text: string, opts: EditOptions = {}): Promise<void> {
    const { conversationId, messageId } = parseMessageRef(ref);
    this.checkText(text);
    const after = await this.store.edit(conversationId, messageId, visible(text), opts.format ?? "markdown");
    if (!after) throw this.missing(ref);
  }

  async delete(ref: MessageRef): Promise<void> {
    const { conversationId, messageId } = parseMessageRef(ref);
    if (!(await this.store.remove(conversationId, messageId))) throw this.missing(ref);
  }

  async react(ref: MessageRef, emoji: string): Promise<void> {
    const { conversationId, messageId } = parseMessageRef(ref);
    if (!(await this.store.react(conversationId, messageId, emoji, "bot", true))) throw this.missing(ref);
  }

  async unreact(ref: MessageRef, emoji: string): Promise<void> {
    const { conversationId, messageId } = parseMessageRef(ref);
    if (!(await this.store.react(conversationId, messageId, emoji, "bot", false))) throw this.missing(ref);
  }

  async typing(threadKey: string): Promise<void> {
    await this.store.typing(conversationOf(threadKey), this.capabilities.typingDurationMs);
  }

  /** Ends the indicator on every open page at once (a typing event of zero duration). */
  async stopTyping(threadKey: string): Promise<void> {
    const conversationId = conversationOf(threadKey);
    if (await this.store.get(conversationId)) await this.store.typing(conversationId, 0);
  }

  channelOf(threadKey: string): string {
    return threadKeyOf(conversationOf(threadKey));
  }

  /** The conversation's messages before `before` (all when absent), the last `limit`, oldest first. */
  async fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    const messages = (await this.store.messages(conversationOf(threadKey))) ?? [];
    let end = messages.length;
    if (before !== undefined) {
      const at = messages.findIndex((m) => m.ref === before);
      if (at >= 0) end = at;
    }
    return messages.slice(Math.max(0, end - Math.max(0, limit)), end).map((m) => ({
      messageId: m.ref,
      user: { id: m.from.id, name: m.from.name, isBot: m.from.isBot },
      text: m.text,
      timestamp: m.createdAt,
      fromBot: m.from.isBot,
    }));
  }

  async registerCommands(commands: CommandSpec[]): Promise<void> {
    this.commandList = commands.map((c) => ({ name: c.name, description: c.description }));
  }

  // ── inbound (called by the HTTP routes) ─────────────────────────────────

  /** Starts a conversation for the page's user. */
  createConversation(opts: { title?: string; kind?: ConversationKind } = {}): Promise<WebConversation> {
    return this.store.create(opts);
  }

  /**
   * Starts a conversation with its first message, as the page does when a person writes before
   * opening one: the text is checked first, so a message the chat refuses leaves no empty
   * conversation behind. Resolves like `receiveText`, with the conversation.
   */
  startConversation(
    opts: { title?: string; kind?: ConversationKind },
    text: string,
    clientId?: string,
  ): Promise<{ conversation: WebConversation; message: WebMessage }> {
    return this.taking(async (h) => {
      this.typedText(text);
      const conversation = await this.store.create(opts);
      const message = await this.takeText(h, conversation.id, text, clientId, []);
      return { conversation: (await this.store.get(conversation.id)) ?? conversation, message };
    });
  }

  /**
   * The page's user typed `text` into a conversation: store it, then deliver it as a command or a
   * message. `clientId` (the page's id for this send) makes a retried request deliver nothing twice;
   * a retry after a failed delivery delivers the same message again. Resolves once the handler has
   * taken it; throws `WebInputError` for bad input or a failed delivery.
   */
  receiveText(
    conversationId: string,
    text: string,
    clientId?: string,
    files: WebFile[] = [],
  ): Promise<WebMessage> {
    return this.taking((h) => this.takeText(h, conversationId, text, clientId, files));
  }

  private async takeText(
    h: InboundHandlers,
    conversationId: string,
    text: string,
    clientId: string | undefined,
    files: WebFile[],
  ): Promise<WebMessage> {
    const conversation = await this.store.get(conversationId);
    if (!conversation) throw new WebInputError(404, `There is no conversation ${conversationId}.`);
    const earlier = clientId ? await this.store.clientRecord(conversationId, clientId) : undefined;
    const known = earlier ? await this.store.message(conversationId, earlier.messageId) : undefined;
    if (earlier?.delivered && known) return known;
    const shown = this.typedText(text, files.length > 0);
    const checked = known ? [] : await this.files.check(conversationId, files);
    const message =
      known ??
      (await this.store.add(conversationId, {
        from: this.user,
        text: shown,
        format: "plain",
        ...(checked.length > 0 ? { files: checked } : {}),
      }));
    if (clientId)
      await this.store.rememberClient(conversationId, clientId, { messageId: message.id, delivered: false });
    await this.deliver(h, this.dispatchText(conversation, message));
    if (clientId)
      await this.store.rememberClient(conversationId, clientId, { messageId: message.id, delivered: true });
    return (await this.store.message(conversationId, message.id)) ?? message;
  }

  /**
   * The page's user added (or removed) a reaction on a message of a conversation. A request that
   * changes nothing (the reaction is already there) delivers nothing, so retries are harmless.
   */
  receiveReaction(
    conversationId: string,
    messageId: string,
    emoji: string,
    added: boolean,
  ): Promise<WebMessage> {
    return this.taking((h) => this.takeReaction(h, conversationId, messageId, emoji, added));
  }

  private async takeReaction(
    h: InboundHandlers,
    conversationId: string,
    messageId: string,
    emoji: string,
    added: boolean,
  ): Promise<WebMessage> {
    if (!EMOJI.test(emoji)) throw new WebInputError(400, "The emoji must be one emoji or a :name:.");
    const result = await this.store.react(conversationId, messageId, emoji, { userId: this.user.id }, added);
    if (!result)
      throw new WebInputError(404, `There is no message ${messageId} in conversation ${conversationId}.`);
    if (result.changed) {
      const reaction = inboundOfReaction({
        conversationId,
        message: result.message,
        emoji,
        user: this.user,
        added,
        seq: ++this.reactionSeq,
        now: this.now(),
      });
      await this.deliver(h, async (handlers) => handlers.onReaction(reaction));
    }
    return result.message;
  }

  private dispatchText(conversation: WebConversation, message: WebMessage) {
    return async (h: InboundHandlers): Promise<void> => {
      const event = inboundOfText(conversation, message, this.user, this.bot.name);
      if (event && "command" in event) await h.onCommand(event.command);
      else if (event) await h.onMessage(event.message);
    };
  }

  /** Runs one request from the page with the handlers of now; `stop()` waits for it to finish. */
  private async taking<T>(work: (h: InboundHandlers) => Promise<T>): Promise<T> {
    const h = this.handlers;
    if (!h) throw new WebInputError(503, "The web chat is not running; start Switchboard and try again.");
    this.inFlight++;
    try {
      return await work(h);
    } finally {
      this.inFlight--;
      if (this.inFlight === 0 && this.idle) {
        const done = this.idle;
        this.idle = undefined;
        done();
      }
    }
  }

  private async deliver(h: InboundHandlers, call: (h: InboundHandlers) => Promise<void>): Promise<void> {
    try {
      await call(h);
    } catch (err) {
      this.log.error({ err }, "web chat: inbound handler failed");
      throw new WebInputError(502, "Switchboard could not take the message; send it again in a moment.");
    }
  }

  /** Follows the store's feed once, fanning its changes out to this adapter's listeners. */
  private follow(): Promise<() => void> {
    this.feed ??= this.store.subscribe((event: WebStoreEvent) => {
      for (const l of this.listeners) {
        try {
          l(event);
        } catch (err) {
          this.log.warn({ err }, "web chat: a change listener failed");
        }
      }
    });
    return this.feed;
  }

  /**
   * What is kept of `text` typed by the page's user: its control characters made visible and lone
   * surrogates replaced (input.ts). Throws `WebInputError` for an empty or too long message.
   */
  /** `text` as the page's user typed it, made visible; empty only when files go with it. */
  private typedText(text: string, withFiles = false): string {
    const shown = visibleText(text);
    if (!shown.trim() && !withFiles) throw new WebInputError(400, "The message is empty.");
    if (shown.length > this.maxInput)
      throw new WebInputError(
        413,
        `The message has ${shown.length} characters; the web chat accepts at most ${this.maxInput}.`,
      );
    return shown;
  }

  private checkText(text: string): void {
    if (text.length > this.capabilities.maxMessageLength)
      throw new ChannelError(
        "too_long",
        `web chat messages hold at most ${this.capabilities.maxMessageLength} characters (got ${text.length})`,
        "web",
      );
    if (!text.trim()) throw new ChannelError("bad_request", "web chat messages cannot be empty", "web");
  }

  /** The id of the message `ref` names, when it is in the same conversation. */
  private replyTarget(conversationId: string, ref: MessageRef): string | undefined {
    try {
      const parsed = parseMessageRef(ref);
      return parsed.conversationId === conversationId ? parsed.messageId : undefined;
    } catch {
      return undefined;
    }
  }

  private missing(ref: MessageRef): ChannelError {
    return new ChannelError("not_found", `web chat message ${ref} does not exist (any more)`, "web");
  }
}
