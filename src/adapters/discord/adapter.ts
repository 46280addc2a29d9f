/**
 * The Discord channel adapter: discord.js gateway clients (one per shard, each behind an optional
 * connection lease) for inbound events, Discord REST for everything outbound. See docs/discord.md
 * for the portal setup, intents and permissions.
 */
import { type ClientOptions, GatewayIntentBits, Partials } from "discord.js";
import { type Clock, systemClock } from "../../agent/clock.js";
import { type StructuredLogger, silentLogger } from "../../agent/logger.js";
import { toDiscordMarkdown } from "../render/markdown.js";
import {
  type AdapterCapabilities,
  type AttachmentRef,
  type ChannelAdapter,
  ChannelError,
  type CommandSpec,
  type ConnectionLease,
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
import { DiscordApi } from "./api.js";
import { Conversations } from "./conversations.js";
import { discordReactionPath } from "./emoji.js";
import { DiscordEvents } from "./events.js";
import { DISCORD_DOWNLOAD_LIMIT, DISCORD_UPLOAD_LIMIT, downloadAttachment, postAttachment } from "./files.js";
import { fetchHistory } from "./history.js";
import { decodeMessageRef, decodeThreadKey, encodeMessageRef, encodeThreadKey } from "./ids.js";
import { DISCORD_CONTENT_LIMIT } from "./interactions.js";
import { discordProbe } from "./probe.js";
import { ShardConnection } from "./shard.js";

/** The gateway intents the adapter needs. MessageContent is privileged: enable it in the portal. */
const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.GuildMessageReactions,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.DirectMessageReactions,
  GatewayIntentBits.MessageContent,
];

export interface DiscordAdapterConfig {
  /** Bot token. Never logged. */
  token: string;
  /** REST base URL (default Discord's `https://discord.com/api`); tests point it at a fake. */
  apiUrl?: string;
  /** Application id (default: asked from Discord when commands are registered). */
  applicationId?: string;
  /** Register commands in this guild (instant) instead of globally (up to an hour to show). */
  guildId?: string;
  /** Commands registered at `start()`. */
  commands?: CommandSpec[];
  /** Shards: `count` in total (default 1); this process serves `ids` (default all). */
  shards?: { count?: number; ids?: number[] };
  /** A lease per shard, so one gateway process at a time holds each shard's connection. */
  lease?: (shardId: number) => ConnectionLease;
  /** Shared store: thread-or-chain decisions and which conversation a message belongs to. */
  store?: KeyValueStore;
  /** Key prefix for `store` (default `DEFAULT_KEY_PREFIX`). */
  keyPrefix?: string;
  /** Defer command answers ephemerally (default false: the channel sees them). */
  ephemeralCommands?: boolean;
  /** Name of a started thread when the mention has no text (default "Conversation"). */
  defaultThreadName?: string;
  editIntervalMs?: number;
  /** Budget per channel for posts and edits (default 5 per 5 s, Discord's message limit). */
  rateRule?: RateRule;
  clock?: Clock;
  logger?: StructuredLogger;
  /**
   * Longest inbound message text in characters (default 20,000, as the web chat). Longer text is
   * cut and ends with a visible "[… message truncated: N characters over the limit]"; attachments
   * are kept.
   */
  maxInboundChars?: number;
}

const NO_PINGS = { parse: [], replied_user: false };

export class DiscordAdapter implements ChannelAdapter {
  readonly platform = "discord" as const;
  readonly capabilities: AdapterCapabilities;
  private readonly api: DiscordApi;
  private readonly conv: Conversations;
  private readonly log: StructuredLogger;
  private readonly clock: Clock;
  private readonly events: DiscordEvents;
  private shards: ShardConnection[] = [];
  private readonly states = new Map<string, ConnectionStatus>();

