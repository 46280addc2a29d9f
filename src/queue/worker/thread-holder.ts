/**
 * One worker's tenure on one thread: from acquiring its lease to releasing it (or losing it, or
 * handing it over). The holder keeps the lease (`LeaseRenewer`), takes the inbox in order and
 * hands message items to its runs (`RunDriver`: recovery, checkpoints, events, persistence) and
 * `/new` / `/compact` items to `SessionCommands`, applies control signals, and releases the lease
 * only when the inbox is empty. The session and the agent are `ThreadSession`'s.
 */
import { randomUUID } from "node:crypto";
import type { AgentEvent } from "../../agent/types.js";
import type { ControlState, ThreadState } from "../state/types.js";
import { LeaseLostError } from "../store/errors.js";
import type { SessionStore } from "../store/types.js";
import type { AgentFactory, InboundFormatter, ModelResolver, RunSinkFactory } from "../types.js";
import type { AgentBinding, AgentCache, CachedAgent } from "./agent-cache.js";
import { type CompactionConfig, ThreadCompactor } from "./compaction-step.js";
import { type LeaseEvent, LeaseRenewer } from "./lease-renewer.js";
import { RunDriver } from "./run-driver.js";
import { SessionCommands } from "./session-commands.js";
import { ThreadSession } from "./thread-session.js";

export type { LeaseEvent } from "./lease-renewer.js";

/** Everything a holder needs; shared by all holders of one worker process. */
export interface HolderEnv {
  state: ThreadState;
  store: SessionStore;
  cache: AgentCache;
  factory: AgentFactory;
  sinks: RunSinkFactory;
  format: InboundFormatter;
  resolveModel: ModelResolver;
  fenceKey: (threadKey: string) => string;
  leaseTtlMs: number;
  collectDebounceMs: number;
  controlPollMs: number;
  compaction: CompactionConfig | undefined;
  onError: (error: unknown, context: string) => void;
  onLease?: (event: LeaseEvent) => void;
}

/** How a tenure ended: `released` (nothing left), `lost` (the lease), `handoff` (shutdown), `failed` (an error). */
export type HoldOutcome = "released" | "lost" | "handoff" | "failed";

export class ThreadHolder {
  private outcome: HoldOutcome | undefined;
  private handoff: "none" | "checkpoint" | "now" = "none";
  private readonly session: ThreadSession;
  private readonly compactor: ThreadCompactor;
  private readonly commands: SessionCommands;
  private readonly renewer: LeaseRenewer;
  private readonly runs: RunDriver;
  private seenVer = -1;
  private checking: Promise<void> | undefined;
  private recheck = false;
  private poll: ReturnType<typeof setInterval> | undefined;
  private wakeSleep: (() => void) | undefined;
  private releaseSentAt = 0;

  constructor(
    readonly threadKey: string,
    readonly token: string,
    private readonly env: HolderEnv,
  ) {
    this.session = new ThreadSession(threadKey, token, env, {
      binding: this.binding(),
      onLost: () => this.markLost(),
      onFailed: () => {
        this.outcome ??= "failed";
        this.stopNow();
      },
    });
    this.compactor = new ThreadCompactor({
      threadKey,
      store: env.store,
      config: env.compaction,
      session: this.session,
      onError: env.onError,
      mayCompact: () => this.active && !this.runs.current?.aborted,
      sessionEvent: () => this.entry?.onSessionEvent,
    });
    this.commands = new SessionCommands({
      threadKey,
      state: env.state,
      store: env.store,
      session: this.session,
      compactor: this.compactor,
      onError: env.onError,
      settleItems: (seqs) => this.settleItems(seqs),
      ended: () => this.outcome !== undefined,
      notice: (text) => this.notice(text),
      recordContextTokens: () => this.runs.recordContextTokens(),
    });
    this.renewer = new LeaseRenewer(threadKey, token, env, () => this.markLost());
    this.runs = new RunDriver({
      threadKey,
      token,
      env,
      session: this.session,
      compactor: this.compactor,
      active: () => this.active,
      handingOff: () => this.handoff !== "none",
      ended: () => this.outcome !== undefined,
      stopNow: () => this.stopNow(),
      markLost: () => this.markLost(),
      checkControl: () => this.checkControl(),
      notice: (text) => this.notice(text),
    });
  }

  private get active(): boolean {
    return this.outcome === undefined && this.handoff === "none";
  }

  /** Runs the tenure to its end. Never throws. */
  async hold(): Promise<HoldOutcome> {
    this.startTimers();
    try {
      await this.loop();
    } catch (e) {
      if (e instanceof LeaseLostError) this.markLost();
      else {
        this.env.onError(e, `working on thread ${this.threadKey}`);
        this.outcome ??= "failed";
        this.stopNow();
      }
    }
    this.renewer.stop();
    clearInterval(this.poll);
    await this.session.flush();
    const outcome: HoldOutcome = this.outcome ?? "handoff";
    await this.finish(outcome);
    return outcome;
  }

