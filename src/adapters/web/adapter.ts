/**
 * The web chat as a `ChannelAdapter`: the "platform" is the gateway's own page. Conversations live
 * in memory (`ConversationStore`); what a person types arrives over HTTP (`routes.ts`) and is
 * delivered like any platform's events; what the bot posts, edits, deletes, reacts and types
 * changes the store, which pushes it to every open page over Server-Sent Events.
 *
 * Thread keys are `web:<conversation>`, message references `web:<conversation>:<message>`. The
 * web user is one identity (`userId`, default `web:local`): everyone who can open the page (the
 * access token decides) acts as that user.
 */

import type { Env, Hono } from "hono";
import type { BlankEnv } from "hono/types";
import {
  type AdapterCapabilities,
  type AdapterLogger,
  type ChannelAdapter,
  type ChannelAdapterFactory,
  ChannelError,
  type CommandSpec,
  type ConnectionStatus,
  type EditOptions,
  type HistoryMessage,
  type InboundCommand,
  type InboundHandlers,
  type InboundMessage,
  type InboundReaction,
  type MessageRef,
  type PostOptions,
} from "../types.js";
import { WebInputError } from "./errors.js";
import { conversationOf, parseMessageRef, threadKeyOf } from "./ids.js";
import { interpretLine } from "./inbound.js";
import type {
  ConversationKind,
  WebAuthor,
  WebChatEvent,
  WebCommand,
  WebConversation,
  WebIdentity,
  WebMessage,
} from "./model.js";
import { createWebChatApp } from "./routes.js";
import { ConversationStore } from "./store.js";

/** Settings of the web chat (the `channels.web` slice plus the HTTP access token). */
export interface WebChatConfig {
  /** Display name of the person using the page (default "you"). */
  userName?: string;
  /** User id of that person (default `web:local`); list it in `admins` to approve tool calls from the page. */
  userId?: string;
  /** The bot's display name; `@<name>` addresses it in group conversations (default "Switchboard"). */
  botName?: string;
  /** User ids whose approval reactions count (`channels.web.admins`); the page greys the buttons out for others. */
  admins?: readonly string[];
  /**
   * The HTTP access token (`http.token`). When set, every request must carry it (Bearer header, or
   * the cookie set by opening the page once with `?token=`). When unset, only requests addressed to a
   * loopback host name are served (`allowAnyHost` lifts that).
   */
  token?: string;
  /** Replaces the token check with the gateway's own (called for every request). */
  isAuthorized?: (request: Request) => boolean;
  /** Serve any Host header without a token (behind a proxy that authenticates). Default false. */
  allowAnyHost?: boolean;
  /** Most conversations kept in memory (default 200). */
  maxConversations?: number;
  /** Most messages kept per conversation (default 500). */
  maxMessagesPerConversation?: number;
  /** Longest message a person may send, in characters (default 20 000). */
  maxInputChars?: number;
  /** Minimum interval between edits of one message (default 250 ms: the page is local). */
  editIntervalMs?: number;
  /** How long one `typing()` shows the indicator (default 3000 ms). */
  typingDurationMs?: number;
  /** Interval of keep-alive comments on event streams (default 20 000 ms). */
  heartbeatMs?: number;
  logger?: AdapterLogger;
  /** Clock for timestamps (tests). */
  now?: () => number;
}

const silent: AdapterLogger = { debug() {}, info() {}, warn() {}, error() {} };
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Accepted reaction emoji: a short run of non-space characters, or `:name:`. */
const EMOJI = /^(?::[a-z0-9_+-]{1,40}:|[^\s\p{Cc}]{1,16})$/u;
/** Remembered client request ids (retries of a POST deliver nothing twice). */
const CLIENT_IDS_KEPT = 2000;

/** The text as chat platforms show it: without trailing whitespace or leading blank lines. */
const visible = (text: string) => text.replace(/^(?:[ \t]*\n)+/, "").trimEnd();

interface Delivery {
  messageId: string;
  delivered: boolean;
}

export class WebChatAdapter implements ChannelAdapter {
  readonly platform = "web" as const;
  readonly capabilities: AdapterCapabilities;
  readonly store: ConversationStore;
  readonly config: Readonly<WebChatConfig>;
  private readonly user: WebAuthor;
  private readonly bot: WebAuthor;
  private readonly log: AdapterLogger;
  private readonly maxInput: number;
  private handlers: InboundHandlers | undefined;
  private state: ConnectionStatus | undefined;
  private commandList: WebCommand[] = [];
  private readonly deliveries = new Map<string, Delivery>();
  private inFlight = 0;
  private idle: (() => void) | undefined;
  private readonly stopListeners = new Set<() => void>();
  private openStreams = 0;
  private reactionSeq = 0;

