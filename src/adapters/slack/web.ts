/**
 * The Slack Web API as the adapter uses it: one web-api client with retries off (the renderer owns
 * retries) and rate limits rejected at once (the renderer waits `retryAfterMs`), the bot's identity
 * from `auth.test`, and small caches (message → thread, user names). Works without any inbound
 * connection, so worker processes post and edit through it.
 */
import { webApi } from "@slack/bolt";
import type { StructuredLogger } from "../../agent/logger.js";
import { BoundedMap } from "../bounded-map.js";
import { type ChatUser, type HistoryMessage, isChannelError } from "../types.js";
import { slackErrorCode, toChannelError } from "./errors.js";
import { encodeMessageRef, isDmChannel, tsToMs } from "./ids.js";
import { slackTextToPlain } from "./inbound.js";

export interface SlackIdentity {
  teamId: string;
  userId: string;
  botId: string;
}

type Json = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export class SlackWeb {
  private readonly client: InstanceType<typeof webApi.WebClient>;
  private identityP: Promise<SlackIdentity> | undefined;
  /** `channel:ts` → the root ts of its thread (`""`: top level, no thread). */
  private readonly threads = new BoundedMap<string, string>(20_000);
  private readonly names = new BoundedMap<string, ChatUser>(5_000, 3_600_000);
  private namesBroken = false;

  constructor(
    token: string,
    apiUrl: string | undefined,
    private readonly log: StructuredLogger,
    identity?: SlackIdentity,
  ) {
    this.client = new webApi.WebClient(token, {
      ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logLevel: webApi.LogLevel.ERROR,
    });
    if (identity) this.identityP = Promise.resolve(identity);
  }

  /**
   * One Web API call; failures become `ChannelError`, except the Slack error codes in `okCodes`,
   * which resolve `{}` (e.g. `already_reacted` for an idempotent reaction).
   */
  async call(method: string, args: Json, okCodes: string[] = []): Promise<Json> {
    try {
      return (await this.client.apiCall(method, args)) as unknown as Json;
    } catch (err) {
      const code = slackErrorCode(err);
      if (code && okCodes.includes(code)) return {};
      throw toChannelError(err, method);
    }
  }

  /** `auth.test`, once (retried on the next use if it failed). */
  identity(): Promise<SlackIdentity> {
    if (!this.identityP) {
      const p = this.call("auth.test", {}).then((r) => {
        const teamId = str(r.team_id);
        const userId = str(r.user_id);
        const botId = str(r.bot_id);
        if (!teamId || !userId || !botId)
          throw new Error("Slack auth.test returned no bot identity: is the token a bot token (xoxb-)?");
        return { teamId, userId, botId };
      });
      p.catch(() => {
        if (this.identityP === p) this.identityP = undefined;
      });
      this.identityP = p;
    }
    return this.identityP;
  }

  rememberThread(channel: string, ts: string, threadTs: string | undefined): void {
    this.threads.set(`${channel}:${ts}`, threadTs ?? "");
  }

  /**
   * The root ts of the thread `ts` lives in (undefined: a DM's top level). Cached; otherwise asks
   * `conversations.replies`, which returns the thread's messages for a parent or a reply.
   */
  async threadOf(channel: string, ts: string): Promise<string | undefined> {
    const cached = this.threads.get(`${channel}:${ts}`);
    if (cached !== undefined) return cached || (isDmChannel(channel) ? undefined : ts);
    let root: string | undefined;
    try {
      const r = await this.call("conversations.replies", { channel, ts, limit: 1 });
      const first = Array.isArray(r.messages) ? (r.messages[0] as Json | undefined) : undefined;
      root = str(first?.thread_ts);
    } catch (err) {
      this.log.debug({ channel, err }, "slack: thread lookup failed");
    }
    this.rememberThread(channel, ts, root);
    return root ?? (isDmChannel(channel) ? undefined : ts);
  }

  /** Whether the bot started or replied in the thread (parent's author and `reply_users`). */
  async botInThread(channel: string, threadTs: string): Promise<boolean> {
    const me = await this.identity();
    const r = await this.call("conversations.replies", { channel, ts: threadTs, limit: 1 });
    const parent = Array.isArray(r.messages) ? (r.messages[0] as Json | undefined) : undefined;
    if (!parent) return false;
    const replyUsers = Array.isArray(parent.reply_users) ? parent.reply_users : [];
    return parent.user === me.userId || parent.bot_id === me.botId || replyUsers.includes(me.userId);
  }

  /** The user with a display name when `users.info` is allowed (needs `users:read`); cached. */
  async user(id: string): Promise<ChatUser> {
    const cached = this.names.get(id);
    if (cached) return cached;
    let user: ChatUser = { id, isBot: false };
    if (!this.namesBroken) {
      try {
        const r = await this.call("users.info", { user: id });
        const u = (r.user ?? {}) as Json;
        const profile = (u.profile ?? {}) as Json;
        const name = str(profile.display_name) ?? str(u.real_name) ?? str(u.name);
        user = { id, isBot: u.is_bot === true, ...(name ? { name } : {}) };
      } catch (err) {
        if (isChannelError(err, "forbidden")) {
          this.namesBroken = true;
          this.log.warn(
            { err },
            "slack: users.info is not allowed (add the users:read scope); user names are left out",
          );
        }
      }
    }
    this.names.set(id, user);
    return user;
  }

  /**
   * The replies of thread `threadTs` in `channel` page by page (200 messages each, oldest first),
   * at most `maxPages` pages; `args` adds to `conversations.replies`'s arguments. Rejects when
   * Slack cannot be asked.
   */
  async *replyPages(channel: string, threadTs: string, args: Json, maxPages: number): AsyncGenerator<Json[]> {
    let cursor: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const r = await this.call("conversations.replies", {
        channel,
        ts: threadTs,
        limit: 200,
        ...args,
        ...(cursor ? { cursor } : {}),
      });
      yield (Array.isArray(r.messages) ? r.messages : []) as Json[];
      cursor = str((r.response_metadata as Json | undefined)?.next_cursor);
      if (!cursor) return;
    }
  }

  /**
   * Messages of a thread (or a DM's top level), oldest first, at most `limit`, older than `beforeTs`.
   */
  async history(
    team: string,
    channel: string,
    threadTs: string | undefined,
    limit: number,
    beforeTs: string | undefined,
  ): Promise<HistoryMessage[]> {
    const me = await this.identity();
    const collected: Json[] = [];
    if (threadTs === undefined) {
      const r = await this.call("conversations.history", {
        channel,
        limit: Math.min(limit, 200),
        ...(beforeTs ? { latest: beforeTs, inclusive: false } : {}),
      });
      collected.push(...((Array.isArray(r.messages) ? r.messages : []) as Json[]).reverse());
    } else {
      const older = beforeTs ? { latest: beforeTs, inclusive: false } : {};
      for await (const page of this.replyPages(channel, threadTs, older, 50)) collected.push(...page);
    }
    const out: HistoryMessage[] = [];
    for (const m of collected) {
      const ts = str(m.ts);
      if (!ts || (beforeTs && Number(ts) >= Number(beforeTs))) continue;
      if (
        m.subtype !== undefined &&
        m.subtype !== "bot_message" &&
        m.subtype !== "thread_broadcast" &&
        m.subtype !== "file_share"
      )
        continue;
      const fromBot = m.user === me.userId || m.bot_id === me.botId;
      const userId = str(m.user) ?? str(m.bot_id) ?? "unknown";
      out.push({
        messageId: encodeMessageRef(team, channel, ts),
        user: { id: userId, isBot: fromBot || str(m.bot_id) !== undefined },
        text: slackTextToPlain(typeof m.text === "string" ? m.text : "", me.userId),
        timestamp: tsToMs(ts),
        fromBot,
      });
    }
    return out.slice(-limit);
  }
}
