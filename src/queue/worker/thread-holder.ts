/**
 * One worker's tenure on one thread: from acquiring its lease to releasing it (or losing it, or
 * handing it over). The holder renews the lease, recovers what a dead predecessor left, feeds the
 * agent from the inbox at its checkpoints, persists every message (fenced by the lease) as the run
 * goes, applies control signals, and releases the lease only when the inbox is empty.
 */
import { randomUUID } from "node:crypto";
import type { InboundMessage } from "../../adapters/types.js";
import { isContextOverflow } from "../../agent/llm/overflow.js";
import { estimateContextTokens } from "../../agent/session/compaction/tokens.js";
import type { SessionEntryInput } from "../../agent/session/types.js";
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import { describeMessages, discardedNotice } from "../inbox-item.js";
import type { ControlState, TakeOutcome, ThreadState } from "../state/types.js";
import { LeaseLostError } from "../store/errors.js";
import type { SessionStore } from "../store/types.js";
import type {
  AgentFactory,
  InboundFormatter,
  InboxItem,
  ModelResolver,
  RunSink,
  RunSinkFactory,
} from "../types.js";
import type { AgentBinding, AgentCache, CachedAgent } from "./agent-cache.js";
import { type CompactionAttempt, type CompactionConfig, ThreadCompactor } from "./compaction-step.js";
import { groupItems, heldSeqs, type ItemGroup } from "./item-messages.js";
import { danglingToolResults, needsAnswer } from "./recovery.js";
import { emitSessionEvent } from "./session-events.js";
import { asThinkingLevel, modelRef, ThreadSession } from "./thread-session.js";

/** A lease event, for observability and for the multi-process test's overlap check. */
export interface LeaseEvent {
  type: "acquired" | "renewed" | "released" | "lost" | "handoff";
  threadKey: string;
  token: string;
  /** `acquired`: when the reply arrived; others: when the request was sent (ms, `Date.now()`). */
  at: number;
  /** `acquired`: when the request was sent. */
  sentAt?: number;
}

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

interface ActiveRun {
  id: string;
  /**
   * The newest item the run has taken. A stop or interrupt aborts the run only while all its items
   * are older (`abortAt >= maxSeq`): a run that already took a newer message (the interrupt
   * itself) goes on and answers it. Undefined for a recovery run without items.
   */
  maxSeq: number | undefined;
  /** The control state's stop count when the run started (aborts an item-less run). */
  stopsAtStart: number;
  aborted: boolean;
  sink: RunSink;
  groups: Map<AgentMessage, ItemGroup>;
  /** Seqs of the run's items whose message the session holds. */
  persisted: Set<number>;
  /**
   * Events from a reply that overflowed the context window on: held back from the sink while the
   * holder compacts and retries (the user never sees the failed attempt), released if it does not.
   */
  heldBack?: AgentEvent[];
  /** The run already compacted and retried once after an overflow (never again). */
  retried: boolean;
  /** The chat messages the run answers, in the order it took them (`ctx.currentInbound()`). */
  inbound: InboundMessage[];
}

