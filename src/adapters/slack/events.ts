/**
 * Slack events from Bolt → the contract's inbound handlers: which messages are meant for the bot,
 * normalisation and delivery. Each event carries Slack's event id, which a retry repeats
 * (X-Slack-Retry-Num); the runtime's event claim behind the handlers handles each id once.
 * Slash commands are acked before their handler runs. Nothing here throws into Bolt.
 */
import type { App } from "@slack/bolt";
import type { StructuredLogger } from "../../agent/logger.js";
import { toSlackMrkdwn } from "../render/markdown.js";
import { ChannelError, capInboundText, type InboundHandlers } from "../types.js";
import { encodeMessageRef, encodeThreadKey } from "./ids.js";
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
import type { ThreadMembership } from "./threads.js";
import type { SlackIdentity, SlackWeb } from "./web.js";

export interface SlackEventsOptions {
  web: SlackWeb;
  threads: ThreadMembership;
  log: StructuredLogger;
  resolveUserNames?: boolean;
  /** Longest inbound message text (see `capInboundText`). */
  maxInboundChars?: number;
}

export class SlackEvents {
  private handlers: InboundHandlers | undefined;
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly o: SlackEventsOptions) {}

  /** Stop delivering; resolves when no handler runs any more. */
  async close(): Promise<void> {
    this.handlers = undefined;
    await Promise.allSettled([...this.inflight]);
  }

  /** Wire Bolt's listeners; events are delivered to `handlers` until `close()`. */
  register(app: App, me: SlackIdentity, handlers: InboundHandlers): void {
    this.handlers = handlers;
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
        this.o.log.warn({ err }, "slack: could not ack a slash command");
      }
      await this.onCommand(command, respond);
    });
    app.error(async (err) => {
      this.o.log.error({ err }, "slack: error while handling an event");
    });
  }

  /** Run a handler (a failure is logged: the event claim behind it lets a retry through). */
  private async deliver(eventId: string, kind: string, fn: (h: InboundHandlers) => unknown): Promise<void> {
    const handlers = this.handlers;
    if (!handlers) return;
    const run = (async () => {
      try {
        await fn(handlers);
      } catch (err) {
        this.o.log.error({ eventId, kind, err }, "slack: inbound handler failed");
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
      this.o.log.warn({ kind }, "slack: malformed message event ignored");
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
        !(await this.o.threads.includes(
          encodeThreadKey(team, e.channel, e.threadTs),
          e.channel,
          e.threadTs,
          e.ts,
        ))
      )
        return;
      mentioned = false;
    }
    const thread = threadOf(e);
    this.o.web.rememberThread(e.channel, e.ts, thread);
    if (kind === "app_mention") await this.o.threads.join(encodeThreadKey(team, e.channel, thread), e.ts);
    const user =
      this.o.resolveUserNames === false
        ? { id: e.user ?? "", isBot: false }
        : await this.o.web.user(e.user ?? "");
    const normalised = toInboundMessage(e, { team, eventId, botUserId: me.userId, mentioned, user });
    const message = { ...normalised, text: capInboundText(normalised.text, this.o.maxInboundChars) };
    await this.deliver(eventId, kind, (h) => h.onMessage(message));
  }

  private async onReaction(raw: unknown, body: unknown, me: SlackIdentity): Promise<void> {
    const r = readReactionEvent(raw);
    const eventId = this.eventIdOf(body);
    if (!r || !eventId) {
      this.o.log.warn({}, "slack: malformed reaction event ignored");
      return;
    }
    if (r.user === me.userId) return;
    const team = this.teamOf(body, me);
    const thread = await this.o.web.threadOf(r.channel, r.ts);
    const user =
      this.o.resolveUserNames === false ? { id: r.user, isBot: false } : await this.o.web.user(r.user);
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
      this.o.log.warn({}, "slack: malformed slash command ignored");
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
}