  constructor(config: WebChatConfig = {}) {
    this.config = config;
    this.store = new ConversationStore({
      ...(config.maxConversations !== undefined ? { maxConversations: config.maxConversations } : {}),
      ...(config.maxMessagesPerConversation !== undefined
        ? { maxMessagesPerConversation: config.maxMessagesPerConversation }
        : {}),
      ...(config.now ? { now: config.now } : {}),
    });
    this.user = { id: config.userId ?? "web:local", name: config.userName ?? "you", isBot: false };
    this.bot = { id: "web:bot", name: config.botName ?? "Switchboard", isBot: true };
    this.log = config.logger ?? silent;
    this.maxInput = config.maxInputChars ?? 20_000;
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

  get started(): boolean {
    return this.handlers !== undefined;
  }

  async start(handlers: InboundHandlers): Promise<void> {
    this.handlers = handlers;
    this.state = { name: "web:http", state: "connected", since: this.store.now() };
  }

  /** Stops delivering, ends every open event stream, and waits for handler calls in progress. */
  async stop(): Promise<void> {
    if (!this.handlers) return;
    this.handlers = undefined;
    this.state = { name: "web:http", state: "stopped", since: this.store.now() };
    for (const l of [...this.stopListeners]) l();
    if (this.inFlight > 0) await new Promise<void>((r) => (this.idle = r));
  }

  connections(): ConnectionStatus[] {
    if (!this.state) return [];
    return [{ ...this.state, detail: `${this.openStreams} page(s) open` }];
  }

  /**
   * Calls `listener` with every change of the chat (what the page sees) until the returned function
   * is called. Used by the event streams and by tests.
   */
  subscribe(listener: (event: WebChatEvent) => void): () => void {
    return this.store.subscribe(listener);
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

  // ── outbound ────────────────────────────────────────────────────────────

  async post(threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    const conversationId = conversationOf(threadKey);
    this.checkText(text);
    if (!this.store.get(conversationId)) this.store.create({ id: conversationId, title: "Conversation" });
    return this.store.add(conversationId, this.bot, visible(text), opts.format ?? "markdown").ref;
  }

  async edit(ref: MessageRef, text: string, opts: EditOptions = {}): Promise<void> {
    const { messageId } = this.locate(ref);
    this.checkText(text);
    this.store.edit(messageId, visible(text), opts.format ?? "markdown");
  }

  async delete(ref: MessageRef): Promise<void> {
    const { messageId } = this.locate(ref);
    this.store.remove(messageId);
  }

  async react(ref: MessageRef, emoji: string): Promise<void> {
    this.store.react(this.locate(ref).messageId, emoji, "bot", true);
  }

  async unreact(ref: MessageRef, emoji: string): Promise<void> {
    this.store.react(this.locate(ref).messageId, emoji, "bot", false);
  }

  async typing(threadKey: string): Promise<void> {
    const conversationId = conversationOf(threadKey);
    if (this.store.get(conversationId)) this.store.typing(conversationId, this.capabilities.typingDurationMs);
  }

  /** Ends the indicator on every open page at once (a typing event of zero duration). */
  async stopTyping(threadKey: string): Promise<void> {
    const conversationId = conversationOf(threadKey);
    if (this.store.get(conversationId)) this.store.typing(conversationId, 0);
  }

  channelOf(threadKey: string): string {
    return threadKeyOf(conversationOf(threadKey));
  }

  /** The conversation's messages before `before` (all when absent), the last `limit`, oldest first. */
  async fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    const messages = this.store.messages(conversationOf(threadKey)) ?? [];
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
  createConversation(opts: { title?: string; kind?: ConversationKind } = {}): WebConversation {
    return this.store.create(opts);
  }

  /**
   * The page's user typed `text` into a conversation: store it, then deliver it as a command or a
   * message. `clientId` (the page's id for this send) makes a retried request deliver nothing twice;
   * a retry after a failed delivery delivers the same message again. Resolves once the handler has
   * taken it; throws `WebInputError` for bad input or a failed delivery.
   */
  async receiveText(conversationId: string, text: string, clientId?: string): Promise<WebMessage> {
    this.requireStarted();
    const conversation = this.store.get(conversationId);
    if (!conversation) throw new WebInputError(404, `There is no conversation ${conversationId}.`);
    const key = clientId ? `${conversationId}:${clientId}` : undefined;
    const earlier = key ? this.deliveries.get(key) : undefined;
    const known = earlier ? this.store.message(earlier.messageId) : undefined;
    if (earlier?.delivered && known) return known;
    if (!text.trim()) throw new WebInputError(400, "The message is empty.");
    if (text.length > this.maxInput)
      throw new WebInputError(
        413,
        `The message has ${text.length} characters; the web chat accepts at most ${this.maxInput}.`,
      );
    const message = known ?? this.store.add(conversationId, this.user, text, "plain");
    if (key) this.remember(key, { messageId: message.id, delivered: false });
    await this.deliver(this.dispatchText(conversation, message));
    if (key) this.remember(key, { messageId: message.id, delivered: true });
    return this.store.message(message.id) ?? message;
  }

  /**
   * The page's user added (or removed) a reaction. A request that changes nothing (the reaction is
   * already there) delivers nothing, so retries are harmless.
   */
  async receiveReaction(messageId: string, emoji: string, added: boolean): Promise<WebMessage> {
    this.requireStarted();
    if (!EMOJI.test(emoji)) throw new WebInputError(400, "The emoji must be one emoji or a :name:.");
    const message = this.store.message(messageId);
    if (!message) throw new WebInputError(404, `There is no message ${messageId}.`);
    const changed = this.store.react(messageId, emoji, { userId: this.user.id }, added);
    if (changed) {
      const reaction: InboundReaction = {
        platform: "web",
        threadKey: threadKeyOf(message.conversationId),
        eventId: `web:reaction:${messageId}:${++this.reactionSeq}:${this.store.now()}`,
        messageId: message.ref,
        channelId: message.conversationId,
        emoji,
        user: { ...this.user },
        added,
        timestamp: this.store.now(),
      };
      await this.deliver(async (h) => h.onReaction(reaction));
    }
    return this.store.message(messageId) ?? message;
  }

  private dispatchText(conversation: WebConversation, message: WebMessage) {
    return async (h: InboundHandlers): Promise<void> => {
      const line = interpretLine(message.text, conversation.kind, this.bot.name);
      const base = {
        platform: "web" as const,
        threadKey: conversation.threadKey,
        user: { ...this.user },
        channelId: conversation.id,
        isDirect: conversation.kind === "direct",
        timestamp: message.createdAt,
      };
      if (line.kind === "command") {
        const command: InboundCommand = {
          ...base,
          eventId: `web:command:${conversation.id}:${message.id}`,
          name: line.name,
          args: line.args,
          messageId: message.ref,
        };
        await h.onCommand(command);
        return;
      }
      if (!line.mentioned || !line.text) return;
      const inbound: InboundMessage = {
        ...base,
        eventId: `web:message:${conversation.id}:${message.id}`,
        messageId: message.ref,
        text: line.text,
        attachments: [],
        mentioned: true,
      };
      await h.onMessage(inbound);
    };
  }

  private async deliver(call: (h: InboundHandlers) => Promise<void>): Promise<void> {
    const h = this.handlers;
    if (!h) throw new WebInputError(503, "The web chat is not running; start Switchboard and try again.");
    this.inFlight++;
    try {
      await call(h);
    } catch (err) {
      this.log.error({ err: errorText(err) }, "web chat: inbound handler failed");
      throw new WebInputError(502, "Switchboard could not take the message; send it again in a moment.");
    } finally {
      this.inFlight--;
      if (this.inFlight === 0 && this.idle) {
        const done = this.idle;
        this.idle = undefined;
        done();
      }
    }
  }

  private requireStarted(): void {
    if (!this.handlers)
      throw new WebInputError(503, "The web chat is not running; start Switchboard and try again.");
  }

  private remember(key: string, delivery: Delivery): void {
    this.deliveries.delete(key);
    this.deliveries.set(key, delivery);
    while (this.deliveries.size > CLIENT_IDS_KEPT) {
      const oldest = this.deliveries.keys().next().value;
      if (oldest === undefined) break;
      this.deliveries.delete(oldest);
    }
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

  /** The message behind a reference, or `ChannelError("not_found")`. */
  private locate(ref: MessageRef): { conversationId: string; messageId: string } {
    const parsed = parseMessageRef(ref);
    if (this.store.message(parsed.messageId)?.conversationId !== parsed.conversationId)
      throw new ChannelError("not_found", `web chat message ${ref} does not exist (any more)`, "web");
    return parsed;
  }
}

/** Builds the web chat adapter from its config slice. */
export const createWebChatAdapter: ChannelAdapterFactory<WebChatConfig> = (config) =>
  new WebChatAdapter(config);