export class ThreadHolder {
  private outcome: HoldOutcome | undefined;
  private handoff: "none" | "checkpoint" | "now" = "none";
  private readonly session: ThreadSession;
  private readonly compactor: ThreadCompactor;
  private run: ActiveRun | undefined;
  private seenVer = -1;
  private checking: Promise<void> | undefined;
  private recheck = false;
  private timers: ReturnType<typeof setInterval>[] = [];
  private wakeSleep: (() => void) | undefined;
  private lastRenewOk = Date.now();
  /** A `/compact` in progress: a stop sent after it started cancels its summary request. */
  private manualCompaction: { controller: AbortController; stopsAtStart: number } | undefined;
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
      mayCompact: () => this.active && !this.run?.aborted,
      sessionEvent: () => this.entry?.onSessionEvent,
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
    for (const t of this.timers) clearInterval(t);
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
    if (mode === "now" || !this.run) this.stopNow();
    if (this.handoff !== "now") this.handoff = mode;
    this.wakeSleep?.();
  }

  private async loop(): Promise<void> {
    const { state } = this.env;
    await this.ensureAgent();
    await this.checkControl();
    await this.recover();
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
        await this.recover();
        continue;
      }
      const kind = t.items[0]?.kind;
      if (kind === "newSession") await this.startNewSession(t.items);
      else if (kind === "compact") await this.compactOnDemand(t.items);
      else await this.runItems(t.items);
    }
  }

  // ---- lease ----

  private startTimers(): void {
    const { state, leaseTtlMs } = this.env;
    const renew = setInterval(
      () => {
        const sentAt = Date.now();
        state.renew(this.threadKey, this.token, leaseTtlMs).then(
          (ok) => {
            if (!ok) return this.markLost();
            this.lastRenewOk = sentAt;
            this.env.onLease?.({ type: "renewed", threadKey: this.threadKey, token: this.token, at: sentAt });
          },
          (e: unknown) => {
            // Without a confirmed renewal for a whole TTL the lease may be gone: stop writing.
            if (Date.now() - this.lastRenewOk >= leaseTtlMs) this.markLost();
            this.env.onError(e, "renewing a lease");
          },
        );
      },
      Math.max(10, Math.floor(leaseTtlMs / 3)),
    );
    const poll = setInterval(() => this.notify(), Math.max(20, this.env.controlPollMs));
    renew.unref?.();
    poll.unref?.();
    this.timers.push(renew, poll);
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
      getSteeringMessages: () => this.fromInbox("steer"),
      getFollowUpMessages: () => this.fromInbox("followUp"),
      onEvent: (event: AgentEvent) => this.onAgentEvent(event),
      transformContext: (messages, signal) => this.compactor.beforeCall(messages, signal),
      appendEntry: (customType, data) => this.appendCustom(customType, data),
      currentInbound: () => [...(this.run?.inbound ?? [])],
    };
  }

  private async appendCustom(customType: string, data: unknown): Promise<void> {
    const stored = await this.session.write(
      data === undefined ? { type: "custom", customType } : { type: "custom", customType, data },
    );
    if (!stored)
      throw new Error(
        `The ${customType} entry was not written: this worker no longer holds thread ${this.threadKey}.`,
      );
  }

  private ensureAgent(): Promise<CachedAgent> {
    return this.session.ensureAgent();
  }

  private persist(input: SessionEntryInput, id?: string, after?: () => void): void {
    this.session.persist(input, id, after);
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
            await this.applySettings();
          }
        } while (this.recheck);
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  private applyAbort(c: ControlState): void {
    const manual = this.manualCompaction;
    if (manual && c.stops > manual.stopsAtStart) manual.controller.abort();
    const run = this.run;
    if (!run || run.aborted) return;
    if (run.maxSeq === undefined ? c.stops > run.stopsAtStart : c.abortAt >= run.maxSeq) {
      run.aborted = true;
      this.entry?.agent.abort();
    }
  }

  private async applySettings(): Promise<void> {
    const entry = this.entry;
    if (!entry) return;
    const meta = await this.env.store.getThreadMeta(this.threadKey);
    const agent = entry.agent;
    if (meta?.model && meta.model !== modelRef(agent.state.model)) {
      const model = this.env.resolveModel(meta.model);
      if (model) agent.setModel(model);
      else
        this.env.onError(
          new Error(`Unknown model "${meta.model}"; keeping ${modelRef(agent.state.model)}.`),
          "changing the model",
        );
    }
    const level = asThinkingLevel(meta?.thinkingLevel);
    if (level && level !== agent.state.thinkingLevel) agent.setThinkingLevel(level);
    this.session.recordSettings();
  }

  // ---- runs ----

  /** The agent's queue source at a checkpoint: control first, then the inbox by rule. */
  private async fromInbox(which: "steer" | "followUp"): Promise<AgentMessage[]> {
    if (this.handoff !== "none") {
      this.stopNow();
      return [];
    }
    await this.checkControl();
    const run = this.run;
    if (!this.active || !run || run.aborted) return [];
    const t = await this.env.state.take(
      this.threadKey,
      this.token,
      which === "steer" ? "steer" : "followUp",
      this.env.collectDebounceMs,
    );
    return this.accept(run, t);
  }

  private accept(run: ActiveRun, t: TakeOutcome): AgentMessage[] {
    if (t.status === "lost") {
      this.markLost();
      return [];
    }
    if (t.status === "wait") return [];
    // Aborted while the items were being taken: they stay unsaved and go back to the inbox when the
    // run settles, so the next run answers them.
    if (run.aborted) return [];
    for (const i of t.items) run.maxSeq = Math.max(run.maxSeq ?? 0, i.seq);
    const groups = groupItems(t.items, this.env.format);
    const grouped = new Set(groups.flatMap((g) => g.items.map((i) => i.seq)));
    // Items that make no message (damaged) count as delivered, so they cannot block the thread.
    for (const i of t.items) if (!grouped.has(i.seq)) run.persisted.add(i.seq);
    for (const g of groups) {
      run.groups.set(g.message, g);
      for (const i of g.items) if (i.message) run.inbound.push(i.message);
    }
    return groups.map((g) => g.message);
  }

  private onAgentEvent(event: AgentEvent): void {
    const run = this.run;
    if (run) {
      if (run.heldBack) run.heldBack.push(event);
      else if (event.type === "message_end" && this.mayRetryOverflow(run, event.message))
        run.heldBack = [event];
      else this.toSink(run, event);
    }
    if (event.type !== "message_end") return;
    const group = run?.groups.get(event.message);
    this.persist({ type: "message", message: event.message }, group?.entryId, () => {
      if (group && run) for (const i of group.items) run.persisted.add(i.seq);
    });
  }

  private toSink(run: ActiveRun, event: AgentEvent): void {
    try {
      run.sink.onEvent(event);
    } catch (e) {
      this.env.onError(e, "rendering an agent event");
    }
  }

  /** A failed reply that said the context was too long, in a run that may still compact and retry. */
  private mayRetryOverflow(run: ActiveRun, message: AgentMessage): boolean {
    if (run.retried || !this.env.compaction || message.role !== "assistant") return false;
    if (message.stopReason !== "error") return false;
    return isContextOverflow(message, this.entry?.agent.state.model.contextWindow);
  }

  /**
   * After a reply overflowed the context window: compact once (leaving the failed reply off the
   * branch) and retry the turn; a second overflow, or a compaction that cannot be made, shows the
   * error as it is.
   */
  private async retryAfterOverflow(run: ActiveRun): Promise<void> {
    const held = run.heldBack;
    const entry = this.entry;
    if (!held || !entry) return;
    run.heldBack = undefined;
    run.retried = true;
    if (this.active && !run.aborted) {
      const r = await this.compactor.compact("overflow");
      if (r.compacted && this.active && !run.aborted) {
        this.compactor.settle({ dropFailedTail: true });
        try {
          await entry.agent.continue();
        } catch (e) {
          this.env.onError(e, `retrying after a context overflow in ${this.threadKey}`);
        }
        return;
      }
    }
    for (const event of held) this.toSink(run, event);
  }

  private async startRun(maxSeq: number | undefined, stopsAtStart: number): Promise<ActiveRun> {
    const id = randomUUID();
    const run: ActiveRun = {
      id,
      maxSeq,
      stopsAtStart,
      aborted: false,
      sink: this.env.sinks(this.threadKey, id),
      groups: new Map(),
      persisted: new Set(),
      retried: false,
      inbound: [],
    };
    this.run = run;
    return run;
  }

  private async runItems(items: InboxItem[]): Promise<void> {
    const { state } = this.env;
    const c = await state.readControl(this.threadKey);
    const first = items[0] as InboxItem;
    if (!this.active) {
      // Handing over: the items go back to the inbox for the next holder.
      await state.settle(this.threadKey, this.token, [], false);
      return;
    }
    const stale = items.filter((i) => i.seq <= c.abortAt);
    if (stale.length > 0) {
      // Delivered before a stop or interrupt and not in the session (a stopped run's messages that
      // its worker never saved): the stop discards them, as it discards queued ones. The rest go
      // back to the inbox and start the next run.
      const ok = await state.settle(
        this.threadKey,
        this.token,
        stale.map((i) => i.seq),
        true,
      );
      if (!ok) return this.markLost();
      const text = discardedNotice(describeMessages(stale), "Stopped");
      if (text) await this.notice(text);
      return;
    }
    const entry = await this.ensureAgent();
    const run = await this.startRun(first.seq, c.stops);
    const messages = this.accept(run, { status: "taken", items });
    await this.drive(run, async () => {
      if (messages.length > 0) await entry.agent.prompt(await this.prepareRun(entry, messages));
    });
  }

  /** The factory's `prepareRun` (extensions' `before_agent_start`); a failure leaves the prompts as they are. */
  private async prepareRun(entry: CachedAgent, prompts: AgentMessage[]): Promise<AgentMessage[]> {
    if (!entry.prepareRun) return prompts;
    try {
      const prepared = await entry.prepareRun(prompts);
      // The prompts themselves are how the holder knows which inbox items the session holds, so
      // they go as they are; what the hook added goes before them.
      const added = Array.isArray(prepared) ? prepared.filter((m) => !prompts.includes(m)) : [];
      return [...added, ...prompts];
    } catch (e) {
      this.env.onError(e, `preparing a run of ${this.threadKey}`);
      return prompts;
    }
  }

  /** Runs the agent for `run`, then settles its items and checks compaction. */
  private async drive(run: ActiveRun, start: () => Promise<void>): Promise<void> {
    try {
      await start();
      await this.retryAfterOverflow(run);
    } finally {
      await this.session.flush();
      this.compactor.settle();
      if (run.heldBack) for (const event of run.heldBack.splice(0)) this.toSink(run, event);
      this.run = undefined;
      try {
        await run.sink.close();
      } catch (e) {
        this.env.onError(e, "closing a run's sink");
      }
    }
    if (this.outcome !== undefined) return;
    // A handed-over run is unfinished: its delivered items stay inflight for the next holder.
    const finished = this.handoff === "none";
    const ok = await this.env.state.settle(this.threadKey, this.token, [...run.persisted], finished);
    if (!ok) return this.markLost();
    if (finished && this.entry && !run.aborted) await this.compactor.afterRun();
    this.recordContextTokens();
  }

  /** Records the agent's context estimate for `status` (best effort). */
  private recordContextTokens(): void {
    const entry = this.entry;
    const set = this.env.state.setContextTokens;
    if (!entry || !set) return;
    const tokens = estimateContextTokens(entry.agent.state.messages).tokens;
    set
      .call(this.env.state, this.threadKey, tokens)
      .catch((e: unknown) => this.env.onError(e, "recording the context size"));
  }

  /** `/compact [instructions]`: compacts now, whatever the threshold, and says what it did. */
  private async compactOnDemand(items: InboxItem[]): Promise<void> {
    const item = items[0] as InboxItem;
    await this.ensureAgent();
    const c = await this.env.state.readControl(this.threadKey);
    const manual = { controller: new AbortController(), stopsAtStart: c.stops };
    this.manualCompaction = manual;
    let r: CompactionAttempt;
    try {
      r = await this.compactor.compact("manual", {
        ...(item.instructions !== undefined ? { instructions: item.instructions } : {}),
        signal: manual.controller.signal,
      });
    } finally {
      this.manualCompaction = undefined;
    }
    if (r.compacted) this.compactor.settle();
    await this.session.flush();
    if (this.outcome !== undefined) return;
    const ok = await this.env.state.settle(
      this.threadKey,
      this.token,
      items.map((i) => i.seq),
      true,
    );
    if (!ok) return this.markLost();
    this.recordContextTokens();
    await this.notice(
      r.compacted
        ? `Compacted the conversation: about ${tokenCount(r.tokensBefore)} → ${tokenCount(r.tokensAfter)} tokens.`
        : `Nothing compacted: ${r.reason ?? "there is not enough history yet"}.`,
    );
  }

  /**
   * What a dead (or handed-over) predecessor left: inflight items the session lacks go back to the
   * inbox; tool calls without a result get an error result; an unanswered tail is answered.
   */
  private async recover(): Promise<void> {
    const { state, store } = this.env;
    const entry = await this.ensureAgent();
    const inflight = await state.inflight(this.threadKey);
    let held: number[] = [];
    if (inflight.length > 0) {
      const branch = await store.readBranch(this.threadKey);
      held = heldSeqs(branch?.entries ?? [], inflight);
      if (held.length < inflight.length && branch) {
        // A compaction may have cut the marker out of the branch; the whole session still has it.
        const all = await store.readAll(this.threadKey, branch.header.id);
        held = heldSeqs(all.entries, inflight);
      }
      if (!(await state.settle(this.threadKey, this.token, held, false))) return this.markLost();
    }
    const closing = danglingToolResults(entry.agent.state.messages);
    for (const m of closing) {
      entry.agent.appendMessage(m);
      this.persist({ type: "message", message: m });
    }
    const heldItems = inflight.filter((i) => held.includes(i.seq));
    if (!needsAnswer(entry.agent.state.messages)) {
      if (heldItems.length > 0 && !(await state.settle(this.threadKey, this.token, held, true)))
        this.markLost();
      await this.session.flush();
      return;
    }
    const c = await state.readControl(this.threadKey);
    const maxSeq = heldItems.length > 0 ? Math.max(...heldItems.map((i) => i.seq)) : undefined;
    if (maxSeq !== undefined && c.abortAt >= maxSeq) {
      // A stop came after these messages: leave the question unanswered.
      await this.session.flush();
      if (!(await state.settle(this.threadKey, this.token, held, true))) this.markLost();
      return;
    }
    const run = await this.startRun(maxSeq, c.stops);
    for (const s of held) run.persisted.add(s);
    for (const i of heldItems) if (i.message) run.inbound.push(i.message);
    await this.drive(run, () => entry.agent.continue());
  }

  private async startNewSession(items: InboxItem[]): Promise<void> {
    const { state, store } = this.env;
    await this.session.flush();
    const seqs = items.map((i) => i.seq);
    const previous = this.entry;
    const verdict = await emitSessionEvent(
      previous?.onSessionEvent,
      { type: "session_before_switch", reason: "new" },
      this.env.onError,
    );
    if (verdict?.cancel) {
      if (!(await state.settle(this.threadKey, this.token, seqs, true))) return this.markLost();
      await this.notice(`Kept the current session: ${verdict.reason ?? "an extension cancelled /new"}.`);
      return;
    }
    const header = await store.newSession(this.threadKey, { fence: this.session.fence() });
    this.session.forgetAgent();
    if (!(await state.settle(this.threadKey, this.token, seqs, true))) return this.markLost();
    await this.session.ensureAgent(previous ? { switchedFrom: previous.sessionId } : {});
    await this.notice(`Started a new session (${header.id.slice(0, 8)}).`);
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

function tokenCount(n: number | undefined): string {
  return (n ?? 0).toLocaleString("en-US");
}
