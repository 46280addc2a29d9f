/**
 * Discord gateway events → the contract's inbound handlers. Each channel's events are handled in
 * order; each event carries its id (`eventId`), and the runtime's event claim behind the handlers
 * handles each id once (a resumed session may replay events); application commands are deferred
 * before their handler runs. Nothing here throws into discord.js's emitter.
 */
import { type Client, Events } from "discord.js";
import type { Clock } from "../../agent/clock.js";
import type { StructuredLogger } from "../../agent/logger.js";
import { BoundedMap } from "../bounded-map.js";
import { capInboundText, type InboundHandlers } from "../types.js";
import type { DiscordApi } from "./api.js";
import type { Conversations } from "./conversations.js";
import {
  type RawReaction,
  rawDmReaction,
  toInboundCommand,
  toInboundMessage,
  toInboundReaction,
} from "./inbound.js";
import { commandResponder, deferCommand } from "./interactions.js";

export interface DiscordEventsOptions {
  api: DiscordApi;
  conv: Conversations;
  clock: Clock;
  log: StructuredLogger;
  ephemeralCommands: boolean;
  /** Longest inbound message text (see `capInboundText`). */
  maxInboundChars?: number;
  /** Post plain text into a conversation (command answers after the interaction token expired). */
  postToChannel: (threadKey: string, text: string) => Promise<void>;
}

export class DiscordEvents {
  private handlers: InboundHandlers | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Reaction dispatches by content → `session:sequence`, filled from raw packets. */
  private readonly reactionIds = new BoundedMap<string, string>(1000, 60_000);
  private readonly sessions = new Map<number, string>();

  constructor(private readonly o: DiscordEventsOptions) {}

  /** Start delivering to `handlers`. */
  open(handlers: InboundHandlers): void {
    this.handlers = handlers;
  }

  /** Stop delivering; resolves when no handler runs any more. */
  async close(): Promise<void> {
    this.handlers = undefined;
    await Promise.allSettled([...this.inflight]);
  }

  /** Wire a shard's client: every event goes through `deliver` once. */
  attach(client: Client, shardId: number): void {
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
          const r = rawDmReaction(d, added, `discord:reaction:${seq}`, this.o.clock.now(), client.user?.id);
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
          const raw = await toInboundMessage(message, client, this.o.conv);
          const m = raw && { ...raw, text: capInboundText(raw.text, this.o.maxInboundChars) };
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
        const at = this.o.clock.now();
        this.track(
          async () => {
            const r = await toInboundReaction(reaction, user, added, eventId, at, client, this.o.conv, (id) =>
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
          clock: this.o.clock,
          log: this.o.log,
          ephemeral: this.o.ephemeralCommands,
          postToChannel: (text: string) => this.o.postToChannel(base.threadKey, text),
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
      const c = await this.o.api.getChannel(id);
      return { type: c.type, parent: c.parent_id ?? null };
    } catch (err) {
      this.o.log.debug({ channel: id, err }, "discord: channel lookup failed");
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
      this.o.log.error({ kind, err }, "discord: could not handle an event");
    });
    this.inflight.add(run);
    if (order) this.queues.set(order, run);
    void run.finally(() => {
      this.inflight.delete(run);
      if (order && this.queues.get(order) === run) this.queues.delete(order);
    });
  }

  /**
   * Run a handler; `ack` (command deferral) runs before it. A failure is logged; the event claim
   * behind the handler lets a redelivery through.
   */
  private async deliver(
    eventId: string,
    kind: string,
    fn: (h: InboundHandlers) => unknown,
    ack?: () => Promise<void>,
  ): Promise<void> {
    const handlers = this.handlers;
    if (!handlers) return;
    try {
      await ack?.();
      await fn(handlers);
    } catch (err) {
      this.o.log.error({ eventId, kind, err }, "discord: inbound handler failed");
    }
  }
}
