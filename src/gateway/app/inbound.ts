/**
 * The inbound pipeline every adapter's events go through on a gateway process:
 *
 * message → access gate (one notice per thread) → a command? (`/model x` or a bare `stop` after the
 * mention: run it through the extensions) → else thread context for a new thread → `deliver` with
 * the channel's delivery mode → once durable, the acknowledgement: the reaction (👀) in channels,
 * the typing indicator in DMs (an idle thread only: a running one shows it already).
 *
 * command (native) → access gate → the extensions' command, answered through the platform's
 * acknowledgement where it has one; an unknown name goes to the agent as a message.
 *
 * reaction → the extensions' reaction handlers (approvals). Any gateway process may receive it:
 * pending approvals live in the shared approval store.
 *
 * Every event runs under the runtime's event claim (`handleEvent`, the one dedupe point): a
 * redelivery of an event handled before is dropped as a duplicate, one that arrives while another
 * attempt handles it waits for that attempt's outcome, one whose first attempt died is handled.
 * A rejection (Redis down, the claim still busy) propagates to the adapter, which then does not
 * acknowledge the event to the platform, so the platform's retry gets through.
 */
import type {
  ChannelAdapter,
  InboundCommand,
  InboundHandlers,
  InboundMessage,
  InboundReaction,
  Platform,
} from "../../adapters/types.js";
import type { AccessGate } from "../../extensions/access/gate.js";
import { parseCommandText, parseNativeCommand } from "../../extensions/commands/parser.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import type { ThreadUser } from "../../extensions/types.js";
import type { SessionStore, ThreadMeta } from "../../queue/store/types.js";
import type { EventHandler, Runtime } from "../../queue/types.js";
import type { ChannelsConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import { type Logger, threadLogger } from "../log.js";
import { acknowledgeDelivery } from "./acknowledge.js";
import { attachThreadContext } from "./thread-context.js";
import { ThreadHost, type ThreadHostDeps } from "./thread-host.js";

export interface InboundPipelineOptions {
  runtime: Runtime;
  store: SessionStore;
  runner: ExtensionRunner;
  gate: AccessGate;
  channels: ChannelsConfig;
  hostDeps: ThreadHostDeps;
  metrics: SwitchboardMetrics;
  logger: Logger;
}

/** A thread's metadata being read: the value, or the read's error (it never rejects). */
type MetaRead = Promise<{ meta: ThreadMeta | undefined } | { error: unknown }>;

function threadUser(user: { id: string; name?: string }): ThreadUser {
  return user.name ? { id: user.id, name: user.name } : { id: user.id };
}

export class InboundPipeline {
  constructor(private readonly o: InboundPipelineOptions) {}

  /** The handlers to start `adapter` with. */
  handlersFor(adapter: ChannelAdapter): InboundHandlers {
    return {
      onMessage: (m) => {
        // The thread's metadata is read beside the event's claim, not after it (a round trip off
        // every message's way to the inbox); a duplicate event only wastes the read. A claim that
        // waited for another attempt reads it again: the thread may have changed meanwhile.
        const ahead = this.readMeta(m.threadKey);
        return this.once(m, (claim) => this.onMessage(adapter, m, claim.waited ? undefined : ahead));
      },
      onCommand: (c) => this.once(c, () => this.onCommand(adapter, c)),
      onReaction: (r) => this.once(r, () => this.onReaction(r)),
    };
  }

  /** Runs `handle` under the event's claim; a duplicate is counted and dropped. */
  private async once(
    e: { eventId: string; platform: Platform; threadKey: string },
    handle: EventHandler<void>,
  ) {
    const out = await this.o.runtime.handleEvent(e.eventId, handle);
    if (out.status === "duplicate") {
      this.o.metrics.inboundMessage(e.platform, "duplicate");
      this.o.logger.debug({ eventId: e.eventId, threadKey: e.threadKey }, "duplicate event ignored");
    }
  }

  async onMessage(adapter: ChannelAdapter, m: InboundMessage, ahead?: MetaRead): Promise<void> {
    const { metrics } = this.o;
    const log = threadLogger(this.o.logger, { threadKey: m.threadKey, platform: m.platform });
    const read = ahead ?? this.readMeta(m.threadKey);
    // Adapters deliver an unmentioned group message only inside a conversation the bot takes part
    // in (a Slack or Discord thread); with a session there, it counts as addressed.
    const addressed = m.mentioned || m.isDirect || (await this.hasSession(read, log));
    const verdict = await this.o.gate.check({ ...m, mentioned: addressed, threadKey: m.threadKey });
    if (!verdict.run) {
      metrics.inboundMessage(m.platform, "denied");
      log.debug({ reason: verdict.reason, user: m.user.id }, "message not allowed");
      if (verdict.notice) await this.notify(adapter, m.threadKey, verdict.notice, log);
      return;
    }
    const command = parseCommandText(m.text);
    if (command) {
      const host = this.host(m, threadUser(m.user));
      if (await this.o.runner.bind(host).runCommand(command.name, command.args)) {
        metrics.inboundMessage(m.platform, "command");
        log.info({ command: command.name, user: m.user.id }, "command");
        return;
      }
    }
    await this.deliver(adapter, m, log, read);
  }

  async onCommand(adapter: ChannelAdapter, c: InboundCommand): Promise<void> {
    const { metrics } = this.o;
    const log = threadLogger(this.o.logger, { threadKey: c.threadKey, platform: c.platform });
    const answer = this.answerer(adapter, c, log);
    const verdict = await this.o.gate.check({ ...c, mentioned: true, threadKey: c.threadKey });
    if (!verdict.run) {
      metrics.inboundMessage(c.platform, "denied");
      // The notice at most once per thread; a platform that needs an acknowledgement still gets one.
      if (verdict.notice) await answer.send(verdict.notice);
      else await answer.settle("You cannot use this bot here.");
      return;
    }
    const parsed = parseNativeCommand(c);
    const host = this.host(c, threadUser(c.user), (text) => answer.send(text));
    if (await this.o.runner.bind(host).runCommand(parsed.name, parsed.args)) {
      metrics.inboundMessage(c.platform, "command");
      log.info({ command: parsed.name, user: c.user.id }, "command");
      await answer.settle("Done.");
      return;
    }
    // Not one of ours (`/etc/hosts …` in the web chat, a stale menu entry): the agent reads it.
    const text = `/${parsed.name}${parsed.args ? ` ${parsed.args}` : ""}`;
    await this.deliver(
      adapter,
      {
        platform: c.platform,
        threadKey: c.threadKey,
        eventId: c.eventId,
        messageId: c.messageId ?? "",
        channelId: c.channelId,
        user: c.user,
        text,
        attachments: [],
        mentioned: true,
        isDirect: c.isDirect,
        timestamp: c.timestamp,
      },
      log,
    );
    await answer.settle("➡️ Sent to the agent.");
  }

  async onReaction(r: InboundReaction): Promise<void> {
    const host = this.host(r, threadUser(r.user));
    const user = { ...threadUser(r.user), isBot: r.user.isBot };
    await this.o.runner
      .bind(host)
      .handleReaction({ messageRef: r.messageId, emoji: r.emoji, user, added: r.added });
  }

  private async deliver(
    adapter: ChannelAdapter,
    m: InboundMessage,
    log: Logger,
    read: MetaRead = this.readMeta(m.threadKey),
  ): Promise<void> {
    const { metrics } = this.o;
    const channel = this.o.channels[m.platform];
    // One read of the thread's metadata serves both: context and defaults are for new threads only.
    const r = await read;
    if ("error" in r) log.warn({ err: r.error }, "could not read the thread's metadata");
    const meta = "error" in r ? undefined : (r.meta ?? null);
    const inbound = await attachThreadContext(m, {
      adapter,
      store: this.o.store,
      limit: channel.historyLimit,
      logger: log,
      queued: async () => {
        const st = await this.o.runtime.status(m.threadKey);
        return st.active || st.inboxDepth > 0;
      },
      ...(meta !== undefined ? { meta } : {}),
    });
    if (meta !== undefined && !meta?.currentSessionId)
      await this.inheritChannelDefaults(adapter, m, meta, log);
    // No mode: the runtime resolves the channel's (`modeOf`), the one place that does.
    const result = await this.o.runtime.deliver(inbound);
    switch (result.status) {
      case "queued":
        metrics.inboundMessage(m.platform, "accepted");
        log.info(
          { seq: result.seq, depth: result.depth, idle: result.idle, user: m.user.id },
          "message queued",
        );
        await acknowledgeDelivery(adapter, m, { idle: result.idle, ackReaction: channel.ackReaction, log });
        return;
      case "duplicate":
        metrics.inboundMessage(m.platform, "duplicate");
        log.debug({ eventId: m.eventId }, "duplicate message ignored");
        return;
      case "refused":
        metrics.inboundMessage(m.platform, "dropped");
        log.warn({ depth: result.depth }, "inbox full; message refused (the thread was told)");
        return;
      case "stopped":
        metrics.inboundMessage(m.platform, "command");
        return;
    }
  }

  private async hasSession(read: MetaRead, log: Logger): Promise<boolean> {
    const r = await read;
    if (!("error" in r)) return r.meta !== undefined;
    log.warn({ err: r.error }, "could not read the thread's metadata");
    return false;
  }

  /** Starts reading a thread's metadata; the result never rejects (an error is its value). */
  private readMeta(threadKey: string): MetaRead {
    return this.o.store.getThreadMeta(threadKey).then(
      (meta) => ({ meta }),
      (error: unknown) => ({ error }),
    );
  }

  private host(
    e: { platform: Platform; threadKey: string; channelId: string; isDirect?: boolean },
    user: ThreadUser,
    reply?: (text: string) => Promise<void>,
  ): ThreadHost {
    const scope = this.settingsScope(e);
    return new ThreadHost(this.o.hostDeps, {
      threadKey: e.threadKey,
      platform: e.platform,
      channelId: e.channelId,
      ...(e.isDirect !== undefined ? { isDirect: e.isDirect } : {}),
      ...(scope ? { settingsScope: scope } : {}),
      user: () => user,
      ...(reply ? { reply } : {}),
    });
  }

  /**
   * Where a settings command typed in `e` applies: in a channel, the channel's defaults when it was
   * typed at the channel's top level (the adapter says which key that is), else the thread.
   */
  private settingsScope(e: {
    platform: Platform;
    threadKey: string;
    isDirect?: boolean;
  }): "thread" | "channel" | undefined {
    if (e.isDirect) return undefined;
    const key = this.o.hostDeps.adapterOf(e.platform)?.channelDefaultsKey?.(e.threadKey);
    return key !== undefined && key === e.threadKey ? "channel" : "thread";
  }

  /**
   * A conversation's first message: the settings it has not set itself come from its channel's
   * defaults (`/model` typed at the channel's top level), so the next mention runs on what the
   * command's answer said. Later messages find the settings stored with the thread.
   */
  private async inheritChannelDefaults(
    adapter: ChannelAdapter,
    m: InboundMessage,
    meta: ThreadMeta | null,
    log: Logger,
  ): Promise<void> {
    const key = adapter.channelDefaultsKey?.(m.threadKey);
    if (!key || key === m.threadKey) return;
    try {
      const { store } = this.o;
      const defaults = await store.getThreadMeta(key);
      const patch = {
        ...(defaults?.model && !meta?.model ? { model: defaults.model } : {}),
        ...(defaults?.thinkingLevel && !meta?.thinkingLevel ? { thinkingLevel: defaults.thinkingLevel } : {}),
      };
      if (Object.keys(patch).length === 0) return;
      await store.updateThreadMeta(m.threadKey, patch);
      log.debug({ ...patch }, "new thread takes its channel's defaults");
    } catch (err) {
      log.warn({ err }, "could not read the channel's defaults; the thread starts with the deployment's");
    }
  }

  private async notify(adapter: ChannelAdapter, threadKey: string, text: string, log: Logger): Promise<void> {
    await adapter
      .post(threadKey, text, { format: "plain" })
      .catch((err: unknown) => log.warn({ err }, "could not post the access notice"));
  }

  /**
   * Answers to a native command: the first through `respond` (the platform's acknowledgement, which
   * must be used once), later ones as posts into the thread. `settle` acknowledges a command that
   * gave no answer, so the platform does not show it as failed.
   */
  private answerer(adapter: ChannelAdapter, c: InboundCommand, log: Logger) {
    let responded = false;
    const send = async (text: string): Promise<void> => {
      try {
        if (c.respond && !responded) {
          responded = true;
          await c.respond(text);
          return;
        }
        await adapter.post(c.threadKey, text, c.messageId ? { replyTo: c.messageId } : {});
      } catch (err) {
        log.warn({ err, command: c.name }, "could not answer a command");
      }
    };
    return {
      send,
      settle: async (text: string) => {
        if (c.respond && !responded) await send(text);
      },
    };
  }
}
