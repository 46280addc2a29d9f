/**
 * What a worker process does with a wake job, whichever queue delivered it: clear the thread's
 * wake flag, try the lease, and hold the thread until its inbox is empty. Also routes control
 * notices to local holders, keeps the agent cache and hands every thread over on shutdown.
 */
import { randomUUID } from "node:crypto";
import type { ControlBus } from "../control-bus.js";
import type { ThreadState } from "../state/types.js";
import { AgentCache } from "./agent-cache.js";
import { type HolderEnv, type HoldOutcome, ThreadHolder } from "./thread-holder.js";

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
  private readonly tenures = new Set<Promise<HoldOutcome>>();
  readonly cache: AgentCache;
  private readonly unsubscribe: () => void;
  private stopping = false;

  constructor(private readonly o: WorkerCoreOptions) {
    this.cache = new AgentCache(o.agentIdleMs ?? 10 * 60_000, o.onError);
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
    if (this.stopping) {
      // Taken while shutting down: pass the wake on rather than dropping it.
      await this.o.rewake(threadKey);
      return;
    }
    await this.o.state.clearWake(threadKey);
    const token = randomUUID();
    if (!(await this.acquire(threadKey, token, job.rerun))) return;
    if (this.stopping) {
      await this.o.state.forceRelease(threadKey, token);
      await this.o.rewake(threadKey);
      return;
    }
    const holder = new ThreadHolder(threadKey, token, { ...this.o, cache: this.cache });
    this.holders.set(threadKey, holder);
    const tenure = holder.hold();
    this.tenures.add(tenure);
    let outcome: HoldOutcome;
    try {
      outcome = await tenure;
    } finally {
      this.tenures.delete(tenure);
      if (this.holders.get(threadKey) === holder) this.holders.delete(threadKey);
    }
    // Lost or handed over with work possibly left: make sure someone picks it up. A failed tenure
    // is retried by the safety net later, so a poison thread cannot spin.
    if (outcome === "lost" || outcome === "handoff") {
      await this.o.rewake(threadKey).catch((e: unknown) => this.o.onError(e, "re-waking a thread"));
    }
  }

  /**
   * Takes the lease, or decides that a live holder has it. A lease that looks stale (not renewed
   * for half its TTL, or any lease found by a stalled job's rerun) is watched until it expires
   * (then taken) or is renewed or replaced (then its holder is alive).
   */
  private async acquire(threadKey: string, token: string, rerun: boolean): Promise<boolean> {
    const { state, leaseTtlMs } = this.o;
    const tolerance = Math.max(25, leaseTtlMs / 20);
    const deadline = Date.now() + 2 * leaseTtlMs + 1000;
    let seen: { holder: string; expiresAt: number } | undefined;
    for (;;) {
      const sentAt = Date.now();
      const r = await state.acquire(threadKey, token, leaseTtlMs);
      if (r.acquired) {
        this.o.onLease?.({ type: "acquired", threadKey, token, at: Date.now(), sentAt });
        return true;
      }
      const now = Date.now();
      const expiresAt = now + Math.max(0, r.pttl);
      if (seen) {
        if (seen.holder !== r.holder || expiresAt > seen.expiresAt + tolerance) return false;
      } else if (!rerun && r.pttl > leaseTtlMs / 2) {
        return false;
      }
      if (this.stopping || now > deadline) return false;
      seen ??= { holder: r.holder, expiresAt };
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(r.pttl, 5), leaseTtlMs / 4)));
    }
  }

  /**
   * Stops taking threads and hands over the ones held: runs stop at their next checkpoint, or at
   * once after `graceMs`; the next holder resumes from the session. Resolves when all are handed
   * over.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const h of this.holders.values()) h.beginHandoff("checkpoint");
    const all = Promise.allSettled([...this.tenures]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    if ((await Promise.race([all, graceOver])) === "timeout") {
      for (const h of this.holders.values()) h.beginHandoff("now");
      await all;
    }
    clearTimeout(timer);
    this.unsubscribe();
    this.cache.clear();
  }
}
