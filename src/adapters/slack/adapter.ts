/**
 * The Slack channel adapter: Bolt for inbound events (Socket Mode or the HTTP Events API), the Web
 * API for everything outbound. See docs/slack.md for the app setup and the choices made here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { App, HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import { toSlackMrkdwn } from "../render/markdown.js";
import {
  type AdapterCapabilities,
  type AdapterLogger,
  type ChannelAdapter,
  type ChannelAdapterFactory,
  ChannelError,
  type ConnectionStatus,
  type EditOptions,
  type EventDeduper,
  type HistoryMessage,
  type InboundHandlers,
  type KeyValueStore,
  type MessageRef,
  type PostOptions,
  type RateRule,
} from "../types.js";
import { BoltLogger } from "./bolt-logger.js";
import { BoundedMap } from "./bounded-map.js";
import { slackNameFromEmoji } from "./emoji.js";
import { compareTs, decodeMessageRef, decodeThreadKey, encodeMessageRef, encodeThreadKey } from "./ids.js";
import {
  isFromPerson,
  mentionsBot,
  reactionEmoji,
  readCommand,
  readMessageEvent,
  readReactionEvent,
  type SlackMessageEvent,
  threadOf,
  toInboundCommand,
  toInboundMessage,
} from "./inbound.js";
import { type SlackIdentity, SlackWeb } from "./web.js";

/** Slack's own limit on `text`. */
export const SLACK_TEXT_LIMIT = 40_000;

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
  logger?: AdapterLogger;
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
  /** Cross-process dedupe of event ids (the in-process check always runs). */
  dedupe?: EventDeduper;
  /**
   * Shared store for which threads the bot takes part in, so a thread reply reaching one process
   * is recognised when another process posted in the thread.
   */
  store?: KeyValueStore;
  /** Key prefix for `store` (default `sb:`). */
  keyPrefix?: string;
  /** Known identity, to skip `auth.test`. */
  identity?: SlackIdentity;
  /** Resolve display names with `users.info` (needs `users:read`; default true). */
  resolveUserNames?: boolean;
}

/** How long the shared store remembers that the bot is in a thread. */
const THREAD_MEMORY_MS = 14 * 86_400_000;

const silent: AdapterLogger = { debug() {}, info() {}, warn() {}, error() {} };

