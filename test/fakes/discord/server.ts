/**
 * A fake Discord for tests: REST under `/api/v10` (`rest: { api: fake.apiUrl }` in discord.js) and
 * a gateway WebSocket handed out by `GET /gateway/bot`. discord.js talks to it unchanged.
 *
 * The world: one guild with a `general` channel (threads allowed), a `no-threads` channel (starting a
 * thread there fails with Missing Permissions), DMs, and users. Real limits: 2,000 characters,
 * per-channel message rates (429 + `retry_after`), interaction callbacks within 3 s, interaction
 * tokens valid for 15 minutes, one thread per message.
 *
 * Test API: `userMessage`, `reaction`, `interaction`, `userThread`, `redeliverLast` inject events;
 * `view`/`visible` show a channel as a user sees it; `rest.calls` records every REST request.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { DiscordCdn } from "./cdn.js";
import { FakeGateway } from "./gateway.js";
import { DEFAULT_RULES, DiscordRest, type FakeInteraction, type RateRule } from "./rest.js";
import {
  APPLICATION_ID,
  BOT_USER_ID,
  ChannelType,
  type DChannel,
  DiscordWorld,
  type DMessage,
  type DUser,
  GUILD_ID,
} from "./world.js";

export type { FakeInteraction } from "./rest.js";
export type { DChannel, DMessage, DUser } from "./world.js";
export { APPLICATION_ID, BOT_USER_ID, GUILD_ID } from "./world.js";

type Json = Record<string, unknown>;

export const GENERAL_ID = "900000000000000100";
export const NO_THREADS_ID = "900000000000000101";

export interface FakeDiscordOptions {
  token?: string;
  now?: () => number;
  /** Rate rules per route (default: Discord-like; `{}`: none). */
  rules?: Record<string, RateRule>;
  heartbeatIntervalMs?: number;
}

/** A message as a user sees it. */
export interface VisibleDiscordMessage {
  id: string;
  author: string;
  fromBot: boolean;
  content: string;
  edits: number;
  replyTo?: string;
  ephemeral: boolean;
  /** Messages of the thread started on this message, if any. */
  thread?: VisibleDiscordMessage[];
}

export class FakeDiscord {
  readonly token: string;
  readonly world: DiscordWorld;
  readonly rest: DiscordRest;
  readonly gateway: FakeGateway;
  /** Attachments: signed CDN links, uploads (cdn.ts). */
  readonly cdn: DiscordCdn;
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private port = 0;
  private readonly now: () => number;

