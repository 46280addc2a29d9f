/**
 * The fake Slack Web API: `POST /api/<method>` with a form-encoded (or JSON) body and
 * `Authorization: Bearer <token>`, answered as Slack does (HTTP 200 with `{ok:false,error}` for
 * platform errors, HTTP 429 with `Retry-After` for rate limits).
 */
import {
  APP_ID,
  BOT_ID,
  BOT_NAME,
  BOT_USER_ID,
  SLACK_TEXT_LIMIT,
  type SlackWorld,
  type StoredMessage,
  TEAM_ID,
} from "./world.js";

type Json = Record<string, unknown>;

export interface RateRule {
  limit: number;
  windowMs: number;
}

/** One Web API request as the fake saw it. */
export interface RecordedCall {
  method: string;
  params: Json;
  /** Fake clock time (ms). */
  at: number;
  /** HTTP status sent (200 also for `{ok:false}` answers). */
  status: number;
  /** The platform error, for `{ok:false}` answers. */
  error?: string;
}

export interface WebApiAnswer {
  status: number;
  body: Json;
  headers?: Record<string, string>;
}

/** Per-method rate rules; the key of a counter is the method plus the channel (or the team). */
export type RateRules = Partial<Record<string, RateRule | null>>;

/** Roughly Slack's published limits: 1 post per second per channel (short bursts), Tier 3 updates. */
export const DEFAULT_RATE_RULES: RateRules = {
  "chat.postMessage": { limit: 5, windowMs: 5000 },
  "chat.update": { limit: 50, windowMs: 60_000 },
};

/** Methods counted per channel rather than per workspace. */
const PER_CHANNEL = new Set(["chat.postMessage"]);

export class SlackWebApi {
  readonly calls: RecordedCall[] = [];
  private readonly windows = new Map<string, number[]>();
  private storm: { remaining: number; retryAfterSec: number; methods: string[] } | undefined;
  /** Base URL of the Socket Mode WebSocket, set by the server once it listens. */
  socketUrl = "";
  /** The `files.*` methods (files.ts), set by the server. */
  fileMethods: ((method: string, p: Json) => Json | undefined) | undefined;

  constructor(
    private readonly world: SlackWorld,
    private readonly now: () => number,
    readonly botToken: string,
    readonly appToken: string,
    private readonly rules: RateRules,
  ) {}

  /** The next `count` calls of `methods` get HTTP 429 with `Retry-After: retryAfterSec`. */
  rateLimitStorm(count: number, retryAfterSec: number, methods = ["chat.postMessage", "chat.update"]): void {
    this.storm = { remaining: count, retryAfterSec, methods };
  }

  handle(method: string, params: Json, auth: string | undefined): WebApiAnswer {
    const at = this.now();
    const answer = this.dispatch(method, params, auth);
    const error = answer.body.ok === false ? String(answer.body.error) : undefined;
    this.calls.push({ method, params, at, status: answer.status, ...(error ? { error } : {}) });
    return answer;
  }

  private dispatch(method: string, p: Json, auth: string | undefined): WebApiAnswer {
    const token = auth?.replace(/^Bearer\s+/i, "");
    if (method === "apps.connections.open") {
      if (token !== this.appToken) return fail("invalid_auth");
      return ok({ url: `${this.socketUrl}/link?ticket=${at36(this.now())}` });
    }
    if (token !== this.botToken) return fail(token ? "invalid_auth" : "not_authed");
    const limited = this.rateLimit(method, p);
    if (limited) return limited;
    switch (method) {
      case "auth.test":
        return ok({
          url: "https://fake.slack.test/",
          team: "Fake Team",
          user: BOT_NAME,
          team_id: TEAM_ID,
          user_id: BOT_USER_ID,
          bot_id: BOT_ID,
          app_id: APP_ID,
          is_enterprise_install: false,
        });
      case "chat.postMessage":
        return this.postMessage(p);
      case "chat.update":
        return this.update(p);
      case "chat.delete":
        return this.remove(p);
      case "reactions.add":
      case "reactions.remove":
        return this.react(p, method === "reactions.add");
      case "conversations.replies":
        return this.replies(p);
      case "conversations.history":
        return this.history(p);
      case "users.info":
        return this.userInfo(p);
      default: {
        const answer = this.fileMethods?.(method, p);
        return answer ? { status: 200, body: answer } : fail("unknown_method");
      }
    }
  }

