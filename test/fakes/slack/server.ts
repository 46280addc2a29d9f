/**
 * A fake Slack for tests: the Web API (`slackApiUrl` → `http://127.0.0.1:P/api/`), a Socket Mode
 * WebSocket (`apps.connections.open` hands out its URL), signed Events API deliveries to the app's
 * HTTP endpoint, and `response_url` endpoints for slash commands. Bolt talks to it unchanged.
 *
 * Real behaviour kept: `msg_too_long` over 40,000 characters, rate limits (HTTP 429 + `Retry-After`),
 * `already_reacted`/`no_reaction`, `cant_update_message` for others' messages, app_mention plus the
 * matching `message` event for a mention, echo events for the bot's own posts, `X-Slack-Retry-Num` /
 * `retry_attempt` on redeliveries, Socket Mode acks by envelope id.
 *
 * Files: `files.userFile` makes a file to post with `userMessage({ files })`; its `url_private` needs
 * the bot token; the bot's uploads (external upload flow) land in `files` (see files.ts).
 *
 * Test API: `userMessage`, `reaction`, `slashCommand`, `redeliver` inject the world's events;
 * `view(channel)` shows the channel as a user sees it; `api.calls` records every Web API request.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { SlackFiles } from "./files.js";
import { postSigned, type SignedPostResult } from "./signing.js";
import { DEFAULT_RATE_RULES, type RateRules, SlackWebApi } from "./web-api.js";
import {
  APP_ID,
  BOT_ID,
  BOT_USER_ID,
  type ChannelKind,
  type FakeChannel,
  type SlackUser,
  SlackWorld,
  type StoredMessage,
  TEAM_ID,
  type ViewMessage,
} from "./world.js";

export type { FakeChannel, SlackUser, StoredMessage, ViewMessage } from "./world.js";
export { BOT_USER_ID, TEAM_ID } from "./world.js";

type Json = Record<string, unknown>;

export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  /** The fake's clock for rate limits and timestamps (default `Date.now`). */
  now?: () => number;
  /** Rate rules per Web API method (default: roughly Slack's; `{}`: none). */
  rateRules?: RateRules;
  /** Send a `message` event with `bot_id` for each of the bot's posts, as Slack does (default true). */
  echoBotMessages?: boolean;
}

/** What happened to one delivery: an HTTP answer, or a Socket Mode ack. */
export interface Delivery {
  eventId?: string;
  via: "http" | "socket";
  status?: number;
  /** The Socket Mode ack payload. */
  ack?: Json;
  elapsedMs: number;
}

/** One POST to a command's `response_url`. */
export interface CommandResponse {
  id: string;
  body: Json;
}

interface SentEnvelope {
  envelope: Json;
  eventId: string;
}

