/**
 * The Slack channel adapter: Bolt for inbound events (Socket Mode or the HTTP Events API), the Web
 * API for everything outbound. See docs/slack.md for the app setup and the choices made here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { App, HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import { type StructuredLogger, silentLogger } from "../../agent/logger.js";
import {
  type AdapterCapabilities,
  type AttachmentRef,
  type ChannelAdapter,
  ChannelError,
  type ChannelRoute,
  type ConnectionStatus,
  type CredentialProbe,
  type DownloadedFile,
  type DownloadOptions,
  type EditOptions,
  type HistoryMessage,
  type InboundHandlers,
  type KeyValueStore,
  type MessageRef,
  type OutgoingFile,
  type PostOptions,
  type RateRule,
  type UploadOptions,
} from "../types.js";
import { BoltLogger } from "./bolt-logger.js";
import { SlackEvents } from "./events.js";
import { SLACK_FILE_LIMITS, SlackFiles } from "./files.js";
import { acknowledgeMalformedEvent, guardRequestListener } from "./http-guard.js";
import { decodeMessageRef, decodeThreadKey, encodeMessageRef, encodeThreadKey, isDmChannel } from "./ids.js";
import { findPostedByKey, postMetadata, postThread } from "./posted.js";
import { slackProbes } from "./probe.js";
import { slackReactionName, slackText } from "./text.js";
import { ThreadMembership } from "./threads.js";
import { type SlackIdentity, SlackWeb } from "./web.js";

/** Socket Mode: an outbound WebSocket; no public URL needed. Several processes may connect. */
export interface SlackSocketModeConfig {
  mode: "socket";
  /** App-level token (`xapp-…`) with `connections:write`. */
  appToken: string;
}

/**
 * HTTP Events API: Slack POSTs signed requests to `path`. Mount `handleHttp` in the gateway's HTTP
 * server, or set `listen` to let the adapter run its own server.
 */
export interface SlackHttpConfig {
  mode: "http";
  signingSecret: string;
  /** Request path for events, commands and interactivity (default `/slack/events`). */
  path?: string;
  /** Listen on this address instead of being mounted. */
  listen?: { port: number; host?: string };
}

export interface SlackAdapterConfig {
  /** Bot token (`xoxb-…`). */
  botToken: string;
  /** How events arrive; absent: outbound-only (a worker that posts and edits). */
  inbound?: SlackSocketModeConfig | SlackHttpConfig;
  /** Web API base URL (default `https://slack.com/api/`); tests point it at a fake. */
  apiUrl?: string;
  logger?: StructuredLogger;
  /**
   * Longest inbound message text in characters (default 20,000, as the web chat). Longer text is
   * cut and ends with a visible "[… message truncated: N characters over the limit]"; attachments
   * are kept.
   */
  maxInboundChars?: number;
  /**
   * Longest source text per message (default 8,000). Slack accepts 40,000 characters, but escaping
   * `&<>` can make the sent text up to five times longer than the source.
   */
  maxMessageLength?: number;
  /** Minimum ms between edits of one message (default 1000). */
  editIntervalMs?: number;
  /** Budget for posts and edits per channel (default 5 per 5 s: Slack's 1 post/s with bursts). */
  rateRule?: RateRule;
  /**
   * Whether the bot takes part in a thread (an agent session exists for it). Unmentioned replies in
   * channel threads are delivered only when true. Default: threads this process saw the bot
   * mentioned or post in, else a `conversations.replies` look-up (cached).
   */
  isBotThread?: (threadKey: string) => boolean | Promise<boolean>;
  /**
   * Shared store for which threads the bot takes part in, so a thread reply reaching one process
   * is recognised when another process posted in the thread.
   */
  store?: KeyValueStore;
  /** Key prefix for `store` (default `DEFAULT_KEY_PREFIX`). */
  keyPrefix?: string;
  /** Known identity, to skip `auth.test`. */
  identity?: SlackIdentity;
  /** Resolve display names with `users.info` (needs `users:read`; default true). */
  resolveUserNames?: boolean;
}

export class SlackAdapter implements ChannelAdapter {
  readonly platform = "slack" as const;
  readonly capabilities: AdapterCapabilities;
  private readonly web: SlackWeb;
  private readonly files: SlackFiles;
  private readonly log: StructuredLogger;
  private app: App | undefined;
  private httpReceiver: HTTPReceiver | undefined;
  private listening = false;
  private status: ConnectionStatus | undefined;
  private readonly threads: ThreadMembership;
  private events: SlackEvents | undefined;

  constructor(private readonly config: SlackAdapterConfig) {
    this.log = config.logger ?? silentLogger;
    this.web = new SlackWeb(config.botToken, config.apiUrl, this.log, config.identity);
    this.files = new SlackFiles(this.web, config.botToken, config.apiUrl);
    this.threads = new ThreadMembership({
      web: this.web,
      log: this.log,
      ...(config.store ? { store: config.store } : {}),
      ...(config.keyPrefix ? { prefix: config.keyPrefix } : {}),
      ...(config.isBotThread ? { isBotThread: config.isBotThread } : {}),
    });
    this.capabilities = {
      maxMessageLength: config.maxMessageLength ?? 8000,
      editIntervalMs: config.editIntervalMs ?? 1000,
      markdown: "slack-mrkdwn",
      nativeCommands: true,
      reactions: true,
      edits: true,
      typingDurationMs: 0,
      history: true,
      files: SLACK_FILE_LIMITS,
    };
  }

