/**
 * The agents a worker process keeps in memory, one per thread, so that a thread that comes back to
 * the same process skips rebuilding its agent from the session. An entry is valid only while the
 * session has not moved elsewhere (the holder compares `sessionId` and `leafId` with the store's
 * metadata), and it is dropped after `idleMs` without use (on the worker's clock).
 */

import type { InboundMessage } from "../../adapters/types.js";
import type { Agent, AgentHooks } from "../../agent/agent.js";
import type { Clock } from "../../agent/clock.js";
import type { AgentEvent } from "../../agent/types.js";
import type { RenderLog, SessionEventHook, ThreadAgent } from "../types.js";
import type { CompactionView } from "./compaction-view.js";

/**
 * What a tenure plugs into the agent while it drives it (the run driver implements it): its hooks
 * go in front of the factory's own (`Agent.addHooks` with `position: "first"`), its event handler
 * subscribes, and the factory context's `currentInbound` reads from it.
 */
export interface AgentBinding {
  /** The inbox as the agent's steering and follow-up sources; per-call compaction as the outermost transform. */
  readonly hooks: AgentHooks;
  onEvent(event: AgentEvent): void;
  /** The chat messages the current run answers. */
  currentInbound(): InboundMessage[];
  /** The render-journal log of message `id` of this tenure (undefined: no journal). */
  renderLog(id: string): RenderLog | undefined;
}

/** The tenure's side of a cached agent while it drives it: where the factory context's calls go. */
export interface AgentDriver {
  /** A fenced `custom` entry after the run's entries; rejects when it was not written. */
  appendEntry(customType: string, data: unknown): Promise<void>;
  currentInbound(): InboundMessage[];
  /** The render-journal log of message `id`, fenced by this tenure's lease (undefined: no journal). */
  renderLog(id: string): RenderLog | undefined;
}

export interface CachedAgent {
  threadKey: string;
  agent: Agent;
  sessionId: string;
  /** The session leaf the agent's history ends at. */
  leafId: string | null;
  /** Model (`provider/id`) and thinking level last recorded in the session. */
  recordedModel: string | undefined;
  recordedThinking: string | undefined;
  /** The tenure driving the agent now; undefined between tenures. */
  driver: AgentDriver | undefined;
  /** Removes the driving tenure's hooks and event subscription from the agent. */
  detach: (() => void) | undefined;
  /** A compaction made during the current run: how the loop's copy of the history shrinks. */
  view?: CompactionView;
  /** The factory's per-run hook (`ThreadAgent.prepareRun`). */
  prepareRun?: ThreadAgent["prepareRun"];
  /** The factory's session-event hook (`ThreadAgent.onSessionEvent`). */
  onSessionEvent?: SessionEventHook;
  /** Aborted when the entry is dropped. */
  controller: AbortController;
  /** Cancels the idle timer. */
  idle?: AbortController;
}

export class AgentCache {
  private readonly entries = new Map<string, CachedAgent>();

  constructor(
    private readonly idleMs: number,
    private readonly clock: Clock,
    private readonly onError: (error: unknown, context: string) => void = () => {},
  ) {}

  get(threadKey: string): CachedAgent | undefined {
    const e = this.entries.get(threadKey);
    if (e?.idle) {
      e.idle.abort();
      e.idle = undefined;
    }
    return e;
  }

  set(entry: CachedAgent): void {
    const old = this.entries.get(entry.threadKey);
    if (old && old !== entry) this.drop(old.threadKey);
    this.entries.set(entry.threadKey, entry);
  }

  /**
   * Starts the idle timer of `entry` (its holder released the thread). Does nothing when the
   * thread's entry has been replaced meanwhile (a newer holder in this process owns it).
   */
  idle(entry: CachedAgent): void {
    const threadKey = entry.threadKey;
    const e = this.entries.get(threadKey);
    if (e !== entry) return;
    e.detach?.();
    e.idle?.abort();
    const timer = new AbortController();
    e.idle = timer;
    this.clock.sleep(this.idleMs, timer.signal).then(
      () => {
        if (this.entries.get(threadKey) === e && e.idle === timer) this.drop(threadKey);
      },
      () => {},
    );
  }

  /**
   * Forgets a thread's agent and aborts it (stale, evicted, or the process stops). With `only`, it
   * forgets the entry only if it is still that one, so a holder that lost its thread never drops
   * the agent of the holder that took over in the same process.
   */
  drop(threadKey: string, only?: CachedAgent): void {
    const e = this.entries.get(threadKey);
    if (!e || (only && e !== only)) return;
    this.entries.delete(threadKey);
    e.idle?.abort();
    e.detach?.();
    e.agent.abort();
    if (e.onSessionEvent) {
      const hook = e.onSessionEvent;
      // Observing only: the agent goes away whatever the hook does.
      void (async () => hook({ type: "session_shutdown" }))().catch((err: unknown) =>
        this.onError(err, "the session_shutdown hook"),
      );
    }
    e.controller.abort();
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.drop(key);
  }
}
