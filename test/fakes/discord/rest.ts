/**
 * The fake Discord REST API under `/api/v10`, answering as Discord does: JSON error bodies with
 * Discord's numeric codes (10003 Unknown Channel, 10008 Unknown Message, 50035 Invalid Form Body for
 * content over 2,000 characters, 50013 Missing Permissions, 160004 thread already created, 10062
 * Unknown interaction after 3 s, 50027 Invalid Webhook Token after 15 minutes) and 429 with
 * `retry_after` (body, seconds) and `Retry-After` (header, whole seconds).
 *
 * No `X-RateLimit-*` bucket headers are sent: discord.js would then wait on its own wall clock,
 * while the fake's limits run on the test's clock.
 */
import type { DiscordCdn } from "./cdn.js";
import {
  APPLICATION_ID,
  BOT_USER_ID,
  ChannelType,
  CONTENT_LIMIT,
  type DChannel,
  type DiscordWorld,
  type DMessage,
} from "./world.js";

type Json = Record<string, unknown>;

export interface RestAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One REST request as the fake saw it. */
export interface RecordedRequest {
  method: string;
  /** Path after `/api/v10`, e.g. `/channels/1/messages`. */
  path: string;
  /** Route with ids replaced, e.g. `POST /channels/:id/messages`. */
  route: string;
  body: Json | undefined;
  at: number;
  status: number;
  /** Discord's error code for failures. */
  code?: number;
}

export interface RateRule {
  limit: number;
  windowMs: number;
  /**
   * Measure this rule on the wall clock rather than the fake's clock: for routes where discord.js
   * itself waits out a 429 (reactions), which it does in real time.
   */
  realTime?: boolean;
}

/** A slash-command interaction in flight. */
export interface FakeInteraction {
  id: string;
  token: string;
  channelId: string;
  userId: string;
  name: string;
  createdAt: number;
  /** Callback types sent (5 = deferred channel message, 4 = channel message). */
  callbacks: Array<{ type: number; at: number; ephemeral: boolean }>;
  /** The message holding the original response, once there is one. */
  originalId?: string;
  followUps: string[];
}

/** Per route rules: messages 5/5 s per channel, reactions 1 per 250 ms per channel. */
export const DEFAULT_RULES: Record<string, RateRule> = {
  "POST /channels/:id/messages": { limit: 5, windowMs: 5000 },
  "PATCH /channels/:id/messages/:id": { limit: 5, windowMs: 5000 },
  "PUT /channels/:id/messages/:id/reactions/:emoji/@me": { limit: 1, windowMs: 250, realTime: true },
};

