/**
 * The Telegram channel: grammY's Bot API client for outbound calls, long polling (held by one
 * gateway process through a `ConnectionLease`) or a webhook for inbound updates.
 *
 * Outbound calls work without `start()` (outbound-only mode for workers). Markdown is sent as
 * Telegram HTML and, when Telegram rejects the entities, sent again as plain text. Redelivered
 * updates are not deduplicated here: each event carries its update id as `eventId`, and the
 * runtime's event claim (the gateway's inbound pipeline) handles each id once.
 */

import { Api } from "grammy";
import type { ReactionTypeEmoji } from "grammy/types";
import { type Clock, systemClock } from "../../agent/clock.js";
import { errorMessage } from "../../agent/errors.js";
import { type StructuredLogger, silentLogger } from "../../agent/logger.js";
import { toPlainText, toTelegramHtml } from "../render/markdown.js";
import type {
  AdapterCapabilities,
  AttachmentRef,
  ChannelAdapter,
  ChannelRoute,
  CommandSpec,
  ConnectionLease,
  ConnectionStatus,
  CredentialProbe,
  DownloadedFile,
  DownloadOptions,
  EditOptions,
  HistoryMessage,
  InboundHandlers,
  KeyValueStore,
  MessageRef,
  OutgoingFile,
  PostOptions,
  RateRule,
  UploadOptions,
} from "../types.js";
import { toTelegramReaction } from "./emoji.js";
import { isEntityParseError, toChannelError } from "./errors.js";
import { downloadTelegramFile, sendTelegramFile, TELEGRAM_FILE_LIMITS } from "./files.js";
import { describingFetch } from "./http.js";
import { botIdOfToken, messageRefOf, parseMessageRef, parseThreadKey, threadKeyOf } from "./ids.js";
import { type BotIdentity, type InboundEvent, normalizeUpdate } from "./inbound.js";
import { runPolling } from "./polling.js";
import { telegramProbe } from "./probe.js";
import { RecentMessages } from "./recent-messages.js";
import { createWebhookHandler, type NodeRequestHandler } from "./webhook.js";

/** The updates Switchboard needs; `message_reaction` must be asked for explicitly. */
const TELEGRAM_ALLOWED_UPDATES = ["message", "message_reaction"];

export interface TelegramAdapterConfig {
  /** Bot token from @BotFather. Never logged. */
  token: string;
  /** Bot API base URL (default Telegram's; a local Bot API server or a test fake). */
  apiRoot?: string;
  /** Inbound mode (default `polling`). */
  mode?: "polling" | "webhook";
  /**
   * Longest inbound message text in characters (default 20,000, as the web chat). Longer text is
   * cut and ends with a visible "[… message truncated: N characters over the limit]".
   */
  maxInboundChars?: number;
  /**
   * Webhook mode: the public URL Telegram posts to, the secret it must send back, and the path the
   * gateway serves the webhook on (`routes()`; default `/telegram/webhook`).
   */
  webhook?: { url: string; secretToken: string; path?: string };
  /** Polling: makes the poller unique across gateway processes. Without it, poll unconditionally. */
  lease?: ConnectionLease;
  /** Shared store for which thread a message belongs to (needed when several processes post). */
  store?: KeyValueStore;
  /** Key prefix for `store` (default `DEFAULT_KEY_PREFIX`). */
  keyPrefix?: string;
  clock?: Clock;
  logger?: StructuredLogger;
  /** Long-poll timeout in seconds (default 25; 0 answers at once, and empty answers are then spaced out). */
  pollTimeoutSeconds?: number;
  /** Messages remembered per chat for thread context (default 200). */
  historyPerChat?: number;
  /** Edit interval in private chats (default 1000 ms) and in groups (default 3000 ms). */
  editIntervalMs?: number;
  groupEditIntervalMs?: number;
  /** Skip `getMe` at start by giving the bot's username. */
  botUsername?: string;
}

const PRIVATE_RULE: RateRule = { limit: 30, windowMs: 30_000 };
const GROUP_RULE: RateRule = { limit: 20, windowMs: 60_000 };

export class TelegramAdapter implements ChannelAdapter {
  readonly platform = "telegram" as const;
  readonly capabilities: AdapterCapabilities;
  /** The grammY API client (for the gateway's own needs, e.g. file downloads). Never leaves this folder's users. */
  private readonly api: Api;
  private readonly log: StructuredLogger;
  private readonly clock: Clock;
  private readonly recent: RecentMessages;
  private readonly botId: number;
  private bot: BotIdentity | undefined;
  private handlers: InboundHandlers | undefined;
  private stopper: AbortController | undefined;
  private polling: Promise<void> | undefined;
  private status: ConnectionStatus | undefined;
  private webhookHandler: NodeRequestHandler | undefined;

