/**
 * The runs of one tenure: starting a run from taken inbox items (after the factory's `prepareRun`)
 * or from what a dead predecessor left, feeding the agent from the inbox at its checkpoints,
 * routing its events to the run's sink and persisting its messages, compacting once and retrying
 * after a context overflow, and settling the run's items when it ends. The holder (the tenure:
 * lease, control, loop) owns one and tells it what the tenure allows.
 */
import { randomUUID } from "node:crypto";
import { isContextOverflow } from "../../agent/llm/overflow.js";
import { estimateContextTokens } from "../../agent/session/compaction/tokens.js";
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import { describeMessages, discardedNotice } from "../inbox-item.js";
import type { ControlState, TakeOutcome } from "../state/types.js";
import type { InboxItem } from "../types.js";
import { ActiveRun } from "./active-run.js";
import type { CachedAgent } from "./agent-cache.js";
import type { ThreadCompactor } from "./compaction-step.js";
import { heldSeqs } from "./item-messages.js";
import { danglingToolResults, needsAnswer } from "./recovery.js";
import type { HolderEnv } from "./thread-holder.js";
import type { ThreadSession } from "./thread-session.js";

/** What the runs need from their tenure. */
export interface RunDriverHost {
  threadKey: string;
  token: string;
  env: HolderEnv;
  session: ThreadSession;
  compactor: ThreadCompactor;
  /** The tenure goes on: not ended, not handing over. */
  active(): boolean;
  /** A shutdown asked the tenure to hand the thread over. */
  handingOff(): boolean;
  /** The tenure has an outcome (lost, failed, released): nothing more may be settled. */
  ended(): boolean;
  stopNow(): void;
  markLost(): void;
  checkControl(): Promise<void>;
  notice(text: string): Promise<void>;
}

export class RunDriver {
  private run: ActiveRun | undefined;

  constructor(private readonly h: RunDriverHost) {}

  /** The run in progress, if any. */
  get current(): ActiveRun | undefined {
    return this.run;
  }

  /** Aborts the run in progress when the control state targets it (a stop or an interrupt). */
  applyAbort(c: ControlState): void {
    const run = this.run;
    if (!run || run.aborted || !run.abortedBy(c)) return;
    run.aborted = true;
    this.h.session.entry?.agent.abort();
  }

  /** The agent's queue source at a checkpoint: control first, then the inbox by rule. */
  async fromInbox(which: "steer" | "followUp"): Promise<AgentMessage[]> {
    if (this.h.handingOff()) {
      this.h.stopNow();
      return [];
    }
    await this.h.checkControl();
    const run = this.run;
    if (!this.h.active() || !run || run.aborted) return [];
    const t = await this.h.env.state.take(
      this.h.threadKey,
      this.h.token,
      which === "steer" ? "steer" : "followUp",
      this.h.env.collectDebounceMs,
    );
    return this.accept(run, t);
  }

  private accept(run: ActiveRun, t: TakeOutcome): AgentMessage[] {
    if (t.status === "lost") {
      this.h.markLost();
      return [];
    }
    if (t.status === "wait") return [];
    // Aborted while the items were being taken: they stay unsaved and go back to the inbox when the
    // run settles, so the next run answers them.
    if (run.aborted) return [];
    return run.take(t.items, this.h.env.format);
  }

  onAgentEvent(event: AgentEvent): void {
    const run = this.run;
    run?.show(event, event.type === "message_end" && this.mayRetryOverflow(run, event.message));
    if (event.type !== "message_end") return;
    const group = run?.groupOf(event.message);
    const input = group
      ? { type: "message" as const, message: event.message, inbox: group.mark }
      : { type: "message" as const, message: event.message };
    this.h.session.persist(input, group?.entryId, () => {
      if (group && run) for (const i of group.items) run.persisted.add(i.seq);
    });
  }

  /** A failed reply that said the context was too long, in a run that may still compact and retry. */
  private mayRetryOverflow(run: ActiveRun, message: AgentMessage): boolean {
    if (run.retried || !this.h.env.compaction || message.role !== "assistant") return false;
    if (message.stopReason !== "error") return false;
    return isContextOverflow(message, this.h.session.entry?.agent.state.model.contextWindow);
  }

  /**
   * After a reply overflowed the context window: compact once (leaving the failed reply off the
   * branch) and retry the turn; a second overflow, or a compaction that cannot be made, shows the
   * error as it is.
   */
  private async retryAfterOverflow(run: ActiveRun): Promise<void> {
    const entry = this.h.session.entry;
    const held = run.takeHeld();
    if (!held) return;
    run.retried = true;
    if (!entry) return run.releaseHeld(held);
    if (this.h.active() && !run.aborted) {
      const r = await this.h.compactor.compact("overflow");
      if (r.compacted && this.h.active() && !run.aborted) {
        this.h.compactor.settle({ dropFailedTail: true });
        try {
          await entry.agent.continue();
        } catch (e) {
          this.h.env.onError(e, `retrying after a context overflow in ${this.h.threadKey}`);
        }
        return;
      }
    }
    run.releaseHeld(held);
  }