  constructor(opts: FakeDiscordOptions = {}) {
    this.token = opts.token ?? "FAKE.discord.bot-token";
    this.now = opts.now ?? Date.now;
    this.world = new DiscordWorld(this.now);
    this.rest = new DiscordRest(this.world, this.now, this.token, opts.rules ?? DEFAULT_RULES);
    this.cdn = new DiscordCdn(this.now);
    this.rest.cdn = this.cdn;
    this.gateway = new FakeGateway(this.world, this.token, () => this.guildPayload());
    if (opts.heartbeatIntervalMs) this.gateway.heartbeatIntervalMs = opts.heartbeatIntervalMs;
    this.world.addChannel({
      id: GENERAL_ID,
      type: ChannelType.GuildText,
      name: "general",
      guildId: GUILD_ID,
      threadsAllowed: true,
    });
    this.world.addChannel({
      id: NO_THREADS_ID,
      type: ChannelType.GuildText,
      name: "no-threads",
      guildId: GUILD_ID,
      threadsAllowed: false,
    });
    this.rest.onCreate = (m) => this.send("MESSAGE_CREATE", this.messageEvent(m), this.guildOf(m.channelId));
    this.rest.onThread = (c) =>
      this.send("THREAD_CREATE", { ...this.world.channelWire(c), newly_created: true }, c.guildId);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.route(req).then(
        (a) => {
          const raw = Buffer.isBuffer(a.body) || typeof a.body === "string";
          res.writeHead(a.status, {
            ...(a.body !== undefined && !raw ? { "content-type": "application/json" } : {}),
            ...(a.headers ?? {}),
          });
          res.end(
            a.body === undefined ? undefined : raw ? (a.body as Buffer | string) : JSON.stringify(a.body),
          );
        },
        () => res.writeHead(500).end(),
      );
    });
    this.wss = new WebSocketServer({ server: this.server, path: "/gateway" });
    this.gateway.attach(this.wss);
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
    this.cdn.origin = `http://127.0.0.1:${this.port}`;
    this.gateway.url = `ws://127.0.0.1:${this.port}/gateway`;
    this.rest.gatewayUrl = this.gateway.url;
    return this;
  }

  /** For discord.js `rest.api`. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  async close(): Promise<void> {
    for (const s of this.gateway.sessions) s.ws.terminate();
    await new Promise<void>((r) => (this.wss ? this.wss.close(() => r()) : r()));
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  // ---- the world -------------------------------------------------------------------------

  user(username: string): DUser {
    const existing = [...this.world.users.values()].find((u) => u.username === username);
    return existing ?? this.world.addUser({ id: this.world.snowflake(), username });
  }

  /** The DM channel between the bot and `user` (created on first use). */
  dm(user: DUser): DChannel {
    const existing = [...this.world.channels.values()].find(
      (c) => c.type === ChannelType.DM && c.recipient?.id === user.id,
    );
    return (
      existing ?? this.world.addChannel({ id: this.world.snowflake(), type: ChannelType.DM, recipient: user })
    );
  }

  /** A user writes. `mention` prepends `<@bot>`; `replyTo` makes it a reply. */
  userMessage(opts: {
    channelId: string;
    author: DUser;
    content: string;
    mention?: boolean;
    replyTo?: string;
    files?: Array<{ filename: string; bytes: Buffer; contentType?: string }>;
  }): DMessage {
    const content = opts.mention ? `<@${BOT_USER_ID}> ${opts.content}` : opts.content;
    const attachments = (opts.files ?? []).map((f) =>
      this.cdn.add({
        id: this.world.snowflake(),
        channelId: opts.channelId,
        filename: f.filename,
        contentType: f.contentType ?? "application/octet-stream",
        bytes: f.bytes,
      }),
    );
    const msg = this.world.add({
      channelId: opts.channelId,
      author: opts.author,
      content,
      ...(attachments.length > 0 ? { attachments } : {}),
      mentions: opts.mention ? [this.world.bot] : [],
      ...(opts.replyTo ? { reference: { messageId: opts.replyTo, channelId: opts.channelId } } : {}),
    });
    this.send("MESSAGE_CREATE", this.messageEvent(msg), this.guildOf(opts.channelId));
    return msg;
  }

  /** A user starts a thread (on a message, or standalone) without the bot. */
  userThread(opts: { channelId: string; owner: DUser; name: string; messageId?: string }): DChannel {
    const parent = this.world.channels.get(opts.channelId);
    if (!parent) throw new Error(`fake discord: unknown channel ${opts.channelId}`);
    const thread = this.world.addChannel({
      id: opts.messageId ?? this.world.snowflake(),
      type: ChannelType.PublicThread,
      name: opts.name,
      guildId: GUILD_ID,
      parentId: parent.id,
      ownerId: opts.owner.id,
    });
    if (opts.messageId) {
      const starter = this.world.find(parent.id, opts.messageId);
      if (starter) starter.threadId = thread.id;
    }
    this.send("THREAD_CREATE", { ...this.world.channelWire(thread), newly_created: true }, GUILD_ID);
    return thread;
  }

  /** A user adds or removes a reaction (unicode emoji). */
  reaction(opts: {
    channelId: string;
    messageId: string;
    user: DUser;
    emoji: string;
    added?: boolean;
  }): void {
    const msg = this.world.find(opts.channelId, opts.messageId);
    if (!msg) throw new Error(`fake discord: no message ${opts.messageId}`);
    const added = opts.added ?? true;
    const users = msg.reactions.get(opts.emoji) ?? new Set<string>();
    if (added) users.add(opts.user.id);
    else users.delete(opts.user.id);
    if (users.size) msg.reactions.set(opts.emoji, users);
    else msg.reactions.delete(opts.emoji);
    const guildId = this.guildOf(opts.channelId);
    this.send(
      added ? "MESSAGE_REACTION_ADD" : "MESSAGE_REACTION_REMOVE",
      {
        user_id: opts.user.id,
        channel_id: opts.channelId,
        message_id: opts.messageId,
        emoji: { id: null, name: opts.emoji },
        burst: false,
        type: 0,
        ...(guildId ? { guild_id: guildId, member: this.member(opts.user) } : {}),
        ...(added ? { message_author_id: msg.author.id } : {}),
      },
      guildId,
    );
  }

  /** A user runs a slash command; returns the interaction to inspect its callbacks later. */
  interaction(opts: { channelId: string; user: DUser; name: string; args?: string }): FakeInteraction {
    const channel = this.world.channels.get(opts.channelId);
    if (!channel) throw new Error(`fake discord: unknown channel ${opts.channelId}`);
    const id = this.world.snowflake();
    const token = `interaction-token-${id}`;
    const i: FakeInteraction = {
      id,
      token,
      channelId: channel.id,
      userId: opts.user.id,
      name: opts.name,
      createdAt: this.now(),
      callbacks: [],
      followUps: [],
    };
    this.rest.interactions.set(id, i);
    const guildId = channel.guildId;
    this.send(
      "INTERACTION_CREATE",
      {
        id,
        application_id: APPLICATION_ID,
        type: 2,
        token,
        version: 1,
        data: {
          id: "800000000000000000",
          name: opts.name,
          type: 1,
          ...(opts.args ? { options: [{ name: "text", type: 3, value: opts.args }] } : {}),
        },
        channel_id: channel.id,
        channel: this.world.channelWire(channel),
        ...(guildId
          ? { guild_id: guildId, member: { ...this.member(opts.user), permissions: "2248473465835073" } }
          : { user: this.world.userWire(opts.user) }),
        app_permissions: "2248473465835073",
        locale: "en-US",
        ...(guildId ? { guild_locale: "en-US" } : {}),
        entitlements: [],
        authorizing_integration_owners: { "0": GUILD_ID },
        context: guildId ? 0 : 1,
        attachment_size_limit: 10_485_760,
      },
      guildId,
    );
    return i;
  }

  /** Send the last dispatch again with its sequence number, as a resumed session replays it. */
  redeliverLast(): void {
    this.gateway.replayLast();
  }

  /** A channel (or thread) as a user sees it, oldest first; ephemeral messages included, marked. */
  view(channelId: string): VisibleDiscordMessage[] {
    return this.world.all(channelId).map((m) => {
      const thread = m.threadId && m.threadId !== channelId ? this.view(m.threadId) : undefined;
      return {
        id: m.id,
        author: m.author.username,
        fromBot: m.author.id === BOT_USER_ID,
        content: m.content,
        edits: m.contents.length - 1,
        ephemeral: m.ephemeral ?? false,
        ...(m.reference ? { replyTo: m.reference.messageId } : {}),
        ...(thread ? { thread } : {}),
      };
    });
  }

  /** The files the bot attached in a channel (or thread), with the message text beside them. */
  botFiles(channelId: string): Array<{ messageId: string; name: string; bytes: Buffer; caption: string }> {
    return this.world
      .all(channelId)
      .filter((m) => m.author.id === BOT_USER_ID && !m.deleted)
      .flatMap((m) =>
        (m.attachments ?? []).flatMap((a) => {
          const stored = this.cdn.attachments.get(String(a.id));
          return stored
            ? [{ messageId: m.id, name: stored.filename, bytes: stored.bytes, caption: m.content }]
            : [];
        }),
      );
  }

  // ---- wire ------------------------------------------------------------------------------

  private send(t: string, d: Json, guildId?: string): void {
    this.gateway.dispatch(t, d, guildId);
  }

  private guildOf(channelId: string): string | undefined {
    return this.world.channels.get(channelId)?.guildId;
  }

  private member(u: DUser): Json {
    return {
      user: this.world.userWire(u),
      roles: [],
      joined_at: new Date(0).toISOString(),
      deaf: false,
      mute: false,
      flags: 0,
    };
  }

  private messageEvent(m: DMessage): Json {
    const wire = this.world.messageWire(m);
    const channel = this.world.channels.get(m.channelId);
    const { user: _u, ...member } = this.member(m.author);
    return {
      ...wire,
      ...(channel?.type === ChannelType.DM ? { channel_type: ChannelType.DM } : { member }),
    };
  }

  private guildPayload(): Json {
    const channels = [...this.world.channels.values()].filter((c) => c.guildId === GUILD_ID);
    return {
      id: GUILD_ID,
      name: "Fake Guild",
      icon: null,
      owner_id: BOT_USER_ID,
      unavailable: false,
      member_count: 4,
      large: false,
      joined_at: new Date(0).toISOString(),
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      premium_tier: 0,
      nsfw_level: 0,
      preferred_locale: "en-US",
      system_channel_flags: 0,
      roles: [
        {
          id: GUILD_ID,
          name: "@everyone",
          permissions: "2248473465835073",
          position: 0,
          color: 0,
          hoist: false,
          managed: false,
          mentionable: false,
          flags: 0,
        },
      ],
      channels: channels
        .filter((c) => c.type !== ChannelType.PublicThread)
        .map((c) => this.world.channelWire(c)),
      threads: channels
        .filter((c) => c.type === ChannelType.PublicThread)
        .map((c) => this.world.channelWire(c)),
      members: [this.member(this.world.bot)],
      emojis: [],
      stickers: [],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      features: [],
    };
  }

  private async route(
    req: IncomingMessage,
  ): Promise<{ status: number; body?: unknown; headers?: Record<string, string> }> {
    const url = req.url ?? "/";
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks)));
      req.on("error", reject);
    });
    if (url.startsWith("/attachments/") && req.method === "GET") {
      const u = new URL(url, "http://fake");
      return this.cdn.get(u.pathname, u.searchParams);
    }
    const m = /^\/api\/v10(\/.*)$/.exec(url);
    if (!m?.[1]) return { status: 404, body: { code: 0, message: "404: Not Found" } };
    const type = req.headers["content-type"] ?? "";
    if (type.startsWith("multipart/form-data")) {
      const parsed = await this.cdn.filesOf(bytes, type);
      if ("error" in parsed) return { status: parsed.status, body: parsed.error };
      return this.rest.handle(
        req.method ?? "GET",
        m[1],
        parsed.payload,
        req.headers.authorization,
        parsed.files,
      );
    }
    const raw = bytes.toString("utf8");
    let body: Json | undefined;
    if (raw) {
      try {
        body = JSON.parse(raw) as Json;
      } catch {
        return { status: 400, body: { code: 50109, message: "The request body contains invalid JSON." } };
      }
    }
    return this.rest.handle(req.method ?? "GET", m[1], body, req.headers.authorization);
  }
}