  constructor(private readonly config: TelegramAdapterConfig) {
    const id = botIdOfToken(config.token);
    if (id === undefined) {
      throw new Error("Telegram token looks wrong: expected '<bot id>:<secret>' as given by @BotFather.");
    }
    if (config.mode === "webhook" && !config.webhook?.secretToken) {
      throw new Error("Telegram webhook mode needs webhook.url and webhook.secretToken in the config.");
    }
    this.botId = id;
    this.api = new Api(config.token, {
      ...(config.apiRoot ? { apiRoot: config.apiRoot } : {}),
      // biome-ignore lint/suspicious/noExplicitAny: grammY types `fetch` as the DOM fetch; it only calls `.json()`.
      fetch: describingFetch(config.token) as any,
    });
    this.log = config.logger ?? silentLogger;
    this.clock = config.clock ?? systemClock;
    this.recent = new RecentMessages({
      ...(config.historyPerChat ? { perChat: config.historyPerChat } : {}),
      ...(config.store ? { store: config.store } : {}),
      ...(config.keyPrefix ? { prefix: config.keyPrefix } : {}),
      onShareError: (err) => this.log.warn({ err }, "could not share where an inbound message sits"),
    });
    this.capabilities = {
      maxMessageLength: 4096,
      editIntervalMs: config.editIntervalMs ?? 1000,
      markdown: "telegram-html",
      nativeCommands: true,
      reactions: true,
      edits: true,
      typingDurationMs: 5000,
      history: true,
      files: TELEGRAM_FILE_LIMITS,
    };
  }

  // ---- inbound --------------------------------------------------------------------------

  async start(handlers: InboundHandlers): Promise<void> {
    if (this.stopper) throw new Error("TelegramAdapter.start() called twice; call stop() first.");
    this.handlers = handlers;
    this.stopper = new AbortController();
    this.setState("connecting");
    try {
      this.bot = {
        id: this.botId,
        username: this.config.botUsername ?? (await this.api.getMe()).username,
      };
    } catch (err) {
      const e = toChannelError(err, "getMe");
      this.setState("failed", e.message);
      this.stopper = undefined;
      throw e;
    }
    if (this.config.mode === "webhook") {
      const hook = this.config.webhook as NonNullable<TelegramAdapterConfig["webhook"]>;
      this.webhookHandler = createWebhookHandler({
        secretToken: hook.secretToken,
        log: this.log,
        onUpdate: (u) => this.handleUpdate(u),
      });
      try {
        await this.api.setWebhook(hook.url, {
          secret_token: hook.secretToken,
          // biome-ignore lint/suspicious/noExplicitAny: grammY types allowed_updates as a literal union.
          allowed_updates: TELEGRAM_ALLOWED_UPDATES as any,
        });
      } catch (err) {
        const e = toChannelError(err, "setWebhook");
        this.setState("failed", e.message);
        throw e;
      }
      this.setState("connected");
      return;
    }
    const signal = this.stopper.signal;
    this.polling = (async () => {
      let reachable = false;
      try {
        await this.api.deleteWebhook();
        reachable = true;
      } catch (err) {
        this.log.warn({ err: toChannelError(err, "deleteWebhook") }, "could not remove a webhook");
      }
      await runPolling(
        {
          api: this.api,
          allowedUpdates: TELEGRAM_ALLOWED_UPDATES,
          timeoutSeconds: this.config.pollTimeoutSeconds ?? 25,
          reachable,
          clock: this.clock,
          log: this.log,
          onUpdate: (u) => this.handleUpdate(u),
          onState: (s, d) => this.setState(s, d),
          ...(this.config.lease ? { lease: this.config.lease } : {}),
        },
        signal,
      );
    })().catch((err) => {
      this.setState("failed", errorMessage(err));
      this.log.error({ err }, "Telegram polling ended");
    });
  }

  async stop(): Promise<void> {
    this.stopper?.abort();
    await this.polling;
    this.polling = undefined;
    this.stopper = undefined;
    this.webhookHandler = undefined;
    this.setState("stopped");
  }

  connections(): ConnectionStatus[] {
    return this.status ? [{ ...this.status }] : [];
  }

