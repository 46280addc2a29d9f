/**
 * The runs of one tenure: starting a run from taken inbox items (after the factory's `prepareRun`)
 * or from what a dead predecessor left, feeding the agent from the inbox at its checkpoints (it is
 * the agent's binding: queue sources, per-call compaction, events), persisting its messages,
 * compacting once and retrying after a context overflow, and settling the run when it ends. What
 * it may do at each step it asks the tenure; a run is the tenure's work from `begin` to `settled`.
 */
import { randomUUID } from "node:crypto";
import type { InboundMessage } from "../../adapters/types.js";
import type { AgentHooks } from "../../agent/agent.js";
import { isContextOverflow } from "../../agent/llm/overflow.js";
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import { describeMessages, discardedNotice, steersRun } from "../inbox-item.js";
import type { OwedRender } from "../state/render-journal.js";
import type { ControlState, TakeOutcome } from "../state/types.js";
import type { InboxItem, RenderLog, RunSink } from "../types.js";
import { ActiveRun } from "./active-run.js";
import type { AgentBinding, CachedAgent } from "./agent-cache.js";
import type { ThreadCompactor } from "./compaction-step.js";
import type { ControlWatch } from "./control-watch.js";
import type { HolderEnv } from "./holder-env.js";
import { heldSeqs } from "./item-messages.js";
import { postNotice } from "./notices.js";
import { danglingToolResults, needsAnswer } from "./recovery.js";
import { finishOwedRenders, renderLog } from "./render-log.js";
import type { Checkpoint } from "./run-state.js";
import type { AcquiredLeftovers, Tenure } from "./tenure.js";
import type { ThreadSession } from "./thread-session.js";

/** What a predecessor may have left, as reads under way (or as the acquire read them). */
export interface LeftoverReads {
  inflight: Promise<InboxItem[]>;
  /** The renders the journal owes; undefined without a journal. */
  owed: Promise<OwedRender[]> | undefined;
}

/**
 * The take that starts the holder's next run when one was made already (by the acquire, sent
 * early, or by a finished run's `finish`); undefined: the holder takes.
 */
export type NextTake = TakeOutcome | undefined;

export class RunDriver implements AgentBinding {
  private run: ActiveRun | undefined;
  /** Runs of this tenure whose final render the platform confirmed (their journal record cleared). */
  private readonly shown = new Set<string>();

  /** Added in front of the factory's hooks while this tenure drives the agent. */
  readonly hooks: AgentHooks = {
    transformContext: (messages, signal) => this.compactor.beforeCall(messages, signal),
    getSteeringMessages: () => this.fromInbox("steer"),
    getFollowUpMessages: () => this.fromInbox("followUp"),
  };

  constructor(
    private readonly tenure: Tenure,
    private readonly session: ThreadSession,
    private readonly compactor: ThreadCompactor,
    private readonly control: ControlWatch,
    private readonly env: HolderEnv,
  ) {}

  private get threadKey(): string {
    return this.tenure.threadKey;
  }

  /** The chat messages the run in progress answers (empty between runs). */
  currentInbound(): InboundMessage[] {
    return [...(this.run?.inbound ?? [])];
  }

  /** The agent's queue source at a checkpoint: the read the run's state machine asks for. */
  private async fromInbox(which: Checkpoint): Promise<AgentMessage[]> {
    if (this.tenure.handingOff) {
      // The checkpoint a hand-over waits for: what ended before it is saved; stop here.
      this.tenure.stop();
      return [];
    }
    const run = this.run;
    if (!run) return [];
    const r = run.state.read(which);
    if (r.read === "control") {
      // Newer messages wait until the recovered question has its own answer (they come next).
      await this.control.check();
      return [];
    }
    if (!this.tenure.active || r.read === "none") return [];
    if (r.read === "held") return this.accept(run, r.take);
    // The take reads the control state in the same step; it is applied before the items are
    // accepted, so a stop that came first leaves them unsaved (they go back when the run settles).
    const t = await this.tenure.take(r.rule);
    if (t.status === "lost") return [];
    if (t.control) await this.control.apply(t.control);
    else await this.control.check();
    const first = t.status === "taken" ? t.items[0] : undefined;
    if (run.state.afterTake(t, first !== undefined && steersRun(first)) === "hold") return [];
    return this.accept(run, t);
  }