  // ---- inbound ---------------------------------------------------------------------------

  async start(handlers: InboundHandlers): Promise<void> {
    const inbound = this.config.inbound;
    if (!inbound)
      throw new Error(
        "Slack adapter: start() needs `inbound` (Socket Mode with an app token, or HTTP with a signing secret); outbound-only adapters need no start()",
      );
    if (this.app) throw new Error("Slack adapter: already started");
    const name = inbound.mode === "socket" ? "slack:socket" : "slack:http";
    this.setStatus(name, "connecting");
    const me = await this.web.identity();
    const logger = new BoltLogger(this.log);
    const clientOptions = {
      ...(this.config.apiUrl ? { slackApiUrl: this.config.apiUrl } : {}),
      retryConfig: { retries: 0 },
    };
    let receiver: HTTPReceiver | SocketModeReceiver;
    if (inbound.mode === "socket") {
      const socket = new SocketModeReceiver({
        appToken: inbound.appToken,
        logger,
        installerOptions: { clientOptions },
      });
      socket.client.on("connected", () => this.setStatus(name, "connected"));
      socket.client.on("reconnecting", () => this.setStatus(name, "connecting"));
      socket.client.on("disconnected", () => {
        if (this.status?.state !== "stopped")
          this.setStatus(name, "connecting", "disconnected; reconnecting");
      });
      receiver = socket;
    } else {
      this.httpReceiver = new HTTPReceiver({
        signingSecret: inbound.signingSecret,
        endpoints: [inbound.path ?? "/slack/events"],
        logger,
        processBeforeResponse: false,
        processEventErrorHandler: acknowledgeMalformedEvent(this.log),
      });
      // Bolt's own server (the `listen` option) calls this property per request, so the guard
      // covers both the mounted and the listening receiver.
      this.httpReceiver.requestListener = guardRequestListener(
        this.httpReceiver.requestListener,
        inbound.signingSecret,
        this.log,
      );
      receiver = this.httpReceiver;
    }
    const app = new App({
      token: this.config.botToken,
      receiver,
      botId: me.botId,
      botUserId: me.userId,
      tokenVerificationEnabled: false,
      ignoreSelf: true,
      logger,
      clientOptions,
    });
    this.events = new SlackEvents({
      web: this.web,
      threads: this.threads,
      log: this.log,
      ...(this.config.resolveUserNames === false ? { resolveUserNames: false } : {}),
      ...(this.config.maxInboundChars !== undefined ? { maxInboundChars: this.config.maxInboundChars } : {}),
    });
    this.events.register(app, me, handlers);
    this.app = app;
    try {
      if (inbound.mode === "socket") {
        await app.start();
      } else if (inbound.listen) {
        await app.start({ port: inbound.listen.port, host: inbound.listen.host ?? "127.0.0.1" });
        this.listening = true;
      }
      this.setStatus(name, "connected");
    } catch (err) {
      this.setStatus(name, "failed", (err as Error).message);
      this.app = undefined;
      throw err;
    }
  }

  /** `auth.test` with the bot token; in Socket Mode also `apps.connections.open` with the app token. */
  probe(): CredentialProbe[] {
    const inbound = this.config.inbound;
    return slackProbes(
      this.config.botToken,
      inbound?.mode === "socket" ? inbound.appToken : undefined,
      this.config.apiUrl,
    );
  }

  /** HTTP mode (mounted, not `listen`): the Events API endpoint at `path`. */
  routes(): ChannelRoute[] {
    const inbound = this.config.inbound;
    if (inbound?.mode !== "http" || inbound.listen) return [];
    return [
      {
        method: "POST",
        path: inbound.path ?? "/slack/events",
        handle: (req, res) => {
          if (!this.handleHttp(req, res)) res.writeHead(404).end();
        },
      },
    ];
  }