  constructor(private readonly config: DiscordAdapterConfig) {
    this.log = config.logger ?? silentLogger;
    this.clock = config.clock ?? systemClock;
    this.api = new DiscordApi(config.token, config.apiUrl, config.applicationId);
    this.conv = new Conversations({
      api: this.api,
      log: this.log,
      defaultThreadName: config.defaultThreadName ?? "Conversation",
      ...(config.store ? { store: config.store } : {}),
      ...(config.keyPrefix ? { prefix: config.keyPrefix } : {}),
    });
    this.events = new DiscordEvents({
      api: this.api,
      conv: this.conv,
      clock: this.clock,
      log: this.log,
      ephemeralCommands: config.ephemeralCommands ?? false,
      ...(config.maxInboundChars !== undefined ? { maxInboundChars: config.maxInboundChars } : {}),
      postToChannel: async (threadKey, text) => {
        await this.post(threadKey, text, { format: "plain" });
      },
    });
    this.capabilities = {
      maxMessageLength: DISCORD_CONTENT_LIMIT,
      editIntervalMs: config.editIntervalMs ?? 1000,
      markdown: "discord",
      nativeCommands: true,
      reactions: true,
      edits: true,
      typingDurationMs: 10_000,
      history: true,
      idempotentPosts: true,
      files: { maxDownloadBytes: DISCORD_DOWNLOAD_LIMIT, maxUploadBytes: DISCORD_UPLOAD_LIMIT },
    };
  }

  // ---- inbound ---------------------------------------------------------------------------

  async start(handlers: InboundHandlers): Promise<void> {
    if (this.shards.length) throw new Error("DiscordAdapter.start() called twice; call stop() first.");
    this.events.open(handlers);
    if (this.config.commands?.length) {
      try {
        await this.registerCommands(this.config.commands);
      } catch (err) {
        this.log.error({ err }, "discord: could not register application commands");
      }
    }
    const count = this.config.shards?.count ?? 1;
    const ids = this.config.shards?.ids ?? Array.from({ length: count }, (_, i) => i);
    const clientOptions: ClientOptions = {
      intents: DISCORD_INTENTS,
      partials: [Partials.Channel, Partials.Message, Partials.Reaction, Partials.User],
      allowedMentions: { parse: [], repliedUser: false },
      ...(this.config.apiUrl ? { rest: { api: this.config.apiUrl } } : {}),
    };
    this.shards = ids.map((id) => {
      const name = `discord:shard:${id}`;
      return new ShardConnection({
        id,
        count,
        token: this.config.token,
        clientOptions,
        log: this.log,
        attach: (client, shardId) => this.events.attach(client, shardId),
        onState: (state, detail) =>
          this.states.set(name, { name, state, since: this.clock.now(), ...(detail ? { detail } : {}) }),
        ...(this.config.lease ? { lease: this.config.lease(id) } : {}),
      });
    });
    try {
      await Promise.all(this.shards.map((s) => s.start()));
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    const shards = this.shards;
    this.shards = [];
    await Promise.allSettled(shards.map((s) => s.stop()));
    await this.events.close();
  }

  connections(): ConnectionStatus[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  // ---- outbound --------------------------------------------------------------------------

  private render(text: string, format: "markdown" | "plain" | undefined): string {
    const out = (format === "plain" ? text : toDiscordMarkdown(text)).replace(/^\n+/, "").trimEnd();
    if (out.length > DISCORD_CONTENT_LIMIT)
      throw new ChannelError(
        "too_long",
        `Discord message is ${out.length} characters; the limit is ${DISCORD_CONTENT_LIMIT}`,
        "discord",
      );
    return out;
  }

  async post(threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    const content = this.render(text, opts.format);
    return this.send(threadKey, content, opts, (channel, body) => this.api.createMessage(channel, body));
  }

  /** An attachment's bytes from the CDN (an expired link is refreshed); see files.ts. */
  download(file: AttachmentRef, opts?: DownloadOptions): Promise<DownloadedFile> {
    return downloadAttachment(this.api, this.config.apiUrl, file, opts);
  }

  /** A message with `file` attached and the caption as its text; the key is its nonce. */
  async uploadFile(threadKey: string, file: OutgoingFile, opts: UploadOptions = {}): Promise<MessageRef> {
    const content = opts.caption ? this.render(opts.caption, "markdown") : "";
    return this.send(threadKey, content, opts, (channel, body) =>
      postAttachment(this.api, channel, file, body),
    );
  }

  /** One message into the thread's conversation (a reply where asked), made by `create`. */
  private async send(
    threadKey: string,
    content: string,
    opts: PostOptions,
    create: (channel: string, body: Record<string, unknown>) => Promise<{ id: string }>,
  ): Promise<MessageRef> {
    const k = decodeThreadKey(threadKey);
    let target = await this.conv.target(threadKey);
    // A reply refers to the message it answers, inside the conversation's channel (its thread, or
    // the channel of a reply chain); a message elsewhere is not referenced.
    if (opts.replyTo) {
      const r = decodeMessageRef(opts.replyTo);
      if (r.channel === target.channel) target = { channel: r.channel, replyTo: r.message };
    }
    const m = await create(target.channel, {
      content,
      allowed_mentions: NO_PINGS,
      ...(target.replyTo
        ? { message_reference: { message_id: target.replyTo, fail_if_not_exists: false } }
        : {}),
      ...(opts.silent ? { flags: 4096 } : {}),
      // A repeat of this post within minutes returns the first message instead of a second copy.
      ...(opts.idempotencyKey ? { nonce: opts.idempotencyKey, enforce_nonce: true } : {}),
    });
    // Messages outside a thread find their conversation through this record (reactions, replies).
    if (k.guild && target.channel === k.channel)
      await this.conv.rememberMessage(target.channel, m.id, threadKey);
    return encodeMessageRef(target.channel, m.id);
  }

  async edit(ref: MessageRef, text: string, opts: EditOptions = {}): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.api.editMessage(r.channel, r.message, {
      content: this.render(text, opts.format),
      allowed_mentions: NO_PINGS,
    });
  }

  async delete(ref: MessageRef): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.api.deleteMessage(r.channel, r.message);
  }