  private async accept(run: ActiveRun, t: TakeOutcome): Promise<AgentMessage[]> {
    // Aborted while the items were being taken (or their files fetched): they stay unsaved and go
    // back to the inbox when the run settles, so the next run answers them.
    if (t.status !== "taken" || run.aborted) return [];
    const items = await this.withFiles(run, t.items);
    if (run.aborted) return [];
    return run.take(items, this.env.format);
  }

  /** The one place attachments are fetched: `items` with their messages' files in the workspace. */
  private async withFiles(run: ActiveRun, items: readonly InboxItem[]): Promise<readonly InboxItem[]> {
    const ingest = this.env.attachments;
    const model = this.session.entry?.agent.state.model;
    if (!ingest || !model || !items.some((i) => (i.message?.attachments.length ?? 0) > 0)) return items;
    const withMessage = items.filter((i) => i.message);
    const messages = await ingest.ingest({
      threadKey: this.threadKey,
      messages: withMessage.map((i) => i.message as InboundMessage),
      model,
      notify: (text) => postNotice(this.env, this.threadKey, text, (id) => this.logFor(id)),
      signal: AbortSignal.any([run.signal, this.tenure.stopSignal]),
    });
    const ingested = new Map(withMessage.map((item, n) => [item, messages[n]]));
    return items.map((i) => {
      const message = ingested.get(i);
      return message ? { ...i, message } : i;
    });
  }

  onEvent(event: AgentEvent): void {
    const run = this.run;
    run?.show(event, event.type === "message_end" && this.mayRetryOverflow(run, event.message));
    if (event.type !== "message_end") return;
    if (run && event.message.role === "assistant")
      run.state.replied(event.message.content.some((c) => c.type === "toolCall"));
    const group = run?.groupOf(event.message);
    const input = group
      ? { type: "message" as const, message: event.message, inbox: group.mark }
      : { type: "message" as const, message: event.message };
    this.session.persist(input, group?.entryId, () => {
      if (group && run) for (const i of group.items) run.persisted.add(i.seq);
    });
  }

  /** A failed reply that said the context was too long, in a run that may still compact and retry. */
  private mayRetryOverflow(run: ActiveRun, message: AgentMessage): boolean {
    if (!run.state.mayRetryOverflow || !this.env.compaction || message.role !== "assistant") return false;
    if (message.stopReason !== "error") return false;
    return isContextOverflow(message, this.session.entry?.agent.state.model.contextWindow);
  }

  /**
   * After a reply overflowed the context window: compact once (leaving the failed reply off the
   * branch) and retry the turn; a second overflow, or a compaction that cannot be made, shows the
   * error as it is.
   */
  private async retryAfterOverflow(run: ActiveRun): Promise<void> {
    const entry = this.session.entry;
    const held = run.takeHeld();
    if (!held) return;
    run.state.retryOverflow();
    if (!entry) return run.releaseHeld(held);
    if (this.tenure.active && !run.aborted) {
      const r = await this.compactor.compact("overflow");
      if (r.compacted && this.tenure.active && !run.aborted) {
        this.compactor.settle({ dropFailedTail: true });
        try {
          await entry.agent.continue();
        } catch (e) {
          this.env.onError(e, `retrying after a context overflow in ${this.threadKey}`);
        }
        return;
      }
    }
    run.releaseHeld(held);
  }

  /**
   * `leased → running`: a run of `entry`'s agent becomes the tenure's work. Undefined when no work
   * may start (a hand-over or a loss came meanwhile).
   */
  private startRun(
    entry: CachedAgent,
    maxSeq: number | undefined,
    stopsAtStart: number,
    start: "starting" | "answeringTail",
  ): ActiveRun | undefined {
    if (!this.tenure.mayBegin) return undefined;
    const id = randomUUID();
    const run = new ActiveRun({
      id,
      maxSeq,
      stopsAtStart,
      start,
      sink: this.sinkOf(id),
      agent: entry.agent,
      onError: this.env.onError,
    });
    this.run = run;
    this.tenure.begin(run);
    return run;
  }

  /** `AgentBinding`: the render-journal log of run (notice, approval request) `id` of this tenure. */
  renderLog(id: string): RenderLog | undefined {
    return this.logFor(id);
  }

  /** The render-journal log of run (or notice) `id` of this tenure. */
  private logFor(id: string): RenderLog | undefined {
    return renderLog(this.env, this.tenure, this.session, id);
  }

