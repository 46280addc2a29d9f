/**
 * What one run of a thread's agent knows: the inbox items it took (as the user messages it
 * delivered), which of them the session holds, who it answers, whether a stop targets it, and
 * where its events go; its own state machine (run-state.ts) says what its checkpoints read. Events of a reply that overflowed the context window can be held back from
 * the sink while the holder compacts and retries, so the user never sees the failed attempt. It is
 * the tenure's work while it runs: a stop that targets it aborts its agent.
 */
import type { InboundMessage } from "../../adapters/types.js";
import type { Agent } from "../../agent/agent.js";
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import type { ControlState } from "../state/types.js";
import type { InboundFormatter, InboxItem, RunSink } from "../types.js";
import { groupItems, type ItemGroup } from "./item-messages.js";
import { RunState } from "./run-state.js";
import type { TenureWork } from "./tenure.js";

export interface ActiveRunOptions {
  id: string;
  /** The newest item taken so far; undefined for a recovery run without items. */
  maxSeq: number | undefined;
  /** The control state's stop count when the run started. */
  stopsAtStart: number;
  /** `starting` for a run of items just taken, `answeringTail` for a recovery run (run-state.ts). */
  start: "starting" | "answeringTail";
  sink: RunSink;
  /** The agent the run drives (aborted when a stop targets the run). */
  agent: Agent;
  onError: (error: unknown, context: string) => void;
}

export class ActiveRun implements TenureWork {
  readonly id: string;
  /**
   * The newest item the run has taken. A stop or interrupt aborts the run only while all its items
   * are older (`abortAt >= maxSeq`): a run that already took a newer message (the interrupt
   * itself) goes on and answers it. Undefined for a recovery run without items.
   */
  maxSeq: number | undefined;
  readonly stopsAtStart: number;
  /** Which read each checkpoint makes, and whether a stop aborted the run (run-state.ts). */
  readonly state: RunState;
  /** Aborts with the run (a stop or an interrupt), for work the run does besides its agent. */
  private readonly stopped = new AbortController();
  /** Seqs of the run's items whose message the session holds. */
  readonly persisted = new Set<number>();
  /** The chat messages the run answers, in the order it took them (`ctx.currentInbound()`). */
  readonly inbound: InboundMessage[] = [];
  private readonly groups = new Map<AgentMessage, ItemGroup>();
  private readonly sink: RunSink;
  private heldBack: AgentEvent[] | undefined;

  constructor(private readonly o: ActiveRunOptions) {
    this.id = o.id;
    this.maxSeq = o.maxSeq;
    this.stopsAtStart = o.stopsAtStart;
    this.sink = o.sink;
    this.state = new RunState(o.start);
  }

  /** `TenureWork`: a stop or an interrupt aborted the run. */
  get aborted(): boolean {
    return this.state.aborted;
  }

  /** Aborts when a stop or an interrupt aborts the run. */
  get signal(): AbortSignal {
    return this.stopped.signal;
  }

  /** Whether the durable control state `c` aborts this run. */
  abortedBy(c: ControlState): boolean {
    return this.maxSeq === undefined ? c.stops > this.stopsAtStart : c.abortAt >= this.maxSeq;
  }

  /** `TenureWork`: aborts the run's agent when `c` targets the run (a stop or an interrupt). */
  onControl(c: ControlState): void {
    if (this.aborted || !this.abortedBy(c)) return;
    this.state.abort();
    this.stopped.abort();
    this.o.agent.abort();
  }

  /**
   * Takes delivered inbox items and returns the user messages they make (a `collect` group merges
   * into one). Items that make no message (damaged) count as held, so they cannot block the thread.
   */
  take(items: readonly InboxItem[], format: InboundFormatter): AgentMessage[] {
    for (const i of items) this.maxSeq = Math.max(this.maxSeq ?? 0, i.seq);
    const groups = groupItems(items, format);
    const grouped = new Set(groups.flatMap((g) => g.items.map((i) => i.seq)));
    for (const i of items) if (!grouped.has(i.seq)) this.persisted.add(i.seq);
    for (const g of groups) {
      this.groups.set(g.message, g);
      for (const i of g.items) if (i.message) this.inbound.push(i.message);
    }
    return groups.map((g) => g.message);
  }

  /** Adopts items a predecessor delivered and the session already holds (a recovery run). */
  adopt(items: readonly InboxItem[]): void {
    for (const i of items) {
      this.persisted.add(i.seq);
      if (i.message) this.inbound.push(i.message);
    }
  }

  /** The items behind a message this run delivered, with the entry id that marks them in the session. */
  groupOf(message: AgentMessage): ItemGroup | undefined {
    return this.groups.get(message);
  }

  /**
   * Passes `event` to the sink, unless events are held back; `holdFrom` true starts holding back
   * with this event.
   */
  show(event: AgentEvent, holdFrom = false): void {
    if (this.heldBack) this.heldBack.push(event);
    else if (holdFrom) this.heldBack = [event];
    else this.toSink(event);
  }

  /** The held-back events, taken (undefined when nothing is held back). */
  takeHeld(): AgentEvent[] | undefined {
    const held = this.heldBack;
    this.heldBack = undefined;
    return held;
  }

  /** Shows what is held back after all. */
  releaseHeld(events: readonly AgentEvent[] | undefined = this.takeHeld()): void {
    for (const event of events ?? []) this.toSink(event);
  }

  /** Shows what is still held back, then closes the sink (after the run's last event). */
  async close(): Promise<void> {
    this.releaseHeld();
    try {
      await this.sink.close();
    } catch (e) {
      this.o.onError(e, "closing a run's sink");
    }
  }

  private toSink(event: AgentEvent): void {
    try {
      this.sink.onEvent(event);
    } catch (e) {
      this.o.onError(e, "rendering an agent event");
    }
  }
}
