/**
 * The gateway side of the runtime: `deliver` (event claim → inbox → wake) and `control` (stop, model,
 * thinking level, new session). Shared by both runtimes; what differs is behind `ThreadState`,
 * `Waker`, `ControlBus` and the session store.
 */

import { randomUUID } from "node:crypto";
import type { InboundMessage } from "../adapters/types.js";
// The one command parser (lane/contracts: the dispatcher's own copies of these two were removed).
import { isStopCommand, parseModeOverride } from "../extensions/commands/parser.js";
import type { ControlBus } from "./control-bus.js";
import type { EventClaims } from "./event-claims.js";
import {
  describeDropped,
  describeMessages,
  discardedNotice,
  droppedNotice,
  refusedNotice,
} from "./inbox-item.js";
import type { DropPolicy, ThreadState, Waker } from "./state/types.js";
import type { SessionStore } from "./store/types.js";
import type {
  ControlCommand,
  ControlResult,
  DeliverResult,
  DeliveryMode,
  RunSinkFactory,
  ThreadStatus,
} from "./types.js";
import { DEFAULT_INBOX_CAP } from "./types.js";

export interface DispatcherOptions {
  state: ThreadState;
  /** The one dedupe point of platform events (a claim held while the event is delivered). */
  claims: EventClaims;
  waker: Waker;
  bus: ControlBus;
  store: SessionStore;
  sinks: RunSinkFactory;
  /** Most queued messages per thread. Default `DEFAULT_INBOX_CAP`. */
  inboxCap?: number;
  /** Full inbox: refuse the new message (`new`, default) or drop the oldest (`old`). */
  dropPolicy?: DropPolicy;
  /** Mode when `deliver` gets none. Default `steer`. */
  defaultMode?: DeliveryMode;
  /** The delivery mode of a thread's channel: used when `deliver` gets none, and shown by `status`. */
  modeOf?: (threadKey: string) => DeliveryMode | undefined;
  /** Sets the thread's wake flag and makes sure a wake job exists, with nothing queued (`finishRenders`). */
  rewake: (threadKey: string) => Promise<void>;
  /** Where failures that must not reach the platform are reported. Default: one line on stderr. */
  onError?: (error: unknown, context: string) => void;
}

/** Where runtime errors go when no `onError` is given: stderr, with the error (its stack included). */
export function defaultOnError(error: unknown, context: string): void {
  console.error(`runtime: ${context}:`, error);
}

/** Delivers messages and control commands to threads. */
export class Dispatcher {
  private readonly cap: number;
  private readonly dropPolicy: DropPolicy;
  private readonly defaultMode: DeliveryMode;
  private readonly onError: (error: unknown, context: string) => void;

  /** Wake jobs being added for deliveries that already resolved. */
  private readonly waking = new Set<Promise<void>>();

  constructor(private readonly o: DispatcherOptions) {
    this.cap = Math.max(1, o.inboxCap ?? DEFAULT_INBOX_CAP);
    this.dropPolicy = o.dropPolicy ?? "new";
    this.defaultMode = o.defaultMode ?? "steer";
    this.onError = o.onError ?? defaultOnError;
  }

  /**
   * Delivers once per `eventId` (through the event claim: a redelivery while the first is still
   * being stored waits for it), appends to the thread's inbox and makes sure a worker wakes for it.
   * Resolves once the message is durable; rejects (and releases the claim, so a platform retry gets
   * through) when it could not be stored. A bare `stop`/`/stop` aborts the thread instead;
   * `/steer …` and `/followup …` choose the mode of one message.
   */
  async deliver(inbound: InboundMessage, mode?: DeliveryMode): Promise<DeliverResult> {
    const out = await this.o.claims.once(inbound.eventId, () => this.deliverNow(inbound, mode));
    return out.status === "duplicate" ? { status: "duplicate" } : out.value;
  }

  private async deliverNow(inbound: InboundMessage, mode?: DeliveryMode): Promise<DeliverResult> {
    if (isStopCommand(inbound.text)) {
      const r = await this.stopThread(inbound.threadKey, "Stopped");
      return { status: "stopped", wasRunning: r.wasRunning, discarded: r.discarded };
    }
    const override = parseModeOverride(inbound.text);
    const message = override.mode ? { ...inbound, text: override.text } : inbound;
    return this.enqueue(message, override.mode ?? mode ?? this.modeOf(inbound.threadKey));
  }

  private async enqueue(inbound: InboundMessage, mode: DeliveryMode): Promise<DeliverResult> {
    const { state, waker } = this.o;
    const threadKey = inbound.threadKey;
    const out = await state.append(
      threadKey,
      { mode, kind: "message", message: inbound },
      {
        cap: this.cap,
        dropPolicy: this.dropPolicy,
      },
    );
    if (out.accepted && out.repeated)
      return { status: "queued", seq: out.seq, depth: out.depth, idle: !out.active, dropped: [] };
    if (!out.accepted) {
      await this.notice(
        threadKey,
        refusedNotice(describeDropped({ seq: 0, at: 0, mode, kind: "message", message: inbound }), this.cap),
      );
      return { status: "refused", depth: out.depth };
    }
    // The message is durable: from here on a failure must not make the platform retry (that would
    // queue it twice). A missing wake job is repaired by the sweeper; a missed publish by the
    // holder's next checkpoint. The wake job is not waited for: the caller acknowledges the message
    // (typing, a reaction) while it is added; `drain()` waits for the ones still on their way.
    if (out.woke) this.track(waker.wake(threadKey, out.wakeMarker));
    if (mode === "interrupt") await this.publish(threadKey);
    const dropped = describeMessages(out.dropped);
    if (dropped.length > 0) {
      const text =
        mode === "interrupt" ? discardedNotice(dropped, "Interrupted") : droppedNotice(dropped, this.cap);
      await this.notice(threadKey, text);
    }
    return { status: "queued", seq: out.seq, depth: out.depth, idle: !out.active, dropped };
  }