  private sinkOf(id: string): RunSink {
    const log = this.logFor(id);
    if (!log) return this.env.sinks(this.threadKey, id);
    // `done` is the renderer's word that the chat shows everything (docs/runtime.md): what a run
    // report calls `shown`.
    const done = async () => {
      await log.done();
      this.shown.add(id);
    };
    return this.env.sinks(this.threadKey, id, { ...log, done });
  }

  /** Tells the run observer how `run` ended (after its sink closed); never throws. */
  private reportRun(run: ActiveRun): void {
    const observer = this.env.runObserver;
    const shown = this.shown.delete(run.id) || !this.env.journal;
    if (!observer || run.inbound.length === 0) return;
    const messages = this.session.entry?.agent.state.messages ?? [];
    const last = messages.findLast((m) => m.role === "assistant");
    const answer =
      last?.role === "assistant"
        ? last.content
            .flatMap((c) => (c.type === "text" ? [c.text] : []))
            .join("")
            .trim()
        : "";
    const stopped = run.aborted || this.tenure.handingOff || last?.stopReason === "aborted";
    const failed = !stopped && (last === undefined || last.stopReason === "error");
    try {
      observer.runEnded({
        threadKey: this.threadKey,
        runId: run.id,
        inbound: [...run.inbound],
        outcome: stopped ? "stopped" : failed ? "failed" : "answered",
        ...(failed
          ? { error: (last?.role === "assistant" && last.errorMessage) || "the run ended without an answer" }
          : {}),
        answer,
        shown,
      });
    } catch (e) {
      this.env.onError(e, `reporting a run of ${this.threadKey}`);
    }
  }