const escapePlain = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export class SlackAdapter implements ChannelAdapter {
  readonly platform = "slack" as const;
  readonly capabilities: AdapterCapabilities;
  private readonly web: SlackWeb;
  private readonly log: AdapterLogger;
  private app: App | undefined;
  private httpReceiver: HTTPReceiver | undefined;
  private listening = false;
  private handlers: InboundHandlers | undefined;
  private status: ConnectionStatus | undefined;
  /** Event ids being handled or handled: Slack retries a delivery it thinks was lost. */
  private readonly recent = new BoundedMap<string, "inflight" | "done">(10_000, 3_600_000);
  /** Thread key → ts from which on the bot takes part (earlier replies stay out even when late). */
  private readonly knownThreads = new BoundedMap<string, string>(50_000);
  private readonly notBotThreads = new BoundedMap<string, true>(10_000, 30_000);
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly config: SlackAdapterConfig) {
    this.log = config.logger ?? silent;
    this.web = new SlackWeb(config.botToken, config.apiUrl, this.log, config.identity);
    this.capabilities = {
      maxMessageLength: config.maxMessageLength ?? 8000,
      editIntervalMs: config.editIntervalMs ?? 1000,
      markdown: "slack-mrkdwn",
      nativeCommands: true,
      reactions: true,
      edits: true,
      typingDurationMs: 0,
      history: true,
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
    this.handlers = handlers;
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
      });
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
    this.register(app, me);
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
      this.log.warn({ err: (err as Error).message }, "slack: could not handle HTTP request");
      if (!res.headersSent) res.writeHead(500).end();
    }
    return true;
  }

  async stop(): Promise<void> {
    const app = this.app;
    if (!app) return;
    if (this.status) this.setStatus(this.status.name, "stopped");
    this.app = undefined;
    this.handlers = undefined;
    if (this.config.inbound?.mode === "socket" || this.listening) {
      try {
        await app.stop();
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "slack: error while stopping");
      }
    }
    this.listening = false;
    this.httpReceiver = undefined;
    await Promise.allSettled([...this.inflight]);
  }

  connections(): ConnectionStatus[] {
    return this.status ? [{ ...this.status }] : [];
  }

  private setStatus(name: string, state: ConnectionStatus["state"], detail?: string): void {
    this.status = { name, state, since: Date.now(), ...(detail ? { detail } : {}) };
  }

  private register(app: App, me: SlackIdentity): void {
    app.event("app_mention", async ({ event, body }) => {
      await this.onMessage(event, body, me, "app_mention");
    });
    app.event("message", async ({ event, body }) => {
      await this.onMessage(event, body, me, "message");
    });
    app.event("reaction_added", async ({ event, body }) => {
      await this.onReaction(event, body, me);
    });
    app.event("reaction_removed", async ({ event, body }) => {
      await this.onReaction(event, body, me);
    });
    app.command(/^\/.+/, async ({ command, ack, respond }) => {
      // Slack shows an error unless the command is acknowledged within 3 s: ack first.
      try {
        await ack();
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "slack: could not ack a slash command");
      }
      await this.onCommand(command, respond);
    });
    app.error(async (err) => {
      this.log.error({ err: err.message }, "slack: error while handling an event");
    });
  }

  /** Run a handler once per event id; a failed handler lets a retry of the same event through. */
  private async deliver(eventId: string, kind: string, fn: (h: InboundHandlers) => unknown): Promise<void> {
    const handlers = this.handlers;
    if (!handlers) return;
    if (this.recent.has(eventId)) {
      this.log.debug({ eventId }, "slack: duplicate delivery ignored");
      return;
    }
    this.recent.set(eventId, "inflight");
    const dedupe = this.config.dedupe;
    const run = (async () => {
      if (dedupe) {
        try {
          if (!(await dedupe.claim(eventId))) {
            this.log.debug({ eventId }, "slack: event already handled by another process");
            this.recent.set(eventId, "done");
            return;
          }
        } catch (err) {
          this.log.warn({ eventId, err: (err as Error).message }, "slack: dedupe check failed; delivering");
        }
      }
      try {
        await fn(handlers);
        this.recent.set(eventId, "done");
      } catch (err) {
        this.recent.delete(eventId);
        await dedupe?.release(eventId).catch(() => {});
        this.log.error({ eventId, kind, err: (err as Error).message }, "slack: inbound handler failed");
      }
    })();
    this.inflight.add(run);
    await run.finally(() => this.inflight.delete(run));
  }

  private eventIdOf(body: unknown): string | undefined {
    const id = (body as { event_id?: unknown } | undefined)?.event_id;
    return typeof id === "string" && id ? `slack:${id}` : undefined;
  }

  private teamOf(body: unknown, me: SlackIdentity): string {
    const team = (body as { team_id?: unknown } | undefined)?.team_id;
    return typeof team === "string" && team ? team : me.teamId;
  }

  private async onMessage(raw: unknown, body: unknown, me: SlackIdentity, kind: SlackMessageEvent["type"]) {
    const e = readMessageEvent(raw);
    const eventId = this.eventIdOf(body);
    if (!e || !eventId) {
      this.log.warn({ kind }, "slack: malformed message event ignored");
      return;
    }
    if (!isFromPerson(e, me.userId)) return;
    const team = this.teamOf(body, me);
    const isDm = e.channelType === "im";
    let mentioned = kind === "app_mention";
    if (kind === "message" && !isDm) {
      // A mention in a channel also arrives as `app_mention`, which is the one delivered.
      if (mentionsBot(e.text, me.userId)) return;
      if (!e.threadTs || e.threadTs === e.ts) return;
      if (
        !(await this.inBotThread(encodeThreadKey(team, e.channel, e.threadTs), e.channel, e.threadTs, e.ts))
      )
        return;
      mentioned = false;
    }
    const thread = threadOf(e);
    this.web.rememberThread(e.channel, e.ts, thread);
    if (kind === "app_mention") await this.joinThread(encodeThreadKey(team, e.channel, thread), e.ts);
    const user =
      this.config.resolveUserNames === false
        ? { id: e.user ?? "", isBot: false }
        : await this.web.user(e.user ?? "");
    const message = toInboundMessage(e, { team, eventId, botUserId: me.userId, mentioned, user });
    await this.deliver(eventId, kind, (h) => h.onMessage(message));
  }

  private storeKey(threadKey: string): string {
    return `${this.config.keyPrefix ?? "sb:"}{${threadKey}}:slack-bot-thread`;
  }

  /** Remember that the bot takes part in a thread, here and in the shared store. */
  private async joinThread(threadKey: string, since: string): Promise<void> {
    const known = this.knownThreads.get(threadKey);
    if (known !== undefined && compareTs(known, since) <= 0) return;
    this.knownThreads.set(threadKey, since);
    try {
      await this.config.store?.set(this.storeKey(threadKey), since, THREAD_MEMORY_MS);
    } catch (err) {
      this.log.warn(
        { threadKey, err: (err as Error).message },
        "slack: could not record the thread in the store",
      );
    }
  }

  private async inBotThread(key: string, channel: string, threadTs: string, ts: string): Promise<boolean> {
    const known = this.knownThreads.get(key);
    if (known !== undefined) return compareTs(known, ts) < 0;
    try {
      const stored = await this.config.store?.get(this.storeKey(key));
      if (stored !== undefined && /^\d+\.\d+$/.test(stored)) {
        this.knownThreads.set(key, stored);
        return compareTs(stored, ts) < 0;
      }
      if (this.config.isBotThread) return await this.config.isBotThread(key);
      if (this.notBotThreads.has(key)) return false;
      const yes = await this.web.botInThread(channel, threadTs);
      if (yes) this.knownThreads.set(key, threadTs);
      else this.notBotThreads.set(key, true);
      return yes;
    } catch (err) {
      this.log.warn(
        { key, err: (err as Error).message },
        "slack: could not tell whether the bot is in a thread",
      );
      return false;
    }
  }

  private async onReaction(raw: unknown, body: unknown, me: SlackIdentity): Promise<void> {
    const r = readReactionEvent(raw);
    const eventId = this.eventIdOf(body);
    if (!r || !eventId) {
      this.log.warn({}, "slack: malformed reaction event ignored");
      return;
    }
    if (r.user === me.userId) return;
    const team = this.teamOf(body, me);
    const thread = await this.web.threadOf(r.channel, r.ts);
    const user =
      this.config.resolveUserNames === false ? { id: r.user, isBot: false } : await this.web.user(r.user);
    const eventTs = Number((raw as { event_ts?: unknown }).event_ts);
    await this.deliver(eventId, "reaction", (h) =>
      h.onReaction({
        platform: "slack",
        threadKey: encodeThreadKey(team, r.channel, thread),
        eventId,
        messageId: encodeMessageRef(team, r.channel, r.ts),
        channelId: r.channel,
        emoji: reactionEmoji(r.name),
        user,
        added: r.added,
        timestamp: Number.isFinite(eventTs) ? Math.round(eventTs * 1000) : Date.now(),
      }),
    );
  }

  private async onCommand(
    raw: unknown,
    respond: (msg: { text: string; response_type: "ephemeral" | "in_channel" }) => Promise<unknown>,
  ): Promise<void> {
    const c = readCommand(raw);
    if (!c) {
      this.log.warn({}, "slack: malformed slash command ignored");
      return;
    }
    const base = toInboundCommand(c, Date.now());
    await this.deliver(base.eventId, "command", (h) =>
      h.onCommand({
        ...base,
        respond: async (text, opts) => {
          try {
            await respond({
              text: toSlackMrkdwn(text),
              response_type: opts?.ephemeral ? "ephemeral" : "in_channel",
            });
          } catch (err) {
            throw new ChannelError(
              "network",
              `Slack command response failed: ${(err as Error).message.replace(/https?:\/\/\S+/g, "<response_url>")}`,
              "slack",
            );
          }
        },
      }),
    );
  }

  // ---- outbound --------------------------------------------------------------------------

  private render(text: string, format: "markdown" | "plain" | undefined): string {
    // Slack does not show leading blank lines or trailing whitespace; sending them only makes
    // the stored text differ from what people see.
    const out = (format === "plain" ? escapePlain(text) : toSlackMrkdwn(text)).replace(/^\n+/, "").trimEnd();
    if (out.length > SLACK_TEXT_LIMIT)
      throw new ChannelError(
        "too_long",
        `Slack message is ${out.length} characters after formatting; the limit is ${SLACK_TEXT_LIMIT}`,
        "slack",
      );
    return out;
  }

  async post(threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    const t = decodeThreadKey(threadKey);
    let threadTs = t.threadTs;
    if (opts.replyTo) {
      const r = decodeMessageRef(opts.replyTo);
      threadTs = (await this.web.threadOf(r.channel, r.ts)) ?? r.ts;
    }
    const r = await this.web.call("chat.postMessage", {
      channel: t.channel,
      text: this.render(text, opts.format),
      unfurl_links: false,
      unfurl_media: false,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
    const ts = typeof r.ts === "string" ? r.ts : undefined;
    if (!ts) throw new ChannelError("other", "Slack chat.postMessage returned no message ts", "slack");
    this.web.rememberThread(t.channel, ts, threadTs);
    if (threadTs) await this.joinThread(encodeThreadKey(t.team, t.channel, threadTs), ts);
    return encodeMessageRef(t.team, t.channel, ts);
  }

  async edit(ref: MessageRef, text: string, opts: EditOptions = {}): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.web.call("chat.update", {
      channel: r.channel,
      ts: r.ts,
      text: this.render(text, opts.format),
    });
  }

  async delete(ref: MessageRef): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.web.call("chat.delete", { channel: r.channel, ts: r.ts });
  }

  private reactionName(emoji: string): string {
    const name = slackNameFromEmoji(emoji);
    if (!name)
      throw new ChannelError(
        "bad_request",
        `no Slack reaction name known for ${emoji}; pass it as :name:`,
        "slack",
      );
    return name;
  }

  async react(ref: MessageRef, emoji: string): Promise<void> {
    const r = decodeMessageRef(ref);
    const name = this.reactionName(emoji);
    await this.web.call("reactions.add", { channel: r.channel, timestamp: r.ts, name }, ["already_reacted"]);
  }

  async unreact(ref: MessageRef, emoji: string): Promise<void> {
    const r = decodeMessageRef(ref);
    const name = this.reactionName(emoji);
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

  fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    const t = decodeThreadKey(threadKey);
    const beforeTs = before ? decodeMessageRef(before).ts : undefined;
    return this.web.history(t.team, t.channel, t.threadTs, limit, beforeTs);
  }
}

/** Build a Slack adapter from its config slice. */
export const createSlackAdapter: ChannelAdapterFactory<SlackAdapterConfig> = (config) =>
  new SlackAdapter(config);