  /**
   * The HTTP handler for webhook mode (mount it at the path of `webhook.url`). Before `start()` it
   * answers 503 so Telegram retries.
   */
  readonly webhookCallback: NodeRequestHandler = (req, res) => {
    if (this.webhookHandler) {
      this.webhookHandler(req, res);
      return;
    }
    res.writeHead(503);
    res.end();
    req.resume();
  };

  /** Webhook mode: the webhook route (`webhookCallback` at `webhook.path`). */
  routes(): ChannelRoute[] {
    if (this.config.mode !== "webhook") return [];
    return [
      {
        method: "POST",
        path: this.config.webhook?.path ?? "/telegram/webhook",
        handle: this.webhookCallback,
      },
    ];
  }

  /** `getMe` with the bot token. */
  probe(): CredentialProbe[] {
    return [telegramProbe(this.config.token, this.config.apiRoot)];
  }

  private setState(state: ConnectionStatus["state"], detail?: string): void {
    const name = this.config.mode === "webhook" ? "telegram:webhook" : "telegram:polling";
    this.status = { name, state, since: this.clock.now(), ...(detail ? { detail } : {}) };
  }

  /** Handle one raw update. Resolves false when it should be delivered again (webhook retry). */
  private async handleUpdate(raw: unknown): Promise<boolean> {
    const bot = this.bot;
    const handlers = this.handlers;
    const id = (raw as { update_id?: unknown } | null)?.update_id;
    if (!bot || !handlers) return false;
    if (typeof id !== "number") {
      this.log.warn({}, "Telegram sent an update without update_id; ignored");
      return true;
    }
    let events: InboundEvent[];
    try {
      events = await normalizeUpdate(raw, bot, this.recent, this.config.maxInboundChars);
    } catch (err) {
      this.log.warn({ updateId: id, err }, "malformed Telegram update ignored");
      return true;
    }
    let ok = true;
    for (const e of events) {
      try {
        if (e.kind === "message") await handlers.onMessage(e.event);
        else if (e.kind === "command") await handlers.onCommand(e.event);
        else await handlers.onReaction(e.event);
      } catch (err) {
        ok = false;
        this.log.error({ updateId: id, err }, "inbound handler failed");
      }
    }
    return ok;
  }

  // ---- outbound -------------------------------------------------------------------------

  channelOf(threadKey: string): string {
    return `telegram:${parseThreadKey(threadKey).chatId}`;
  }

  /** Private chats have positive ids, groups negative ones. */
  private isGroup(chatId: number): boolean {
    return chatId < 0;
  }

  editIntervalFor(threadKey: string): number {
    return this.isGroup(parseThreadKey(threadKey).chatId)
      ? (this.config.groupEditIntervalMs ?? 3000)
      : this.capabilities.editIntervalMs;
  }

  /** A group's (or forum topic's) top level, root 0, holds its defaults; a private chat is one conversation. */
  channelDefaultsKey(threadKey: string): string | undefined {
    const t = parseThreadKey(threadKey);
    return this.isGroup(t.chatId) ? threadKeyOf({ chatId: t.chatId, topic: t.topic, root: 0 }) : undefined;
  }

  rateRuleFor(threadKey: string): RateRule {
    return this.isGroup(parseThreadKey(threadKey).chatId) ? GROUP_RULE : PRIVATE_RULE;
  }