  private reactionPath(emoji: string): string {
    const path = discordReactionPath(emoji);
    if (!path)
      throw new ChannelError(
        "bad_request",
        `cannot react with ${emoji}: use a Unicode emoji or name:id`,
        "discord",
      );
    return path;
  }

  async react(ref: MessageRef, emoji: string): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.api.react(r.channel, r.message, this.reactionPath(emoji), true);
  }

  async unreact(ref: MessageRef, emoji: string): Promise<void> {
    const r = decodeMessageRef(ref);
    await this.api.react(r.channel, r.message, this.reactionPath(emoji), false);
  }

  /** Typing in the conversation; for a new conversation this starts its thread. */
  async typing(threadKey: string): Promise<void> {
    const target = await this.conv.target(threadKey);
    await this.api.typing(target.channel);
  }

  /** Messages of a conversation count against its thread (a channel of its own) or its channel. */
  channelOf(threadKey: string): string {
    const k = decodeThreadKey(threadKey);
    return `discord:${k.anchor ?? k.channel}`;
  }

  rateRuleFor(): RateRule {
    return this.config.rateRule ?? { limit: 5, windowMs: 5000 };
  }

  /** A guild channel's top level (`discord:G:C:0`, threads count under their parent) holds its defaults. */
  channelDefaultsKey(threadKey: string): string | undefined {
    const k = decodeThreadKey(threadKey);
    return k.guild ? encodeThreadKey(k.guild, k.channel, undefined) : undefined;
  }

  fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    return fetchHistory(this.api, this.conv, threadKey, limit, before);
  }

  /** `users/@me` with the bot token. */
  probe(): CredentialProbe[] {
    return [discordProbe(this.config.token, this.config.apiUrl)];
  }

  async registerCommands(commands: CommandSpec[]): Promise<void> {
    const body = commands.map((c) => ({
      name: c.name.toLowerCase().slice(0, 32),
      description: (c.description || c.name).slice(0, 100),
      type: 1,
      options: [{ type: 3, name: "text", description: "Arguments", required: false }],
    }));
    await this.api.putCommands(body, this.config.guildId);
  }
}