  private rateLimit(method: string, p: Json): WebApiAnswer | undefined {
    if (this.storm && this.storm.remaining > 0 && this.storm.methods.includes(method)) {
      this.storm.remaining--;
      return tooMany(this.storm.retryAfterSec);
    }
    const rule = this.rules[method];
    if (!rule) return undefined;
    const key = PER_CHANNEL.has(method) ? `${method}:${String(p.channel)}` : method;
    const now = this.now();
    const hits = (this.windows.get(key) ?? []).filter((t) => t > now - rule.windowMs);
    if (hits.length >= rule.limit) {
      const oldest = hits[0] ?? now;
      this.windows.set(key, hits);
      return tooMany(Math.max(1, Math.ceil((oldest + rule.windowMs - now) / 1000)));
    }
    hits.push(now);
    this.windows.set(key, hits);
    return undefined;
  }

  private channelOf(p: Json): string | undefined {
    const id = typeof p.channel === "string" ? p.channel : undefined;
    return id && this.world.channels.has(id) ? id : undefined;
  }

  private postMessage(p: Json): WebApiAnswer {
    const channel = this.channelOf(p);
    if (!channel) return fail("channel_not_found");
    const text = typeof p.text === "string" ? p.text : "";
    if (!text.trim()) return fail("no_text");
    if (text.length > SLACK_TEXT_LIMIT) return fail("msg_too_long");
    const threadTs = typeof p.thread_ts === "string" && p.thread_ts ? p.thread_ts : undefined;
    if (threadTs && !this.world.find(channel, threadTs)) return fail("thread_not_found");
    const meta = typeof p.metadata === "string" ? parseJson(p.metadata) : p.metadata;
    const metadata =
      typeof meta === "object" && meta !== null && typeof (meta as Json).event_type === "string"
        ? (meta as Record<string, unknown>)
        : undefined;
    const msg = this.world.add({
      channel,
      user: BOT_USER_ID,
      botId: BOT_ID,
      text,
      ...(threadTs ? { threadTs } : {}),
      ...(metadata ? { metadata } : {}),
    });
    return ok({ channel, ts: msg.ts, message: this.world.wire(msg) });
  }

  private own(p: Json, ts: unknown): StoredMessage | WebApiAnswer {
    const channel = this.channelOf(p);
    if (!channel) return fail("channel_not_found");
    const msg = typeof ts === "string" ? this.world.find(channel, ts) : undefined;
    if (!msg) return fail("message_not_found");
    return msg;
  }

  private update(p: Json): WebApiAnswer {
    const msg = this.own(p, p.ts);
    if (!("ts" in msg)) return msg;
    if (msg.user !== BOT_USER_ID) return fail("cant_update_message");
    const text = typeof p.text === "string" ? p.text : "";
    if (!text.trim()) return fail("no_text");
    if (text.length > SLACK_TEXT_LIMIT) return fail("msg_too_long");
    msg.text = text;
    msg.texts.push(text);
    return ok({ channel: msg.channel, ts: msg.ts, text });
  }

  private remove(p: Json): WebApiAnswer {
    const msg = this.own(p, p.ts);
    if (!("ts" in msg)) return msg;
    if (msg.user !== BOT_USER_ID) return fail("cant_delete_message");
    msg.deleted = true;
    return ok({ channel: msg.channel, ts: msg.ts });
  }