  /** A control notice for this thread arrived: re-read the durable state now. */
  notify(): void {
    void this.checkControl().catch((e: unknown) => this.env.onError(e, "reading control state"));
  }

  /** Shutdown: stop at the next checkpoint (`checkpoint`) or at once (`now`); another worker resumes. */
  beginHandoff(mode: "checkpoint" | "now"): void {
    if (this.outcome !== undefined) return;
    if (mode === "now" || !this.runs.current) this.stopNow();
    if (this.handoff !== "now") this.handoff = mode;
    this.wakeSleep?.();
  }

  private async loop(): Promise<void> {
    const { state } = this.env;
    await this.ensureAgent();
    await this.checkControl();
    await this.runs.recover();
    while (this.active) {
      const t = await state.take(this.threadKey, this.token, "next", this.env.collectDebounceMs);
      if (t.status === "lost") return this.markLost();
      if (t.status === "wait") {
        await this.sleep(t.waitMs);
        continue;
      }
      if (t.items.length === 0) {
        this.releaseSentAt = Date.now();
        const r = await state.release(this.threadKey, this.token);
        if (r === "released") {
          this.outcome = "released";
          return;
        }
        if (r === "lost") return this.markLost();
        await this.runs.recover();
        continue;
      }
      if (t.items[0]?.kind === "message") await this.runs.runItems(t.items);
      else await this.commands.run(t.items);
    }
  }

  // ---- lease ----

  private startTimers(): void {
    this.renewer.start();
    this.poll = setInterval(() => this.notify(), Math.max(20, this.env.controlPollMs));
    this.poll.unref?.();
  }

  /** Settles items the tenure is done with; false (and the tenure lost) when the lease is gone. */
  private async settleItems(seqs: readonly number[]): Promise<boolean> {
    if (await this.env.state.settle(this.threadKey, this.token, seqs, true)) return true;
    this.markLost();
    return false;
  }

  private markLost(): void {
    // A renewal still in flight when the tenure ended normally is not a loss.
    if (this.outcome !== undefined) return;
    this.outcome = "lost";
    this.env.onLease?.({ type: "lost", threadKey: this.threadKey, token: this.token, at: Date.now() });
    this.session.markLost();
    this.stopNow();
  }

  /** Stops the agent without writing anything more (the next holder continues from the session). */
  private stopNow(): void {
    this.session.stopWriting();
    this.entry?.agent.abort();
    this.wakeSleep?.();
  }

  private async finish(outcome: HoldOutcome): Promise<void> {
    const { state } = this.env;
    if (outcome === "released") {
      this.env.onLease?.({
        type: "released",
        threadKey: this.threadKey,
        token: this.token,
        at: this.releaseSentAt,
      });
      this.session.parkAgent();
      return;
    }
    // The agent may be ahead of the session (or stopped mid-run): never reuse it.
    this.session.forgetAgent();
    if (outcome === "handoff") {
      const sentAt = Date.now();
      await state.forceRelease(this.threadKey, this.token);
      this.env.onLease?.({ type: "handoff", threadKey: this.threadKey, token: this.token, at: sentAt });
    } else if (outcome === "failed") {
      await state.forceRelease(this.threadKey, this.token).catch(() => {});
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleep = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleep = done;
    });
  }

  private binding(): AgentBinding {
    return {
      getSteeringMessages: () => this.runs.fromInbox("steer"),
      getFollowUpMessages: () => this.runs.fromInbox("followUp"),
      onEvent: (event: AgentEvent) => this.runs.onAgentEvent(event),
      transformContext: (messages, signal) => this.compactor.beforeCall(messages, signal),
      appendEntry: (customType, data) => this.session.appendCustom(customType, data),
      currentInbound: () => [...(this.runs.current?.inbound ?? [])],
    };
  }

  private ensureAgent(): Promise<CachedAgent> {
    return this.session.ensureAgent();
  }

  private get entry(): CachedAgent | undefined {
    return this.session.entry;
  }

  // ---- control ----

  /** Re-reads the durable control state: aborts the run it targets, applies changed settings. */
  private checkControl(): Promise<void> {
    if (this.checking) {
      this.recheck = true;
      return this.checking;
    }
    this.checking = (async () => {
      try {
        do {
          this.recheck = false;
          const c = await this.env.state.readControl(this.threadKey);
          this.applyAbort(c);
          if (c.ver !== this.seenVer) {
            this.seenVer = c.ver;
            await this.session.applyStoredSettings(this.env.resolveModel);
          }
        } while (this.recheck);
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  private applyAbort(c: ControlState): void {
    this.commands.onControl(c);
    this.runs.applyAbort(c);
  }

  private async notice(text: string): Promise<void> {
    try {
      const sink = this.env.sinks(this.threadKey, `notice:${randomUUID()}`);
      await sink.onNotice(text);
      await sink.close();
    } catch (e) {
      this.env.onError(e, "posting a notice");
    }
  }
}