/** How long Discord remembers an enforced nonce ("the past few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000;
const STORM_ROUTES = ["POST /channels/:id/messages", "PATCH /channels/:id/messages/:id"];

export class DiscordRest {
  readonly calls: RecordedRequest[] = [];
  readonly interactions = new Map<string, FakeInteraction>();
  readonly commands: Array<{ scope: string; body: unknown }> = [];
  gatewayUrl = "";
  private readonly windows = new Map<string, number[]>();
  /** `channel:nonce` of the bot's posts sent with `enforce_nonce` → the message and when it was made. */
  private readonly nonces = new Map<string, { messageId: string; at: number }>();
  private storm: { remaining: number; retryAfterMs: number } | undefined;
  /** Called for every message the bot creates (the gateway echoes it as MESSAGE_CREATE). */
  onCreate: (m: DMessage) => void = () => {};
  onThread: (c: DChannel) => void = () => {};
  /** Attachments (cdn.ts), set by the server. */
  cdn: DiscordCdn | undefined;
  /** Files of the request being handled (a multipart message). */
  private files: Array<{ filename: string; contentType: string; bytes: Buffer }> = [];

  constructor(
    private readonly world: DiscordWorld,
    private readonly now: () => number,
    private readonly token: string,
    private readonly rules: Record<string, RateRule>,
  ) {}

  /** The next `count` message posts/edits get 429 with this retry-after. */
  rateLimitStorm(count: number, retryAfterMs: number): void {
    this.storm = { remaining: count, retryAfterMs };
  }

  /** `path` is after `/api/v10` and may carry a query string. */
  handle(
    method: string,
    path: string,
    body: Json | undefined,
    auth: string | undefined,
    files: Array<{ filename: string; contentType: string; bytes: Buffer }> = [],
  ): RestAnswer {
    this.files = files;
    const [rawPath = "", query = ""] = path.split("?");
    const pathname = rawPath.split("/").map(decodeURIComponent).join("/");
    const route = `${method} ${pathname.replace(/\/\d{5,}/g, "/:id").replace(/\/reactions\/[^/]+/, "/reactions/:emoji")}`;
    const answer = this.dispatch(method, pathname, route, body, auth, new URLSearchParams(query));
    const code = (answer.body as { code?: unknown } | undefined)?.code;
    this.calls.push({
      method,
      path,
      route,
      body,
      at: this.now(),
      status: answer.status,
      ...(typeof code === "number" ? { code } : {}),
    });
    return answer;
  }

  private dispatch(
    method: string,
    path: string,
    route: string,
    body: Json | undefined,
    auth: string | undefined,
    query: URLSearchParams,
  ): RestAnswer {
    const isWebhook = path.startsWith("/webhooks/") || path.startsWith("/interactions/");
    if (!isWebhook && auth !== `Bot ${this.token}`) return error(401, 0, "401: Unauthorized");
    const limited = this.rateLimit(route, path);
    if (limited) return limited;
    const seg = path.split("/").filter(Boolean);
    if (route === "GET /gateway/bot")
      return ok({
        url: this.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
      });
    if (route === "GET /users/@me") return ok(this.world.userWire(this.world.bot));
    if (route === "GET /applications/@me") return ok({ id: APPLICATION_ID, name: "Switchboard", flags: 0 });
    if (seg[0] === "applications" && method === "PUT") return this.putCommands(path, body);
    if (seg[0] === "channels") return this.channels(method, seg, body, query);
    if (route === "POST /attachments/refresh-urls" && this.cdn) return ok(this.cdn.refresh(body));
    if (seg[0] === "interactions" && seg[3] === "callback")
      return this.callback(seg[1] ?? "", seg[2] ?? "", body);
    if (seg[0] === "webhooks") return this.webhook(method, seg, body);
    return error(404, 0, "404: Not Found");
  }

  private rateLimit(route: string, path: string): RestAnswer | undefined {
    if (this.storm && this.storm.remaining > 0 && STORM_ROUTES.includes(route)) {
      this.storm.remaining--;
      return tooMany(this.storm.retryAfterMs);
    }
    const rule = this.rules[route];
    if (!rule) return undefined;
    const key = `${route}:${path.split("/")[2]}`;
    const now = rule.realTime ? Date.now() : this.now();
    const hits = (this.windows.get(key) ?? []).filter((t) => t > now - rule.windowMs);
    if (hits.length >= rule.limit) {
      this.windows.set(key, hits);
      return tooMany((hits[0] ?? now) + rule.windowMs - now);
    }
    hits.push(now);
    this.windows.set(key, hits);
    return undefined;
  }

  private channels(
    method: string,
    seg: string[],
    body: Json | undefined,
    query: URLSearchParams,
  ): RestAnswer {
    const channelId = seg[1] ?? "";
    const channel = this.world.channels.get(channelId);
    if (!channel) return error(404, 10003, "Unknown Channel");
    const sub = seg[2];
    if (seg.length === 2 && method === "GET") return ok(this.world.channelWire(channel));
    if (sub === "typing" && method === "POST") return { status: 204 };
    if (sub !== "messages") return error(404, 0, "404: Not Found");
    const messageId = seg[3];
    if (!messageId) {
      if (method === "GET") return this.list(channelId, query);
      if (method === "POST") return this.create(channel, body);
      return error(405, 0, "405: Method Not Allowed");
    }
    const msg = this.world.find(channelId, messageId);
    if (!msg) return error(404, 10008, "Unknown Message");
    if (seg[4] === "threads" && method === "POST") return this.startThread(channel, msg, body);
    if (seg[4] === "reactions") return this.react(method, msg, seg[5] ?? "");
    if (method === "GET") return ok(this.world.messageWire(msg));
    if (method === "PATCH") return this.editMessage(msg, body);
    if (method === "DELETE") {
      if (msg.author.id !== BOT_USER_ID) return error(403, 50013, "Missing Permissions");
      msg.deleted = true;
      return { status: 204 };
    }
    return error(405, 0, "405: Method Not Allowed");
  }

  private list(channelId: string, q: URLSearchParams): RestAnswer {
    const limit = Math.max(1, Math.min(100, Number(q.get("limit") ?? 50) || 50));
    const before = q.get("before");
    const newestFirst = this.world
      .all(channelId)
      .filter((m) => !m.ephemeral)
      .filter((m) => !before || BigInt(m.id) < BigInt(before))
      .reverse()
      .slice(0, limit);
    return ok(newestFirst.map((m) => this.world.messageWire(m)));
  }

  private checkContent(content: unknown): RestAnswer | undefined {
    if (typeof content !== "string" || content.trim() === "")
      return error(400, 50006, "Cannot send an empty message");
    if (content.length > CONTENT_LIMIT)
      return error(400, 50035, "Invalid Form Body", {
        content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
      });
    return undefined;
  }

  private create(channel: DChannel, body: Json | undefined, extra: Partial<DMessage> = {}): RestAnswer {
    const files = this.files;
    // A message with files may have no text.
    const bad =
      files.length > 0 && (body?.content ?? "") === "" ? undefined : this.checkContent(body?.content);
    if (bad) return bad;
    // As Discord: with `enforce_nonce`, a post whose nonce the same author used in this channel in
    // the past few minutes returns that message and creates none.
    const nonce =
      body?.enforce_nonce === true && body.nonce !== undefined
        ? `${channel.id}:${String(body.nonce)}`
        : undefined;
    const earlier = nonce ? this.nonces.get(nonce) : undefined;
    if (earlier && this.now() - earlier.at < NONCE_WINDOW_MS) {
      const first = this.world.find(channel.id, earlier.messageId);
      if (first) return ok(this.world.messageWire(first));
    }
    const ref = body?.message_reference as { message_id?: string; fail_if_not_exists?: boolean } | undefined;
    let reference: DMessage["reference"];
    if (ref?.message_id) {
      if (this.world.find(channel.id, ref.message_id))
        reference = { messageId: ref.message_id, channelId: channel.id };
      else if (ref.fail_if_not_exists !== false)
        return error(400, 50035, "Invalid Form Body", {
          message_reference: {
            _errors: [{ code: "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", message: "Unknown message" }],
          },
        });
    }
    const attachments = files.map((f) =>
      (this.cdn as DiscordCdn).add({ id: this.world.snowflake(), channelId: channel.id, ...f }),
    );
    const msg = this.world.add({
      channelId: channel.id,
      author: this.world.bot,
      content: String(body?.content ?? ""),
      mentions: [],
      ...(reference ? { reference } : {}),
      ...(attachments.length > 0 ? { attachments } : {}),
      ...extra,
    });
    if (nonce) this.nonces.set(nonce, { messageId: msg.id, at: this.now() });
    this.onCreate(msg);
    return ok(this.world.messageWire(msg));
  }

  private editMessage(msg: DMessage, body: Json | undefined): RestAnswer {
    if (msg.author.id !== BOT_USER_ID)
      return error(403, 50005, "Cannot edit a message authored by another user");
    const bad = this.checkContent(body?.content);
    if (bad) return bad;
    msg.content = String(body?.content);
    msg.contents.push(msg.content);
    return ok(this.world.messageWire(msg));
  }

  private startThread(channel: DChannel, msg: DMessage, body: Json | undefined): RestAnswer {
    if (channel.type !== ChannelType.GuildText)
      return error(400, 50024, "Cannot execute action on this channel type");
    if (channel.threadsAllowed === false) return error(403, 50013, "Missing Permissions");
    if (msg.threadId) return error(400, 160004, "A thread has already been created for this message");
    const name = typeof body?.name === "string" ? body.name : "";
    if (!name || name.length > 100)
      return error(400, 50035, "Invalid Form Body", {
        name: { _errors: [{ code: "BASE_TYPE_BAD_LENGTH" }] },
      });
    const thread = this.world.addChannel({
      id: msg.id,
      type: ChannelType.PublicThread,
      name,
      ...(channel.guildId ? { guildId: channel.guildId } : {}),
      parentId: channel.id,
      ownerId: BOT_USER_ID,
    });
    msg.threadId = thread.id;
    this.onThread(thread);
    return { status: 201, body: this.world.channelWire(thread) };
  }

  private react(method: string, msg: DMessage, emoji: string): RestAnswer {
    if (!emoji || /^[\w-]+$/.test(emoji)) return error(400, 10014, "Unknown Emoji");
    const users = msg.reactions.get(emoji) ?? new Set<string>();
    if (method === "PUT") users.add(BOT_USER_ID);
    else if (method === "DELETE") users.delete(BOT_USER_ID);
    else return error(405, 0, "405: Method Not Allowed");
    if (users.size) msg.reactions.set(emoji, users);
    else msg.reactions.delete(emoji);
    return { status: 204 };
  }

  private putCommands(path: string, body: Json | undefined): RestAnswer {
    const list = Array.isArray(body) ? body : [];
    this.commands.push({ scope: path.includes("/guilds/") ? "guild" : "global", body: list });
    return ok(
      list.map((c, i) => ({
        ...(c as Json),
        id: String(800000000000000000n + BigInt(i)),
        application_id: APPLICATION_ID,
        version: "1",
        type: 1,
      })),
    );
  }

  private callback(id: string, token: string, body: Json | undefined): RestAnswer {
    const i = this.interactions.get(id);
    if (!i || i.token !== token || this.now() - i.createdAt > 3000 || i.callbacks.length > 0)
      return error(404, 10062, "Unknown interaction");
    const type = Number(body?.type);
    const data = (body?.data ?? {}) as Json;
    const ephemeral = (Number(data.flags ?? 0) & 64) !== 0;
    i.callbacks.push({ type, at: this.now(), ephemeral });
    const channel = this.world.channels.get(i.channelId);
    if (channel && (type === 4 || type === 5)) {
      const m = this.world.add({
        channelId: channel.id,
        author: this.world.bot,
        content: type === 4 ? String(data.content ?? "") : "",
        mentions: [],
        interactionId: i.id,
        ...(ephemeral ? { ephemeral } : {}),
      });
      i.originalId = m.id;
    }
    return { status: 204 };
  }

  private webhook(method: string, seg: string[], body: Json | undefined): RestAnswer {
    const [, appId, token, sub, target] = seg;
    const i = [...this.interactions.values()].find((x) => x.token === token);
    if (appId !== APPLICATION_ID || !i) return error(404, 10015, "Unknown Webhook");
    if (this.now() - i.createdAt > 15 * 60_000) return error(401, 50027, "Invalid Webhook Token");
    const channel = this.world.channels.get(i.channelId);
    if (!channel) return error(404, 10003, "Unknown Channel");
    if (!sub && method === "POST") {
      const flags = Number(body?.flags ?? 0);
      const answer = this.create(channel, body, {
        interactionId: i.id,
        ...((flags & 64) !== 0 ? { ephemeral: true } : {}),
      });
      const id = (answer.body as Json | undefined)?.id;
      if (typeof id === "string") i.followUps.push(id);
      return answer;
    }
    if (sub === "messages" && target) {
      const id = target === "@original" ? i.originalId : target;
      const msg = id ? this.world.find(channel.id, id) : undefined;
      if (!msg) return error(404, 10008, "Unknown Message");
      if (method === "PATCH") {
        const bad = this.checkContent(body?.content);
        if (bad) return bad;
        msg.content = String(body?.content);
        msg.contents.push(msg.content);
        return ok(this.world.messageWire(msg));
      }
      if (method === "DELETE") {
        msg.deleted = true;
        return { status: 204 };
      }
      if (method === "GET") return ok(this.world.messageWire(msg));
    }
    return error(405, 0, "405: Method Not Allowed");
  }
}

function ok(body: unknown): RestAnswer {
  return { status: 200, body };
}

function error(status: number, code: number, message: string, errors?: Json): RestAnswer {
  return { status, body: { code, message, ...(errors ? { errors } : {}) } };
}

function tooMany(retryAfterMs: number): RestAnswer {
  return {
    status: 429,
    body: { message: "You are being rate limited.", retry_after: retryAfterMs / 1000, global: false },
    headers: {
      "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
      "x-ratelimit-scope": "user",
    },
  };
}