  private startRun(maxSeq: number | undefined, stopsAtStart: number): ActiveRun {
    const id = randomUUID();
    const run = new ActiveRun({
      id,
      maxSeq,
      stopsAtStart,
      sink: this.h.env.sinks(this.h.threadKey, id),
      onError: this.h.env.onError,
    });
    this.run = run;
    return run;
  }

  async runItems(items: InboxItem[]): Promise<void> {
    const { state } = this.h.env;
    const c = await state.readControl(this.h.threadKey);
    const first = items[0] as InboxItem;
    if (!this.h.active()) {
      // Handing over: the items go back to the inbox for the next holder.
      await state.settle(this.h.threadKey, this.h.token, [], false);
      return;
    }
    const stale = items.filter((i) => i.seq <= c.abortAt);
    if (stale.length > 0) {
      // Delivered before a stop or interrupt and not in the session (a stopped run's messages that
      // its worker never saved): the stop discards them, as it discards queued ones. The rest go
      // back to the inbox and start the next run.
      const ok = await state.settle(
        this.h.threadKey,
        this.h.token,
        stale.map((i) => i.seq),
        true,
      );
      if (!ok) return this.h.markLost();
      const text = discardedNotice(describeMessages(stale), "Stopped");
      if (text) await this.h.notice(text);
      return;
    }
    const entry = await this.h.session.ensureAgent();
    const run = this.startRun(first.seq, c.stops);
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
      this.h.env.onError(e, `preparing a run of ${this.h.threadKey}`);
      return prompts;
    }
  }

  /** Runs the agent for `run`, then settles its items and checks compaction. */
  private async drive(run: ActiveRun, start: () => Promise<void>): Promise<void> {
    try {
      await start();
      await this.retryAfterOverflow(run);
    } finally {
      await this.h.session.flush();
      this.h.compactor.settle();
      this.run = undefined;
      await run.close();
    }
    if (this.h.ended()) return;
    // A handed-over run is unfinished: its delivered items stay inflight for the next holder.
    const finished = !this.h.handingOff();
    const ok = await this.h.env.state.settle(this.h.threadKey, this.h.token, [...run.persisted], finished);
    if (!ok) return this.h.markLost();
    if (finished && this.h.session.entry && !run.aborted) await this.h.compactor.afterRun();
    this.recordContextTokens();
  }

  /** Records the agent's context estimate for `status` (best effort). */
  recordContextTokens(): void {
    const entry = this.h.session.entry;
    const set = this.h.env.state.setContextTokens;
    if (!entry || !set) return;
    const tokens = estimateContextTokens(entry.agent.state.messages).tokens;
    set
      .call(this.h.env.state, this.h.threadKey, tokens)
      .catch((e: unknown) => this.h.env.onError(e, "recording the context size"));
  }

  /**
   * What a dead (or handed-over) predecessor left: inflight items the session lacks go back to the
   * inbox; tool calls without a result get an error result; an unanswered tail is answered.
   */
  async recover(): Promise<void> {
    const { state, store } = this.h.env;
    const entry = await this.h.session.ensureAgent();
    const inflight = await state.inflight(this.h.threadKey);
    let held: number[] = [];
    if (inflight.length > 0) {
      const branch = await store.readBranch(this.h.threadKey);
      held = heldSeqs(branch?.entries ?? [], inflight);
      if (held.length < inflight.length && branch) {
        // A compaction may have cut the marker out of the branch; the whole session still has it.
        const all = await store.readAll(this.h.threadKey, branch.header.id);
        held = heldSeqs(all.entries, inflight);
      }
      if (!(await state.settle(this.h.threadKey, this.h.token, held, false))) return this.h.markLost();
    }
    const closing = danglingToolResults(entry.agent.state.messages);
    for (const m of closing) {
      entry.agent.appendMessage(m);
      this.h.session.persist({ type: "message", message: m });
    }
    const heldItems = inflight.filter((i) => held.includes(i.seq));
    if (!needsAnswer(entry.agent.state.messages)) {
      if (heldItems.length > 0 && !(await state.settle(this.h.threadKey, this.h.token, held, true)))
        this.h.markLost();
      await this.h.session.flush();
      return;
    }
    const c = await state.readControl(this.h.threadKey);
    const maxSeq = heldItems.length > 0 ? Math.max(...heldItems.map((i) => i.seq)) : undefined;
    if (maxSeq !== undefined && c.abortAt >= maxSeq) {
      // A stop came after these messages: leave the question unanswered.
      await this.h.session.flush();
      if (!(await state.settle(this.h.threadKey, this.h.token, held, true))) this.h.markLost();
      return;
    }
    const run = this.startRun(maxSeq, c.stops);
    run.adopt(heldItems);
    await this.drive(run, () => entry.agent.continue());
  }
}