  /** Resolves once every wake job a resolved delivery started adding was added (or failed). */
  async drain(): Promise<void> {
    await Promise.all([...this.waking]);
  }

  private track(wake: Promise<void>): void {
    const p = wake.catch((e: unknown) => this.onError(e, "adding a wake job"));
    this.waking.add(p);
    void p.finally(() => this.waking.delete(p));
  }

  /**
   * Runs a control command. `stop` and `newSession` abort the run in progress (its running tool sees
   * the abort at once through pub/sub) and discard queued messages; `setModel` and
   * `setThinkingLevel` are stored as the thread's settings and reach a running agent before its
   * next LLM call. Settings survive restarts; the holder re-reads them at every checkpoint, so a
   * command sent while no worker listens is not lost.
   */
  async control(threadKey: string, command: ControlCommand): Promise<ControlResult> {
    const { state, store } = this.o;
    switch (command.type) {
      case "stop":
        return this.stopThread(threadKey, "Stopped");
      case "newSession": {
        const stopped = await this.stopThread(threadKey, "New session");
        const out = await state.append(
          threadKey,
          { mode: "followUp", kind: "newSession" },
          {
            cap: Number.MAX_SAFE_INTEGER,
            dropPolicy: "new",
          },
        );
        if (out.accepted && out.woke) await this.o.waker.wake(threadKey, out.wakeMarker);
        return stopped;
      }
      case "compact": {
        const out = await state.append(
          threadKey,
          {
            mode: "followUp",
            kind: "compact",
            ...(command.instructions?.trim() ? { instructions: command.instructions.trim() } : {}),
          },
          { cap: Number.MAX_SAFE_INTEGER, dropPolicy: "new" },
        );
        if (out.accepted && out.woke)
          await this.o.waker
            .wake(threadKey, out.wakeMarker)
            .catch((e: unknown) => this.onError(e, "adding a wake job"));
        return { wasRunning: out.active, discarded: [] };
      }
      case "finishRenders": {
        await this.o.rewake(threadKey);
        const probe = await state.probe(threadKey);
        return { wasRunning: probe.active, discarded: [] };
      }
      case "setModel":
      case "setThinkingLevel": {
        await store.updateThreadMeta(
          threadKey,
          command.type === "setModel" ? { model: command.model } : { thinkingLevel: command.level },
        );
        await state.touchControl(threadKey);
        const probe = await state.probe(threadKey);
        await this.publish(threadKey);
        return { wasRunning: probe.active, discarded: [] };
      }
    }
  }

  /** What `/status` needs from the runtime side. */
  async status(threadKey: string): Promise<ThreadStatus> {
    const [probe, meta, contextTokens] = await Promise.all([
      this.o.state.probe(threadKey),
      this.o.store.getThreadMeta(threadKey),
      this.o.state.contextTokens(threadKey),
    ]);
    // Inflight items without a lease are a run whose worker died: it is still in progress.
    const status: ThreadStatus = {
      active: probe.active || probe.inflightDepth > 0,
      inboxDepth: probe.inboxDepth,
      meta,
      mode: this.modeOf(threadKey),
    };
    if (contextTokens !== undefined) status.contextTokens = contextTokens;
    return status;
  }

  private modeOf(threadKey: string): DeliveryMode {
    try {
      return this.o.modeOf?.(threadKey) ?? this.defaultMode;
    } catch (e) {
      this.onError(e, `the delivery mode of ${threadKey}`);
      return this.defaultMode;
    }
  }

  private async stopThread(threadKey: string, why: string): Promise<ControlResult> {
    const out = await this.o.state.stop(threadKey);
    await this.publish(threadKey);
    const discarded = describeMessages(out.discarded);
    const text = discardedNotice(discarded, why);
    if (text) await this.notice(threadKey, text);
    return { wasRunning: out.active, discarded };
  }

  /** Tells the holder (wherever it runs) to re-read the thread's control state now. */
  private async publish(threadKey: string): Promise<void> {
    await this.o.bus.publish(threadKey).catch((e: unknown) => this.onError(e, "publishing a control notice"));
  }

  /** Posts a notice into the thread through a one-off sink; a failure is reported, never thrown. */
  private async notice(threadKey: string, text: string): Promise<void> {
    try {
      const sink = this.o.sinks(threadKey, `notice:${randomUUID()}`);
      await sink.onNotice(text);
      await sink.close();
    } catch (e) {
      this.onError(e, `posting a notice to ${threadKey}`);
    }
  }
}
