/**
 * The Discord REST calls the adapter makes, over discord.js's REST client (per-route buckets,
 * global limit). Works without a gateway connection, so workers post and edit through it.
 *
 * Rate limits on message routes are surfaced as `ChannelError("rate_limited")` at once instead of
 * being queued inside discord.js: the renderer then waits `retryAfterMs`, skips frames that went
 * stale meanwhile, and charges the wait to the channel's shared budget (other processes back off
 * too). Other routes (reactions, typing, threads, commands) wait inside discord.js's queue. REST's
 * own retries are off; the renderer retries the final text.
 */
import { REST, type RESTOptions, Routes } from "discord.js";
import { discordCode, toChannelError } from "./errors.js";

type Json = Record<string, unknown>;

/** Raw Discord message fields the adapter reads. */
export interface RawMessage {
  id: string;
  channel_id: string;
  content: string;
  author?: { id: string; username?: string; global_name?: string | null; bot?: boolean };
  timestamp?: string;
  message_reference?: { message_id?: string; channel_id?: string };
  type?: number;
}

export interface RawChannel {
  id: string;
  type: number;
  guild_id?: string;
  parent_id?: string | null;
  owner_id?: string;
}

const MESSAGE_ROUTE = /\/messages(\/|$)/;

export class DiscordApi {
  readonly rest: REST;
  private appId: Promise<string> | undefined;
  private meP: Promise<string> | undefined;

  constructor(token: string, apiUrl: string | undefined, applicationId?: string) {
    const options: Partial<RESTOptions> = {
      version: "10",
      retries: 0,
      rejectOnRateLimit: (d) => MESSAGE_ROUTE.test(d.route) && !d.route.includes("/reactions"),
      ...(apiUrl ? { api: apiUrl } : {}),
    };
    this.rest = new REST(options).setToken(token);
    if (applicationId) this.appId = Promise.resolve(applicationId);
  }

  private async run<T>(what: string, fn: () => Promise<unknown>): Promise<T> {
    try {
      return (await fn()) as T;
    } catch (err) {
      throw toChannelError(err, what);
    }
  }

  createMessage(channel: string, body: Json): Promise<RawMessage> {
    return this.run("create message", () => this.rest.post(Routes.channelMessages(channel), { body }));
  }

  editMessage(channel: string, message: string, body: Json): Promise<RawMessage> {
    return this.run("edit message", () => this.rest.patch(Routes.channelMessage(channel, message), { body }));
  }

  async deleteMessage(channel: string, message: string): Promise<void> {
    await this.run("delete message", () => this.rest.delete(Routes.channelMessage(channel, message)));
  }

  getMessage(channel: string, message: string): Promise<RawMessage> {
    return this.run("fetch message", () => this.rest.get(Routes.channelMessage(channel, message)));
  }

  /** Messages before `before` (newest first, as Discord returns them). */
  listMessages(channel: string, limit: number, before?: string): Promise<RawMessage[]> {
    const query = new URLSearchParams({ limit: String(Math.min(100, Math.max(1, limit))) });
    if (before) query.set("before", before);
    return this.run("fetch messages", () => this.rest.get(Routes.channelMessages(channel), { query }));
  }

  getChannel(channel: string): Promise<RawChannel> {
    return this.run("fetch channel", () => this.rest.get(Routes.channel(channel)));
  }

  async react(channel: string, message: string, emojiPath: string, add: boolean): Promise<void> {
    const route = Routes.channelMessageOwnReaction(channel, message, emojiPath);
    await this.run(add ? "add reaction" : "remove reaction", () =>
      add ? this.rest.put(route) : this.rest.delete(route),
    );
  }

  async typing(channel: string): Promise<void> {
    await this.run("typing", () => this.rest.post(Routes.channelTyping(channel)));
  }

  /**
   * Start a public thread on a message; the thread's id is the message's id. Resolves `"exists"`
   * when the message already has one (Discord error 160004).
   */
  async startThread(channel: string, message: string, name: string): Promise<RawChannel | "exists"> {
    try {
      return (await this.rest.post(Routes.threads(channel, message), {
        body: { name, auto_archive_duration: 1440 },
      })) as RawChannel;
    } catch (err) {
      if (discordCode(err) === 160004) return "exists";
      throw toChannelError(err, "start thread");
    }
  }

  /** The bot's user id (`GET /users/@me`, once). */
  botUserId(): Promise<string> {
    if (!this.meP) {
      const p = this.run<{ id: string }>("fetch bot user", () => this.rest.get(Routes.user("@me"))).then(
        (u) => u.id,
      );
      p.catch(() => {
        if (this.meP === p) this.meP = undefined;
      });
      this.meP = p;
    }
    return this.meP;
  }

  /** The application id (from the config, else `GET /applications/@me`, once). */
  applicationId(): Promise<string> {
    if (!this.appId) {
      const p = this.run<{ id: string }>("fetch application", () =>
        this.rest.get(Routes.currentApplication()),
      ).then((a) => a.id);
      p.catch(() => {
        if (this.appId === p) this.appId = undefined;
      });
      this.appId = p;
    }
    return this.appId;
  }

  /** Replace the application's commands, in one guild or globally. */
  async putCommands(body: Json[], guildId?: string): Promise<void> {
    const app = await this.applicationId();
    const route = guildId ? Routes.applicationGuildCommands(app, guildId) : Routes.applicationCommands(app);
    await this.run("register commands", () => this.rest.put(route, { body }));
  }
}
