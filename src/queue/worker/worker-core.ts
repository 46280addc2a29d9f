/**
 * What a worker process does with a wake job, whichever queue delivered it: clear the thread's
 * wake flag, start a tenure (take the lease, or decline because a live holder has it) and hold
 * the thread until its inbox is empty. Also routes control notices to local holders, keeps the
 * agent cache and hands every thread over on shutdown.
 */
import { randomUUID } from "node:crypto";
import type { ControlBus } from "../control-bus.js";
import type { ThreadState } from "../state/types.js";
import { AgentCache } from "./agent-cache.js";
import type { HolderEnv } from "./holder-env.js";
import { Tenure } from "./tenure.js";
import { ThreadHolder } from "./thread-holder.js";

/**
 * Threads one worker process runs at once, by default. A run mostly waits on its model, so the bound
 * is memory, not CPU: about 40 KB of heap (57 KB of RSS) per running thread in the bench (`npm run
 * bench -- --only running`, docs/performance.md), so 64 running threads hold a few MB. 64 serves 50
 * simultaneous chats without queueing one behind another.
 */
export const DEFAULT_CONCURRENCY = 64;

/** Re-wakes a thread: sets its wake flag (overwriting) and makes sure a job exists. */
export type Rewake = (threadKey: string) => Promise<void>;

export interface WorkerCoreOptions extends Omit<HolderEnv, "cache"> {
  bus: ControlBus;
  rewake: Rewake;
  /** Drop a thread's cached agent after this long without work. Default 10 min. */
  agentIdleMs?: number;
}

export interface JobInfo {
  /** The job ran before and stalled (its worker died): a lease it finds may be its dead holder's. */
  rerun: boolean;
}

export class WorkerCore {
  private readonly holders = new Map<string, ThreadHolder>();
  private readonly tenures = new Set<Promise<unknown>>();
  readonly cache: AgentCache;
  private readonly unsubscribe: () => void;
  private readonly stopping = new AbortController();
  private readonly env: HolderEnv;

  constructor(private readonly o: WorkerCoreOptions) {
    this.cache = new AgentCache(o.agentIdleMs ?? 10 * 60_000, o.clock, o.onError);
    this.env = { ...o, cache: this.cache };
    this.unsubscribe = o.bus.subscribe((threadKey) => this.holders.get(threadKey)?.notify());
  }

  get state(): ThreadState {
    return this.o.state;
  }

  /** Threads this process holds right now. */
  get held(): string[] {
    return [...this.holders.keys()];
  }

  /**
   * Processes one wake job. Resolves when this process no longer holds the thread (or never got
   * it because a live holder has it: that holder sees the inbox before it may release).
   */
  async process(threadKey: string, job: JobInfo): Promise<void> {
    if (this.stopping.signal.aborted) {
      // Taken while shutting down: pass the wake on rather than dropping it.
      await this.o.rewake(threadKey);
      return;
    }
    const tenure = new Tenure(threadKey, randomUUID(), this.env);
    // The first take goes with the lease when nothing is left to recover (`Tenure.acquire`).
    const takeAhead = { journal: this.env.journal !== undefined && this.env.finishOwed !== undefined };
    const first = await tenure.acquire({
      rerun: job.rerun,
      wake: true,
      takeAhead,
      signal: this.stopping.signal,
    });
    if (!first) return;
    if (this.stopping.signal.aborted) {
      // What the acquire took ahead goes back to the inbox head, so the next holder finds the
      // thread as it was rather than an item to recover.
      if (first.firstTake)
        await tenure
          .putBack(first.firstTake)
          .catch((e: unknown) => this.o.onError(e, "returning a first take"));
      tenure.handOff("now");
      await tenure.end();
      await this.o.rewake(threadKey);
      return;
    }
    const holder = new ThreadHolder(tenure, this.env);
    this.holders.set(threadKey, holder);
    const held = holder.hold(first);
    this.tenures.add(held);
    let outcome: string;
    try {
      outcome = await held;
    } finally {
      this.tenures.delete(held);
      if (this.holders.get(threadKey) === holder) this.holders.delete(threadKey);
    }
    // Lost or handed over with work possibly left: make sure someone picks it up. A failed tenure
    // is retried by the safety net later, so a poison thread cannot spin.
    if (outcome === "lost" || outcome === "handedOff") {
      await this.o.rewake(threadKey).catch((e: unknown) => this.o.onError(e, "re-waking a thread"));
    }
  }

  /**
   * Stops taking threads and hands over the ones held: runs stop at their next checkpoint, or at
   * once after `graceMs` (on the worker's clock); the next holder resumes from the session.
   * Resolves when all are handed over.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.stopping.abort();
    for (const h of this.holders.values()) h.beginHandoff("checkpoint");
    const all = Promise.allSettled([...this.tenures]);
    const grace = new AbortController();
    const graceOver = this.o.clock.sleep(graceMs, grace.signal).then(
      () => true,
      () => false,
    );
    if (await Promise.race([all.then(() => false), graceOver])) {
      for (const h of this.holders.values()) h.beginHandoff("now");
      await all;
    }
    grace.abort();
    this.unsubscribe();
    this.cache.clear();
  }
}