  /** Where a message into `threadKey` goes: its topic, and the message it replies to. */
  private placement(threadKey: string, opts: PostOptions) {
    const t = parseThreadKey(threadKey);
    const replyTo = opts.replyTo ? parseMessageRef(opts.replyTo).messageId : t.root || undefined;
    const other = {
      ...(t.topic ? { message_thread_id: t.topic } : {}),
      ...(replyTo ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
      ...(opts.silent ? { disable_notification: true } : {}),
    };
    return { t, other };
  }

  /** `getFile`, then the file's bytes; see files.ts. */
  download(file: AttachmentRef, opts?: DownloadOptions): Promise<DownloadedFile> {
    return downloadTelegramFile(this.api, this.config.token, this.config.apiRoot, file, opts);
  }

  /** `sendPhoto` for pictures, `sendDocument` for other files; see files.ts. */
  async uploadFile(threadKey: string, file: OutgoingFile, opts: UploadOptions = {}): Promise<MessageRef> {
    const { t, other } = this.placement(threadKey, opts);
    const msg = await sendTelegramFile(this.api, t.chatId, file, opts.caption, other);
    return messageRefOf(t.chatId, msg.message_id);
  }

  async post(threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    const { t, other } = this.placement(threadKey, opts);
    const msg = await this.formatted("sendMessage", text, opts.format, (body, html) =>
      this.api.sendMessage(t.chatId, body, { ...other, ...(html ? { parse_mode: "HTML" as const } : {}) }),
    );
    const bot = this.bot ?? { id: this.botId, username: this.config.botUsername ?? "" };
    // Not awaited: the ref goes back to the caller in the tick Telegram answered, so the render
    // journal records it before anything else runs (a worker killed later still leaves the id).
    // Remembering where the message sits is for later replies to it; a failure only costs that.
    void this.recent
      .add(
        {
          chatId: t.chatId,
          messageId: msg.message_id,
          topic: t.topic,
          root: t.root,
          user: { id: String(bot.id), isBot: true, ...(bot.username ? { name: bot.username } : {}) },
          text,
          timestamp: this.clock.now(),
          fromBot: true,
        },
        true,
      )
      .catch((err: unknown) => this.log.warn({ err }, "could not share where a posted message sits"));
    return messageRefOf(t.chatId, msg.message_id);
  }

  async edit(ref: MessageRef, text: string, opts: EditOptions = {}): Promise<void> {
    const { chatId, messageId } = parseMessageRef(ref);
    try {
      await this.formatted("editMessageText", text, opts.format, (body, html) =>
        this.api.editMessageText(chatId, messageId, body, html ? { parse_mode: "HTML" } : {}),
      );
    } catch (err) {
      if (toChannelError(err, "editMessageText").kind === "not_modified") return;
      throw err;
    }
    const seen = this.recent.find(chatId, messageId);
    if (seen) seen.text = text;
  }

  async delete(ref: MessageRef): Promise<void> {
    const { chatId, messageId } = parseMessageRef(ref);
    await this.call("deleteMessage", () => this.api.deleteMessage(chatId, messageId));
  }

  async react(ref: MessageRef, emoji: string): Promise<void> {
    const { chatId, messageId } = parseMessageRef(ref);
    const reaction = { type: "emoji", emoji: toTelegramReaction(emoji) } as ReactionTypeEmoji;
    await this.call("setMessageReaction", () => this.api.setMessageReaction(chatId, messageId, [reaction]));
  }

  /** Bots hold one reaction per message on Telegram, so removing any removes it. */
  async unreact(ref: MessageRef, _emoji: string): Promise<void> {
    const { chatId, messageId } = parseMessageRef(ref);
    await this.call("setMessageReaction", () => this.api.setMessageReaction(chatId, messageId, []));
  }

  async typing(threadKey: string): Promise<void> {
    const t = parseThreadKey(threadKey);
    await this.call("sendChatAction", () =>
      this.api.sendChatAction(t.chatId, "typing", t.topic ? { message_thread_id: t.topic } : {}),
    );
  }

  async registerCommands(commands: CommandSpec[]): Promise<void> {
    const list = commands.map((c) => ({
      command: c.name.toLowerCase(),
      description: c.description.slice(0, 256),
    }));
    await this.call("setMyCommands", () => this.api.setMyCommands(list));
  }

  /**
   * Earlier messages of the thread that this process saw (Telegram bots cannot fetch history): the
   * reply chain in groups, the chat in DMs. Pass the new message as `before` to exclude it.
   */
  async fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    const t = parseThreadKey(threadKey);
    const beforeId = before ? parseMessageRef(before).messageId : undefined;
    return this.recent.thread(t.chatId, t.topic, t.root, limit, beforeId).map((m) => ({
      messageId: messageRefOf(m.chatId, m.messageId),
      user: m.user,
      text: m.text,
      timestamp: m.timestamp,
      fromBot: m.fromBot,
    }));
  }

  private async call<T>(method: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toChannelError(err, method);
    }
  }

  /** Send markdown as HTML, falling back to plain text when Telegram rejects the entities. */
  private async formatted<T>(
    method: string,
    text: string,
    format: "markdown" | "plain" | undefined,
    send: (body: string, html: boolean) => Promise<T>,
  ): Promise<T> {
    if (format === "plain") return this.call(method, () => send(text, false));
    try {
      return await send(toTelegramHtml(text), true);
    } catch (err) {
      if (!isEntityParseError(err)) throw toChannelError(err, method);
      this.log.warn({ err: toChannelError(err, method) }, "Telegram rejected the HTML; sending plain text");
      return this.call(method, () => send(toPlainText(text), false));
    }
  }
}