  /**
   * Runs the agent for items the holder took ("next" rule), then settles them. `control`: the
   * control state the take read in the same step (else it is read here).
   */
  async runItems(items: InboxItem[], control?: ControlState): Promise<NextTake> {
    const c = control ?? (await this.env.state.readControl(this.threadKey));
    const first = items[0] as InboxItem;
    const stale = items.filter((i) => i.seq <= c.abortAt);
    if (stale.length > 0) {
      // Delivered before a stop or interrupt and not in the session (a stopped run's messages that
      // its worker never saved): the stop discards them, as it discards queued ones. The rest go
      // back to the inbox and start the next run.
      const ok = await this.tenure.settle(
        stale.map((i) => i.seq),
        true,
      );
      if (!ok) return undefined;
      const text = discardedNotice(describeMessages(stale), "Stopped");
      if (text) await postNotice(this.env, this.threadKey, text, (id) => this.logFor(id));
      return undefined;
    }
    const entry = await this.session.ensureAgent();
    const run = this.startRun(entry, first.seq, c.stops, "starting");
    if (!run) {
      // Handing over: the items go back to the inbox for the next holder.
      if (!this.tenure.ended) await this.tenure.settle([], false);
      return undefined;
    }
    const messages = await this.accept(run, { status: "taken", items });
    return this.drive(run, async () => {
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

  /**
   * Runs the agent for `run`, then settles it (`running → settling → leased`): its writes are
   * flushed, its sink is closed (awaited), its items are settled, and compaction is checked.
   * Returns what a `finish` took for the next run.
   */
  private async drive(run: ActiveRun, start: () => Promise<void>): Promise<NextTake> {
    try {
      await start();
      await this.retryAfterOverflow(run);
    } finally {
      this.tenure.endWork();
      await this.session.flush();
      this.compactor.settle();
      this.run = undefined;
      await run.close();
      this.reportRun(run);
    }
    if (this.tenure.ended) return undefined;
    // A handed-over run is unfinished: its delivered items stay inflight for the next holder.
    const finished = !this.tenure.handingOff;
    const compacts =
      finished && this.session.entry !== undefined && !run.aborted && this.compactor.wantsAfterRun();
    if (finished && !compacts && this.tenure.mayFinish) {
      // Nothing runs between the settle, the next take and the release: one step (what it took
      // starts the holder's next run; a release it made ends the tenure).
      const r = await this.tenure.finish([...run.persisted], this.session.contextTokens());
      return r.status === "kept" ? r.next : undefined;
    }
    if (!(await this.tenure.settle([...run.persisted], finished))) return undefined;
    this.tenure.settled();
    if (finished && this.session.entry && !run.aborted) await this.compactor.afterRun();
    this.session.recordContextTokens();
    return undefined;
  }

  /**
   * What `recover()` reads first (the inflight list, the renders the journal owes): as the step
   * that took the lease read them (`acquired`), else asked for now, so the reads travel with the
   * tenure's first ones. Once the lease is held only this holder changes either, so they are as
   * fresh when `recover()` uses them.
   */
  readLeftovers(acquired: AcquiredLeftovers | undefined): LeftoverReads {
    const { state, journal, finishOwed } = this.env;
    const settled = <T>(p: Promise<T>): Promise<T> => {
      // Awaited by recover(); until then a failure must not count as unhandled.
      p.catch(() => {});
      return p;
    };
    let owed: Promise<OwedRender[]> | undefined;
    if (journal && finishOwed)
      owed = acquired?.nothingOwed ? Promise.resolve([]) : settled(journal.owed(this.threadKey));
    return {
      inflight: acquired ? Promise.resolve(acquired.inflight) : settled(state.inflight(this.threadKey)),
      owed,
    };
  }

  /**
   * Whether a predecessor left nothing inflight and no render owed (from `read`; false when the
   * reads failed: `recover()` reports that).
   */
  async nothingInflight(read: LeftoverReads): Promise<boolean> {
    try {
      const [inflight, owed] = await Promise.all([read.inflight, read.owed ?? Promise.resolve([])]);
      return inflight.length === 0 && owed.length === 0;
    } catch {
      return false;
    }
  }

  /**
   * What a dead (or handed-over) predecessor left: inflight items the session lacks go back to the
   * inbox; tool calls without a result get an error result; an unanswered tail is answered.
   * `read`: the leftovers as read already (else read here). `ahead`: a take made already (only
   * while nothing was inflight); it is put back when an unanswered tail comes first. Returns the
   * take that starts the next run, if one was made.
   */
  async recover(read?: LeftoverReads, ahead?: Promise<TakeOutcome>): Promise<NextTake> {
    const { state, store } = this.env;
    const entry = await this.session.ensureAgent();
    // What earlier runs showed comes first: a cut-off reply is finished (or a reply that never
    // completed is removed) before anything new is shown.
    await finishOwedRenders(this.env, this.tenure, this.session, undefined, read?.owed);
    const inflight = await (read?.inflight ?? state.inflight(this.threadKey));
    let held: number[] = [];
    if (inflight.length > 0) {
      const branch = await store.readBranch(this.threadKey);
      held = heldSeqs(branch?.entries ?? [], inflight);
      if (held.length < inflight.length && branch) {
        // A compaction may have cut the marker out of the branch; the whole session still has it.
        const all = await store.readAll(this.threadKey, branch.header.id);
        held = heldSeqs(all.entries, inflight);
      }
      if (!(await this.tenure.settle(held, false))) return undefined;
    }
    const closing = danglingToolResults(entry.agent.state.messages, this.env.clock.now());
    for (const m of closing) {
      entry.agent.appendMessage(m);
      this.session.persist({ type: "message", message: m });
    }
    const heldItems = inflight.filter((i) => held.includes(i.seq));
    if (!needsAnswer(entry.agent.state.messages)) {
      if (heldItems.length > 0) await this.tenure.settle(held, true);
      // What the recovery wrote is stored before the thread moves on. Without such writes nothing
      // is awaited: a new session's setting entries (its model) go on beside the next take, and the
      // write chain keeps them before the run's own.
      if (closing.length > 0) await this.session.flush();
      return ahead && (await ahead);
    }
    // Anything taken ahead waits behind the question a predecessor left unanswered.
    if (ahead && !(await this.tenure.putBack(ahead))) return undefined;
    const c = await state.readControl(this.threadKey);
    const maxSeq = heldItems.length > 0 ? Math.max(...heldItems.map((i) => i.seq)) : undefined;
    if (maxSeq !== undefined && c.abortAt >= maxSeq) {
      // A stop came after these messages: leave the question unanswered.
      await this.session.flush();
      await this.tenure.settle(held, true);
      return undefined;
    }
    // Handing over: the held items stay inflight and the next holder recovers them.
    const run = this.startRun(entry, maxSeq, c.stops, "answeringTail");
    if (!run) return undefined;
    run.adopt(heldItems);
    return this.drive(run, () => entry.agent.continue());
  }
}