  /**
   * Node request handler for the HTTP Events API, to mount in the gateway's own server: answers
   * requests to the configured path (signature-checked: 401 when forged) and returns true; returns
   * false for other paths so the caller routes them. Before `start()` it answers 503.
   */
  handleHttp(req: IncomingMessage, res: ServerResponse): boolean {
    const inbound = this.config.inbound;
    if (inbound?.mode !== "http") return false;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== (inbound.path ?? "/slack/events")) return false;
    if (!this.httpReceiver || !this.app || this.status?.state === "stopped") {
      res.writeHead(503).end();
      return true;
    }
    try {
      this.httpReceiver.requestListener(req, res);
    } catch (err) {
      this.log.warn({ err }, "slack: could not handle HTTP request");
      if (!res.headersSent) res.writeHead(500).end();
    }
    return true;
  }

  async stop(): Promise<void> {
    const app = this.app;
    if (!app) return;
    if (this.status) this.setStatus(this.status.name, "stopped");
    this.app = undefined;
    if (this.config.inbound?.mode === "socket" || this.listening) {
      try {
        await app.stop();
      } catch (err) {
        this.log.warn({ err }, "slack: error while stopping");
      }
    }
    this.listening = false;
    this.httpReceiver = undefined;
    await this.events?.close();
    this.events = undefined;
  }

  connections(): ConnectionStatus[] {
    return this.status ? [{ ...this.status }] : [];
  }

  private setStatus(name: string, state: ConnectionStatus["state"], detail?: string): void {
    this.status = { name, state, since: Date.now(), ...(detail ? { detail } : {}) };
  }

  // ---- outbound --------------------------------------------------------------------------

  async post(threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    const t = decodeThreadKey(threadKey);
    const threadTs = await postThread(this.web, threadKey, opts.replyTo);
    const r = await this.web.call("chat.postMessage", {
      channel: t.channel,
      text: slackText(text, opts.format),
      unfurl_links: false,
      unfurl_media: false,
      ...(threadTs ? { thread_ts: threadTs } : {}),
      // What `findPosted` looks for: a recovering worker finds this message instead of posting again.
      ...(opts.idempotencyKey ? { metadata: postMetadata(opts.idempotencyKey) } : {}),
    });
    const ts = typeof r.ts === "string" ? r.ts : undefined;
    if (!ts) throw new ChannelError("other", "Slack chat.postMessage returned no message ts", "slack");
    this.web.rememberThread(t.channel, ts, threadTs);
    if (threadTs) await this.threads.join(encodeThreadKey(t.team, t.channel, threadTs), ts);
    return encodeMessageRef(t.team, t.channel, ts);
  }

  /** The bot's message posted with `idempotencyKey` `key`, by its metadata (see `findPostedByKey`). */
  findPosted(threadKey: string, key: string, opts: { replyTo?: MessageRef } = {}) {
    return findPostedByKey(this.web, threadKey, key, opts.replyTo);
  }

  /** A file's `url_private`, with the bot token (scope `files:read`); see files.ts. */
  download(file: AttachmentRef, opts?: DownloadOptions): Promise<DownloadedFile> {
    return this.files.download(file, opts);
  }

  /** Slack's external upload flow (scope `files:write`) into the thread; see files.ts. */
  uploadFile(threadKey: string, file: OutgoingFile, opts?: UploadOptions): Promise<MessageRef> {
    return this.files.upload(threadKey, file, opts);
  }

  /** The share of the staged file `opts.staged` in the thread (`files.info`), if it happened. */
  findUploaded(threadKey: string, _key: string, opts?: { replyTo?: MessageRef; staged?: string }) {
    return this.files.findUploaded(threadKey, opts);
  }

  async edit(ref: MessageRef, text: string, opts: EditOptions = {}): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.web.call("chat.update", {
      channel: r.channel,
      ts: r.ts,
      text: slackText(text, opts.format),
    });
  }

  async delete(ref: MessageRef): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.web.call("chat.delete", { channel: r.channel, ts: r.ts });
  }

  async react(ref: MessageRef, emoji: string): Promise<void> {
    const r = decodeMessageRef(ref);
    const name = slackReactionName(emoji);
    await this.web.call("reactions.add", { channel: r.channel, timestamp: r.ts, name }, ["already_reacted"]);
  }

  async unreact(ref: MessageRef, emoji: string): Promise<void> {
    const r = decodeMessageRef(ref);
    const name = slackReactionName(emoji);
    await this.web.call("reactions.remove", { channel: r.channel, timestamp: r.ts, name }, ["no_reaction"]);
  }

  /** Slack has no typing indicator for bots outside assistant threads: nothing to do. */
  async typing(threadKey: string): Promise<void> {
    decodeThreadKey(threadKey);
  }

  channelOf(threadKey: string): string {
    const t = decodeThreadKey(threadKey);
    return `slack:${t.team}:${t.channel}`;
  }

  rateRuleFor(): RateRule {
    return this.config.rateRule ?? { limit: 5, windowMs: 5000 };
  }

  /** A channel's top level (`slack:T:C:0`) holds its defaults; a DM is one conversation. */
  channelDefaultsKey(threadKey: string): string | undefined {
    const t = decodeThreadKey(threadKey);
    return isDmChannel(t.channel) ? undefined : encodeThreadKey(t.team, t.channel, undefined);
  }

  /** Earlier messages of the thread, with their authors' display names (`users.info`, cached) when allowed. */
  async fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    const t = decodeThreadKey(threadKey);
    const beforeTs = before ? decodeMessageRef(before).ts : undefined;
    const history = await this.web.history(t.team, t.channel, t.threadTs, limit, beforeTs);
    if (this.config.resolveUserNames === false) return history;
    const names = new Map<string, string | undefined>();
    for (const h of history) {
      if (h.fromBot || h.user.name || !/^[UW][A-Z0-9]+$/.test(h.user.id) || names.has(h.user.id)) continue;
      names.set(h.user.id, (await this.web.user(h.user.id)).name);
    }
    return history.map((h) => {
      const name = names.get(h.user.id);
      return name ? { ...h, user: { ...h.user, name } } : h;
    });
  }
}