export class FakeSlack {
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly world: SlackWorld;
  readonly api: SlackWebApi;
  /** Files people posted and the bot uploaded (files.ts). */
  readonly files: SlackFiles;
  /** Socket Mode acks by envelope id. */
  readonly acks = new Map<string, Json>();
  readonly responses: CommandResponse[] = [];
  /** Where HTTP-mode deliveries go (`http://host:port/slack/events`); set by the test. */
  eventsUrl: string | undefined;
  /** Web API methods whose calls wait for `releaseMethod` before they are answered. */
  private readonly heldMethods = new Map<string, { promise: Promise<void>; release: () => void }>();
  /** Calls waiting on a held method now, by method. */
  private readonly waitingCalls = new Map<string, number>();
  /** Number of Socket Mode connections opened. */
  socketConnections = 0;

  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private port = 0;
  private readonly sockets = new Set<WebSocket>();
  private readonly waiting = new Map<string, (ack: Json) => void>();
  private readonly sent = new Map<string, SentEnvelope>();
  private readonly now: () => number;
  private readonly echo: boolean;
  private seq = 0;
  private pinger: NodeJS.Timeout | undefined;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(opts: FakeSlackOptions = {}) {
    this.botToken = opts.botToken ?? "xoxb-fake-bot-token";
    this.appToken = opts.appToken ?? "xapp-fake-app-token";
    this.signingSecret = opts.signingSecret ?? "fake-signing-secret";
    this.now = opts.now ?? Date.now;
    this.echo = opts.echoBotMessages ?? true;
    this.world = new SlackWorld(this.now);
    this.api = new SlackWebApi(
      this.world,
      this.now,
      this.botToken,
      this.appToken,
      opts.rateRules ?? DEFAULT_RATE_RULES,
    );
    this.files = new SlackFiles(this.world, this.botToken);
    this.api.fileMethods = (method, p) => this.files.api(method, p);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.route(req).then(
        (a) => {
          if ("raw" in a) {
            res.writeHead(a.status, a.headers);
            res.end(a.raw);
            return;
          }
          res.writeHead(a.status, { "content-type": "application/json", ...(a.headers ?? {}) });
          res.end(JSON.stringify(a.body));
        },
        () => {
          res.writeHead(500).end();
        },
      );
    });
    this.wss = new WebSocketServer({ server: this.server, path: "/link" });
    this.wss.on("connection", (ws) => this.onSocket(ws));
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
    this.api.socketUrl = `ws://127.0.0.1:${this.port}`;
    this.files.origin = `http://127.0.0.1:${this.port}`;
    // Slack pings its Socket Mode clients; the client gives up after 30 s without one.
    this.pinger = setInterval(() => {
      for (const ws of this.sockets) ws.ping();
    }, 10_000);
    this.pinger.unref();
    return this;
  }

  /** `slackApiUrl` for the Web API client. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  /** True while at least one Socket Mode client is connected. */
  get socketConnected(): boolean {
    return this.sockets.size > 0;
  }

  async close(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    for (const ws of this.sockets) ws.terminate();
    for (const [id, resolve] of this.waiting) resolve({ unacked: id });
    this.waiting.clear();
    await Promise.allSettled([...this.pending]);
    await new Promise<void>((r) => (this.wss ? this.wss.close(() => r()) : r()));
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  // ---- the world -------------------------------------------------------------------------

  channel(id: string, kind: ChannelKind = "channel", name = id.toLowerCase()): FakeChannel {
    return this.world.addChannel({ id, name, kind });
  }

  user(id: string, name = id.toLowerCase(), extra: Partial<SlackUser> = {}): SlackUser {
    return this.world.addUser({ id, name, ...extra });
  }

  /** The channel as a user sees it: top-level messages, each with its thread replies. */
  view(channel: string): ViewMessage[] {
    return this.world.view(channel);
  }

  /** The current texts of the bot's messages in a channel (thread replies included), in order. */
  botTexts(channel: string): string[] {
    return this.world
      .all(channel)
      .filter((m) => m.user === BOT_USER_ID)
      .map((m) => m.text);
  }

  /** Store a message without delivering any event (history that existed before the bot came). */
  seed(opts: { channel: string; user: string; text: string; threadTs?: string }): StoredMessage {
    return this.world.add({
      channel: opts.channel,
      user: opts.user,
      text: opts.text,
      ...(opts.threadTs ? { threadTs: opts.threadTs } : {}),
    });
  }

  /**
   * A user writes a message. `mention` prepends `<@bot>`; Slack then sends `app_mention` and the
   * `message` event (channels) or only `message` (DMs). Resolves when every delivery was answered.
   */
  async userMessage(opts: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    mention?: boolean;
    files?: Json[];
  }): Promise<{ message: StoredMessage; deliveries: Delivery[] }> {
    const ch = this.world.channels.get(opts.channel);
    if (!ch) throw new Error(`fake slack: unknown channel ${opts.channel}`);
    const text = opts.mention ? `<@${BOT_USER_ID}> ${opts.text}` : opts.text;
    const message = this.world.add({
      channel: ch.id,
      user: opts.user,
      text,
      ...(opts.threadTs ? { threadTs: opts.threadTs } : {}),
      ...(opts.files ? { files: opts.files } : {}),
    });
    const base: Json = {
      user: opts.user,
      text,
      ts: message.ts,
      channel: ch.id,
      event_ts: message.ts,
      team: TEAM_ID,
      ...(opts.threadTs ? { thread_ts: opts.threadTs } : {}),
      ...(opts.files ? { files: opts.files, subtype: "file_share" } : {}),
    };
    const events: Json[] = [{ type: "message", channel_type: channelType(ch.kind), ...base }];
    if (opts.mention && ch.kind !== "im") events.push({ type: "app_mention", ...base });
    const deliveries = await Promise.all(events.map((e) => this.deliverEvent(e)));
    return { message, deliveries };
  }

  /** A user adds (or removes) a reaction; Slack sends `reaction_added`/`reaction_removed`. */
  async reaction(opts: {
    channel: string;
    ts: string;
    user: string;
    name: string;
    added?: boolean;
  }): Promise<Delivery> {
    const msg = this.world.find(opts.channel, opts.ts);
    if (!msg) throw new Error(`fake slack: no message ${opts.ts} in ${opts.channel}`);
    const added = opts.added ?? true;
    const users = msg.reactions.get(opts.name) ?? new Set<string>();
    if (added) users.add(opts.user);
    else users.delete(opts.user);
    if (users.size) msg.reactions.set(opts.name, users);
    else msg.reactions.delete(opts.name);
    const eventTs = this.world.nextTs();
    return this.deliverEvent({
      type: added ? "reaction_added" : "reaction_removed",
      user: opts.user,
      reaction: opts.name,
      item_user: msg.user,
      item: { type: "message", channel: opts.channel, ts: opts.ts },
      event_ts: eventTs,
    });
  }

  /** Deliver an arbitrary event (malformed ones too); resolves with the answer. */
  deliverEvent(event: Json, opts: { eventId?: string } = {}): Promise<Delivery> {
    const eventId = opts.eventId ?? `Ev${String(++this.seq).padStart(8, "0")}`;
    const envelope: Json = {
      token: "verification-token",
      team_id: TEAM_ID,
      api_app_id: APP_ID,
      event,
      type: "event_callback",
      event_id: eventId,
      event_time: Math.floor(this.now() / 1000),
      authorizations: [
        {
          enterprise_id: null,
          team_id: TEAM_ID,
          user_id: BOT_USER_ID,
          is_bot: true,
          is_enterprise_install: false,
        },
      ],
      is_ext_shared_channel: false,
    };
    this.sent.set(eventId, { envelope, eventId });
    return this.track(this.send("events_api", envelope, eventId, 0));
  }

  /**
   * Calls of the Web API `method` wait unanswered until `releaseMethod(method)`, so a test can catch
   * the app in the middle of handling an event (e.g. on its 👀 reaction).
   */
  holdMethod(method: string): void {
    if (this.heldMethods.has(method)) return;
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.heldMethods.set(method, { promise, release });
  }

  /** How many calls of `method` wait on `holdMethod` now. */
  held(method: string): number {
    return this.waitingCalls.get(method) ?? 0;
  }

  /** Answers the held calls of `method` and stops holding it. */
  releaseMethod(method: string): void {
    this.heldMethods.get(method)?.release();
    this.heldMethods.delete(method);
  }

  /** Deliver an event again, as Slack's retries do (`X-Slack-Retry-Num` / `retry_attempt`). */
  redeliver(eventId: string, retryNum = 1): Promise<Delivery> {
    const s = this.sent.get(eventId);
    if (!s) throw new Error(`fake slack: no event ${eventId} was delivered`);
    return this.track(this.send("events_api", s.envelope, eventId, retryNum));
  }

  /** A user runs a slash command. Resolves with the ack (HTTP answer or Socket Mode ack). */
  slashCommand(opts: { channel: string; user: string; command: string; text?: string }): Promise<Delivery> {
    const ch = this.world.channels.get(opts.channel);
    if (!ch) throw new Error(`fake slack: unknown channel ${opts.channel}`);
    const id = `R${++this.seq}`;
    const payload: Record<string, string> = {
      token: "verification-token",
      team_id: TEAM_ID,
      team_domain: "fake",
      channel_id: ch.id,
      channel_name: ch.kind === "im" ? "directmessage" : ch.name,
      user_id: opts.user,
      user_name: this.world.users.get(opts.user)?.name ?? opts.user,
      command: opts.command.startsWith("/") ? opts.command : `/${opts.command}`,
      text: opts.text ?? "",
      api_app_id: APP_ID,
      is_enterprise_install: "false",
      response_url: `http://127.0.0.1:${this.port}/response/${id}`,
      trigger_id: `${id}.trigger`,
    };
    return this.track(this.send("slash_commands", payload, undefined, 0));
  }

  /** Resolves when every delivery in flight has been answered. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  // ---- wire ------------------------------------------------------------------------------

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  }

  private async send(
    type: "events_api" | "slash_commands",
    payload: Json,
    eventId: string | undefined,
    retryNum: number,
  ): Promise<Delivery> {
    const ws = [...this.sockets][0];
    const started = Date.now();
    if (ws) {
      const envelopeId = `env-${++this.seq}`;
      const acked = new Promise<Json>((resolve) => this.waiting.set(envelopeId, resolve));
      ws.send(
        JSON.stringify({
          type,
          envelope_id: envelopeId,
          payload,
          accepts_response_payload: type !== "events_api",
          ...(type === "events_api"
            ? { retry_attempt: retryNum, retry_reason: retryNum ? "timeout" : "" }
            : {}),
        }),
      );
      const ack = await acked;
      return { ...(eventId ? { eventId } : {}), via: "socket", ack, elapsedMs: Date.now() - started };
    }
    if (!this.eventsUrl) throw new Error("fake slack: no Socket Mode client connected and no eventsUrl set");
    const form = type === "slash_commands";
    const raw = form
      ? new URLSearchParams(payload as Record<string, string>).toString()
      : JSON.stringify(payload);
    const res: SignedPostResult = await postSigned(this.eventsUrl, raw, {
      secret: this.signingSecret,
      contentType: form ? "application/x-www-form-urlencoded" : "application/json",
      ...(retryNum ? { retryNum } : {}),
    });
    return { ...(eventId ? { eventId } : {}), via: "http", status: res.status, elapsedMs: res.elapsedMs };
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    this.socketConnections++;
    ws.on("message", (data) => {
      let msg: Json;
      try {
        msg = JSON.parse(String(data)) as Json;
      } catch {
        return;
      }
      const id = typeof msg.envelope_id === "string" ? msg.envelope_id : undefined;
      if (!id) return;
      const payload = (msg.payload as Json | undefined) ?? {};
      this.acks.set(id, payload);
      this.waiting.get(id)?.(payload);
      this.waiting.delete(id);
    });
    ws.on("close", () => {
      this.sockets.delete(ws);
      if (this.sockets.size > 0) return;
      // Nobody is left to ack: settle the waiting deliveries so nothing hangs.
      for (const [id, resolve] of this.waiting) resolve({ unacked: id });
      this.waiting.clear();
    });
    ws.send(JSON.stringify({ type: "hello", num_connections: 1, connection_info: { app_id: APP_ID } }));
  }

  private async route(
    req: IncomingMessage,
  ): Promise<
    | { status: number; body: Json; headers?: Record<string, string> }
    | { status: number; raw: Buffer | string; headers: Record<string, string> }
  > {
    const url = new URL(req.url ?? "/", "http://fake");
    const bytes = await readBody(req);
    const file = this.files.http(req.method ?? "GET", url.pathname, req.headers.authorization, bytes);
    if (file) return { status: file.status, raw: file.body, headers: file.headers };
    const raw = bytes.toString("utf8");
    const api = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (api?.[1] && req.method === "POST") {
      const params = parseParams(raw, req.headers["content-type"]);
      const hold = this.heldMethods.get(api[1]);
      if (hold) {
        this.waitingCalls.set(api[1], this.held(api[1]) + 1);
        await hold.promise;
        this.waitingCalls.set(api[1], this.held(api[1]) - 1);
      }
      const answer = this.api.handle(api[1], params, req.headers.authorization);
      if (api[1] === "chat.postMessage" && answer.body.ok === true && this.echo) this.echoPost(answer.body);
      return answer;
    }
    const resp = /^\/response\/(\w+)$/.exec(url.pathname);
    if (resp?.[1] && req.method === "POST") {
      const body = parseParams(raw, req.headers["content-type"]);
      this.responses.push({ id: resp[1], body });
      return { status: 200, body: { ok: true } };
    }
    return { status: 404, body: { ok: false, error: "not_found" } };
  }

  /** Slack sends the app a `message` event (with `bot_id`) for its own posts. */
  private echoPost(body: Json): void {
    const msg = body.message as Json | undefined;
    const channel = String(body.channel);
    const ch = this.world.channels.get(channel);
    if (!msg || !ch || (!this.socketConnected && !this.eventsUrl)) return;
    void this.deliverEvent({
      type: "message",
      channel_type: channelType(ch.kind),
      channel,
      user: BOT_USER_ID,
      bot_id: BOT_ID,
      text: msg.text,
      ts: msg.ts,
      event_ts: msg.ts,
      ...(msg.thread_ts ? { thread_ts: msg.thread_ts } : {}),
    }).catch(() => {});
  }
}

function channelType(kind: ChannelKind): string {
  return kind;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Form bodies carry objects JSON-encoded (as web-api sends them); JSON bodies are parsed as is. */
function parseParams(raw: string, contentType: string | undefined): Json {
  if (!raw) return {};
  if (contentType?.includes("application/json")) {
    try {
      return JSON.parse(raw) as Json;
    } catch {
      return {};
    }
  }
  const out: Json = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    out[k] = /^[[{]/.test(v) ? tryJson(v) : v;
  }
  return out;
}

function tryJson(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
