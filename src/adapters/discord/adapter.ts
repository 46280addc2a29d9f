/**
 * The Discord channel adapter: discord.js gateway clients (one per shard, each behind an optional
 * connection lease) for inbound events, Discord REST for everything outbound. See docs/discord.md
 * for the portal setup, intents and permissions.
 */
import { type Client, type ClientOptions, Events, GatewayIntentBits, Partials } from "discord.js";
import { type Clock, systemClock } from "../render/clock.js";
import { toDiscordMarkdown } from "../render/markdown.js";
import {
  type AdapterCapabilities,
  type AdapterLogger,
  type ChannelAdapter,
  type ChannelAdapterFactory,
  ChannelError,
  type CommandSpec,
  type ConnectionLease,
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
import { DiscordApi } from "./api.js";
import { BoundedMap } from "./bounded-map.js";
import { Conversations } from "./conversations.js";
import { discordReactionPath } from "./emoji.js";
import { fetchHistory } from "./history.js";
import { decodeMessageRef, decodeThreadKey, encodeMessageRef } from "./ids.js";
import {
  type RawReaction,
  rawDmReaction,
  toInboundCommand,
  toInboundMessage,
  toInboundReaction,
} from "./inbound.js";
import { commandResponder, DISCORD_CONTENT_LIMIT, deferCommand } from "./interactions.js";
import { ShardConnection } from "./shard.js";

/** The gateway intents the adapter needs. MessageContent is privileged: enable it in the portal. */
export const DISCORD_INTENTS = [
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
  /** Cross-process dedupe of event ids (the in-process check always runs). */
  dedupe?: EventDeduper;
  /** Shared store: thread-or-chain decisions and which conversation a message belongs to. */
  store?: KeyValueStore;
  /** Key prefix for `store` (default `sb:`). */
  keyPrefix?: string;
  /** Defer command answers ephemerally (default false: the channel sees them). */
  ephemeralCommands?: boolean;
  /** Name of a started thread when the mention has no text (default "Conversation"). */
  defaultThreadName?: string;
  editIntervalMs?: number;
  /** Budget per channel for posts and edits (default 5 per 5 s, Discord's message limit). */
  rateRule?: RateRule;
  clock?: Clock;
  logger?: AdapterLogger;
}

const silent: AdapterLogger = { debug() {}, info() {}, warn() {}, error() {} };
const NO_PINGS = { parse: [], replied_user: false };

export class DiscordAdapter implements ChannelAdapter {
  readonly platform = "discord" as const;
  readonly capabilities: AdapterCapabilities;
  private readonly api: DiscordApi;
  private readonly conv: Conversations;
  private readonly log: AdapterLogger;
  private readonly clock: Clock;
  private handlers: InboundHandlers | undefined;
  private shards: ShardConnection[] = [];
  private readonly states = new Map<string, ConnectionStatus>();
  private readonly recent = new BoundedMap<string, "inflight" | "done">(10_000, 3_600_000);
  private readonly inflight = new Set<Promise<void>>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Reaction dispatches by content → `session:sequence`, filled from raw packets. */
  private readonly reactionIds = new BoundedMap<string, string>(1000, 60_000);
  private readonly sessions = new Map<number, string>();

  constructor(private readonly config: DiscordAdapterConfig) {
    this.log = config.logger ?? silent;
    this.clock = config.clock ?? systemClock;
    this.api = new DiscordApi(config.token, config.apiUrl, config.applicationId);
    this.conv = new Conversations({
      api: this.api,
      log: this.log,
      defaultThreadName: config.defaultThreadName ?? "Conversation",
      ...(config.store ? { store: config.store } : {}),
      ...(config.keyPrefix ? { prefix: config.keyPrefix } : {}),
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
    };
  }

  // ---- inbound ---------------------------------------------------------------------------

  async start(handlers: InboundHandlers): Promise<void> {
    if (this.shards.length) throw new Error("DiscordAdapter.start() called twice; call stop() first.");
    this.handlers = handlers;
    if (this.config.commands?.length) {
      try {
        await this.registerCommands(this.config.commands);
      } catch (err) {
        this.log.error({ err: (err as Error).message }, "discord: could not register application commands");
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
        attach: (client, shardId) => this.attach(client, shardId),
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
    this.handlers = undefined;
    await Promise.allSettled([...this.inflight]);
  }

  connections(): ConnectionStatus[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  private attach(client: Client, shardId: number): void {
    client.on(Events.Raw, (packet: { t?: string; s?: number; d?: Record<string, unknown> }) => {
      if (packet.t === "READY" && typeof packet.d?.session_id === "string")
        this.sessions.set(shardId, packet.d.session_id);
      const t = packet.t;
      if ((t === "MESSAGE_REACTION_ADD" || t === "MESSAGE_REACTION_REMOVE") && packet.d) {
        const d = packet.d as RawReaction;
        const seq = `${this.sessions.get(shardId) ?? shardId}:${packet.s}`;
        this.reactionIds.set(`${t}:${d.message_id}:${d.user_id}:${d.emoji?.id ?? d.emoji?.name}`, seq);
        const channel = typeof d.channel_id === "string" ? d.channel_id : "";
        if (d.guild_id === undefined && channel && !client.channels.cache.has(channel)) {
          const added = t === "MESSAGE_REACTION_ADD";
          const r = rawDmReaction(d, added, `discord:reaction:${seq}`, this.clock.now(), client.user?.id);
          if (r)
            this.track(
              () => this.deliver(r.eventId, "reaction", (h) => h.onReaction(r)),
              "reaction",
              channel,
            );
        }
      }
    });
    client.on(Events.MessageCreate, (message) => {
      this.track(
        async () => {
          const m = await toInboundMessage(message, client, this.conv);
          if (m) await this.deliver(m.eventId, "message", (h) => h.onMessage(m));
        },
        "message",
        message.channelId,
      );
    });
    const onReaction =
      (added: boolean) =>
      (reaction: Parameters<typeof toInboundReaction>[0], user: Parameters<typeof toInboundReaction>[1]) => {
        const t = added ? "MESSAGE_REACTION_ADD" : "MESSAGE_REACTION_REMOVE";
        const key = `${t}:${reaction.message.id}:${user.id}:${reaction.emoji.id ?? reaction.emoji.name}`;
        // Same session and sequence number ⇔ the same event replayed after a resume.
        const seq = this.reactionIds.get(key);
        const eventId = seq
          ? `discord:reaction:${seq}`
          : `discord:reaction:${reaction.message.id}:${user.id}:${reaction.emoji.id ?? reaction.emoji.name}:${added ? "add" : "remove"}`;
        const at = this.clock.now();
        this.track(
          async () => {
            const r = await toInboundReaction(reaction, user, added, eventId, at, client, this.conv, (id) =>
              this.channelInfo(id),
            );
            if (r) await this.deliver(r.eventId, "reaction", (h) => h.onReaction(r));
          },
          "reaction",
          reaction.message.channelId,
        );
      };
    client.on(Events.MessageReactionAdd, onReaction(true));
    client.on(Events.MessageReactionRemove, onReaction(false));
    client.on(Events.InteractionCreate, (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      this.track(async () => {
        const base = toInboundCommand(interaction);
        const replyOptions = {
          clock: this.clock,
          log: this.log,
          ephemeral: this.config.ephemeralCommands ?? false,
          postToChannel: async (text: string) => {
            await this.post(base.threadKey, text, { format: "plain" });
          },
        };
        let deferred = false;
        await this.deliver(
          base.eventId,
          "command",
          (h) => h.onCommand({ ...base, respond: commandResponder(interaction, deferred, replyOptions) }),
          async () => {
            deferred = await deferCommand(interaction, replyOptions);
          },
        );
      }, "command");
    });
  }

  private async channelInfo(id: string): Promise<{ type: number; parent?: string | null } | undefined> {
    try {
      const c = await this.api.getChannel(id);
      return { type: c.type, parent: c.parent_id ?? null };
    } catch (err) {
      this.log.debug({ channel: id, err: (err as Error).message }, "discord: channel lookup failed");
      return undefined;
    }
  }

  /**
   * Run inbound work without letting it throw into discord.js's emitter. Work with the same
   * `order` key (a channel) runs one after another, so a channel's events are handled and delivered
   * in the order Discord sent them (a mention must not overtake the message before it).
   */
  private track(fn: () => Promise<void>, kind: string, order?: string): void {
    const previous = order ? this.queues.get(order) : undefined;
    const run = (previous ?? Promise.resolve()).then(fn).catch((err) => {
      this.log.error(
        { kind, err: err instanceof Error ? err.message : String(err) },
        "discord: could not handle an event",
      );
    });
    this.inflight.add(run);
    if (order) this.queues.set(order, run);
    void run.finally(() => {
      this.inflight.delete(run);
      if (order && this.queues.get(order) === run) this.queues.delete(order);
    });
  }

  /**
   * Run a handler once per event id. `ack` (command deferral) runs after the duplicate check and
   * before the handler. A failed handler lets a redelivery through.
   */
  private async deliver(
    eventId: string,
    kind: string,
    fn: (h: InboundHandlers) => unknown,
    ack?: () => Promise<void>,
  ): Promise<void> {
    const handlers = this.handlers;
    if (!handlers || this.recent.has(eventId)) return;
    this.recent.set(eventId, "inflight");
    const dedupe = this.config.dedupe;
    if (dedupe) {
      try {
        if (!(await dedupe.claim(eventId))) {
          this.recent.set(eventId, "done");
          return;
        }
      } catch (err) {
        this.log.warn({ eventId, err: (err as Error).message }, "discord: dedupe check failed; delivering");
      }
    }
    try {
      await ack?.();
      await fn(handlers);
      this.recent.set(eventId, "done");
    } catch (err) {
      this.recent.delete(eventId);
      await dedupe?.release(eventId).catch(() => {});
      this.log.error({ eventId, kind, err: (err as Error).message }, "discord: inbound handler failed");
    }
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
    const k = decodeThreadKey(threadKey);
    const content = this.render(text, opts.format);
    let target = await this.conv.target(threadKey);
    if (opts.replyTo) {
      const r = decodeMessageRef(opts.replyTo);
      target = { channel: r.channel, replyTo: r.message };
    }
    const m = await this.api.createMessage(target.channel, {
      content,
      allowed_mentions: NO_PINGS,
      ...(target.replyTo
        ? { message_reference: { message_id: target.replyTo, fail_if_not_exists: false } }
        : {}),
      ...(opts.silent ? { flags: 4096 } : {}),
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

  fetchHistory(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]> {
    return fetchHistory(this.api, this.conv, threadKey, limit, before);
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

/** Build a Discord adapter from its config slice. */
export const createDiscordAdapter: ChannelAdapterFactory<DiscordAdapterConfig> = (config) =>
  new DiscordAdapter(config);