  private react(p: Json, add: boolean): WebApiAnswer {
    const msg = this.own(p, p.timestamp);
    if (!("ts" in msg)) return msg;
    const name = typeof p.name === "string" ? p.name : "";
    if (!/^[a-z0-9_+'-]+(::skin-tone-[2-6])?$/.test(name)) return fail("invalid_name");
    const users = msg.reactions.get(name) ?? new Set<string>();
    if (add) {
      if (users.has(BOT_USER_ID)) return fail("already_reacted");
      users.add(BOT_USER_ID);
      msg.reactions.set(name, users);
    } else {
      if (!users.delete(BOT_USER_ID)) return fail("no_reaction");
      if (users.size === 0) msg.reactions.delete(name);
    }
    return ok({});
  }

  private replies(p: Json): WebApiAnswer {
    const channel = this.channelOf(p);
    if (!channel) return fail("channel_not_found");
    const ts = String(p.ts ?? "");
    const msg = this.world.find(channel, ts);
    if (!msg) return fail("thread_not_found");
    const root = msg.threadTs ?? msg.ts;
    const all = this.world.thread(channel, root);
    return page(
      all.filter((m) => inRange(m.ts, p)),
      p,
      (m) => this.wire(m, p),
    );
  }

  private history(p: Json): WebApiAnswer {
    const channel = this.channelOf(p);
    if (!channel) return fail("channel_not_found");
    const top = this.world
      .topLevel(channel)
      .filter((m) => inRange(m.ts, p))
      .reverse();
    return page(top, p, (m) => this.wire(m, p));
  }

  /** A message as the history methods list it: its metadata only with `include_all_metadata`, as Slack. */
  private wire(m: StoredMessage, p: Json): Json {
    const all = p.include_all_metadata === true || p.include_all_metadata === "true";
    return { ...this.world.wire(m), ...(all && m.metadata ? { metadata: m.metadata } : {}) };
  }

  private userInfo(p: Json): WebApiAnswer {
    const user = this.world.users.get(String(p.user ?? ""));
    if (!user) return fail("user_not_found");
    return ok({
      user: {
        id: user.id,
        team_id: TEAM_ID,
        name: user.name,
        real_name: user.name,
        is_bot: user.isBot ?? false,
        profile: {
          display_name: user.name,
          real_name: user.name,
          ...(user.botId ? { bot_id: user.botId } : {}),
        },
      },
    });
  }
}

function inRange(ts: string, p: Json): boolean {
  const inclusive = p.inclusive === true || p.inclusive === "true" || p.inclusive === "1";
  const n = Number(ts);
  if (p.latest !== undefined && p.latest !== "") {
    const latest = Number(p.latest);
    if (inclusive ? n > latest : n >= latest) return false;
  }
  if (p.oldest !== undefined && p.oldest !== "") {
    const oldest = Number(p.oldest);
    if (inclusive ? n < oldest : n <= oldest) return false;
  }
  return true;
}

/** Cursor pagination: the cursor is the offset into `items`. */
function page<T>(items: T[], p: Json, wire: (t: T) => Json): WebApiAnswer {
  const limit = Math.max(1, Math.min(1000, Number(p.limit ?? 100) || 100));
  const offset = Number(p.cursor ?? 0) || 0;
  const slice = items.slice(offset, offset + limit);
  const more = offset + limit < items.length;
  return ok({
    messages: slice.map(wire),
    has_more: more,
    response_metadata: { next_cursor: more ? String(offset + limit) : "" },
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function ok(body: Json): WebApiAnswer {
  return { status: 200, body: { ok: true, ...body } };
}

function fail(error: string): WebApiAnswer {
  return { status: 200, body: { ok: false, error } };
}

function tooMany(retryAfterSec: number): WebApiAnswer {
  return {
    status: 429,
    body: { ok: false, error: "ratelimited" },
    headers: { "retry-after": String(retryAfterSec) },
  };
}

function at36(n: number): string {
  return n.toString(36);
}
