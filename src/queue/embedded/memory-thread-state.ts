/**
 * `ThreadState` in one process, for the embedded runtime. Each method runs synchronously (no await
 * between its reads and writes), which makes it as atomic as the Lua step it mirrors; the rules are
 * the same as in redis/scripts.ts. Time (lease expiry, the collect window, dedupe) is the given
 * `Clock`'s, so tests move it by hand.
 */
import { type Clock, systemClock } from "../../agent/clock.js";
import { steersRun } from "../inbox-item.js";
import { type LeaseAcquire, MemoryLeaseStore } from "../lease/store.js";
import type {
  AppendOptions,
  AppendOutcome,
  ControlState,
  FinishOutcome,
  ReleaseOutcome,
  StopOutcome,
  TakeAhead,
  TakeOutcome,
  TakeRule,
  ThreadProbe,
  ThreadState,
  WakeAcquire,
} from "../state/types.js";
import type { InboxItem } from "../types.js";

interface Thread {
  /** The thread key, which names its lease too. */
  key: string;
  inbox: InboxItem[];
  inflight: InboxItem[];
  wake?: string;
  seq: number;
  control: ControlState;
  /** The holder's latest context estimate (`status`). */
  contextTokens?: number;
  /** Event ids appended to this thread: their seq and when the memory of them ends. */
  appended: Map<string, { seq: number; until: number }>;
}

function splitQueued(items: InboxItem[]): { drop: InboxItem[]; keep: InboxItem[] } {
  return {
    drop: items.filter((i) => i.kind === "message"),
    keep: items.filter((i) => i.kind !== "message"),
  };
}

export interface MemoryThreadStateOptions {
  /** How long a delivered (or appended) event id is remembered. Default 24 h. */
  dedupeTtlMs?: number;
  /** Default: the system clock. */
  clock?: Clock;
}

/** The in-process implementation of the coordination primitives. */
export class MemoryThreadState implements ThreadState {
  private readonly threads = new Map<string, Thread>();
  /** The threads' leases, by thread key. */
  private readonly leases: MemoryLeaseStore;
  private readonly dedupeTtlMs: number;
  private readonly now: () => number;
  private lastSweep = 0;

  constructor(options: MemoryThreadStateOptions = {}) {
    this.dedupeTtlMs = options.dedupeTtlMs ?? 24 * 3600_000;
    const clock = options.clock ?? systemClock;
    this.now = () => clock.now();
    this.leases = new MemoryLeaseStore(clock);
  }

  private thread(key: string): Thread {
    let t = this.threads.get(key);
    if (!t) {
      t = {
        key,
        inbox: [],
        inflight: [],
        seq: 0,
        control: { abortAt: 0, ver: 0, stops: 0 },
        appended: new Map(),
      };
      this.threads.set(key, t);
    }
    return t;
  }

  private holder(t: Thread): string | undefined {
    return this.leases.holder(t.key);
  }

  /** Forgets appended event ids past the dedupe window (at most once a minute). */
  private sweepAppended(): void {
    const now = this.now();
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const t of this.threads.values())
      for (const [id, a] of t.appended) if (a.until <= now) t.appended.delete(id);
  }

  async append(
    threadKey: string,
    item: Pick<InboxItem, "mode" | "kind" | "message" | "instructions">,
    options: AppendOptions,
  ): Promise<AppendOutcome> {
    this.sweepAppended();
    const t = this.thread(threadKey);
    const active = this.holder(t) !== undefined;
    const eventId = item.kind === "message" ? item.message?.eventId : undefined;
    const stored = eventId ? t.appended.get(eventId) : undefined;
    if (stored && stored.until > this.now()) {
      const depth = t.inbox.length;
      return {
        accepted: true,
        seq: stored.seq,
        depth,
        woke: false,
        wakeMarker: "",
        active,
        dropped: [],
        repeated: true,
      };
    }
    const cap = Math.max(1, options.cap);
    let dropped: InboxItem[] = [];
    if (item.mode === "interrupt") {
      const { drop, keep } = splitQueued(t.inbox);
      dropped = drop;
      t.inbox = keep;
    }
    if (t.inbox.length >= cap) {
      if (options.dropPolicy === "new") return { accepted: false, depth: t.inbox.length, active };
      dropped.push(...t.inbox.splice(0, t.inbox.length - cap + 1));
    }
    const now = this.now();
    const seq = ++t.seq;
    if (eventId) t.appended.set(eventId, { seq, until: now + this.dedupeTtlMs });
    t.inbox.push({
      seq,
      at: now,
      mode: item.mode,
      kind: item.kind,
      message: item.message,
      ...(item.instructions !== undefined ? { instructions: item.instructions } : {}),
    });
    if (item.mode === "interrupt") {
      t.control.abortAt = Math.max(t.control.abortAt, seq - 1);
      t.control.ver++;
      t.control.stops++;
    }
    const marker = `pending:${now}:${seq}`;
    // A holder finds the item itself (at a checkpoint, or when its release sees the inbox).
    const woke = !active && t.wake === undefined;
    if (woke) t.wake = marker;
    return { accepted: true, seq, depth: t.inbox.length, woke, wakeMarker: marker, active, dropped };
  }

  async stop(threadKey: string): Promise<StopOutcome> {
    const t = this.thread(threadKey);
    t.control.abortAt = Math.max(t.control.abortAt, t.seq);
    t.control.ver++;
    t.control.stops++;
    const { drop, keep } = splitQueued(t.inbox);
    t.inbox = keep;
    return { abortAt: t.seq, active: this.holder(t) !== undefined, discarded: drop };
  }

  async touchControl(threadKey: string): Promise<void> {
    this.thread(threadKey).control.ver++;
  }

  async setContextTokens(threadKey: string, tokens: number): Promise<void> {
    this.thread(threadKey).contextTokens = Math.round(tokens);
  }

  async contextTokens(threadKey: string): Promise<number | undefined> {
    return this.threads.get(threadKey)?.contextTokens;
  }

  async readControl(threadKey: string): Promise<ControlState> {
    return { ...this.thread(threadKey).control };
  }

  async probe(threadKey: string): Promise<ThreadProbe> {
    const t = this.thread(threadKey);
    return {
      inboxDepth: t.inbox.length,
      inflightDepth: t.inflight.length,
      active: this.holder(t) !== undefined,
    };
  }

  async clearWake(threadKey: string): Promise<void> {
    this.thread(threadKey).wake = undefined;
  }

  async acquire(threadKey: string, token: string, ttlMs: number): Promise<LeaseAcquire> {
    return this.leases.acquire(this.thread(threadKey).key, token, ttlMs);
  }

  async wakeAcquire(
    threadKey: string,
    token: string,
    ttlMs: number,
    ahead?: TakeAhead,
  ): Promise<WakeAcquire> {
    const t = this.thread(threadKey);
    t.wake = undefined;
    const r = await this.leases.acquire(t.key, token, ttlMs);
    if (!r.acquired) return r;
    const control = { ...t.control };
    if (!ahead) return { acquired: true, control };
    const inflight = [...t.inflight];
    // The journal is not this state's to read: with it in use, the caller takes itself.
    if (inflight.length > 0 || ahead.journal) return { acquired: true, control, inflight };
    const taken = this.takeNow(threadKey, token, "next", ahead.debounceMs);
    if (taken.status === "lost")
      throw new Error(`The lease of ${threadKey} was taken within its own acquire.`);
    return { acquired: true, control, inflight, ahead: taken };
  }

  async renew(threadKey: string, token: string, ttlMs: number): Promise<boolean> {
    return this.leases.renew(this.thread(threadKey).key, token, ttlMs);
  }

  async release(threadKey: string, token: string): Promise<ReleaseOutcome> {
    return this.releaseNow(threadKey, token);
  }

  private releaseNow(threadKey: string, token: string): ReleaseOutcome {
    const t = this.thread(threadKey);
    if (this.holder(t) !== token) return "lost";
    if (t.inbox.length > 0 || t.inflight.length > 0) return "busy";
    this.leases.drop(t.key, token);
    return "released";
  }

  async forceRelease(threadKey: string, token: string): Promise<void> {
    this.leases.drop(this.thread(threadKey).key, token);
  }

  async take(threadKey: string, token: string, rule: TakeRule, debounceMs: number): Promise<TakeOutcome> {
    return this.takeNow(threadKey, token, rule, debounceMs);
  }

  private takeNow(threadKey: string, token: string, rule: TakeRule, debounceMs: number): TakeOutcome {
    const t = this.thread(threadKey);
    if (this.holder(t) !== token) return { status: "lost" };
    const head = t.inbox[0];
    let count = 0;
    const run = (pred: (i: InboxItem) => boolean) => {
      while (count < t.inbox.length && pred(t.inbox[count] as InboxItem)) count++;
    };
    if (rule === "steer") run(steersRun);
    else if (head) {
      if (head.kind !== "message") count = rule === "next" ? 1 : 0;
      else if (head.mode === "followUp") count = 1;
      else if (steersRun(head)) run(steersRun);
      else {
        run((i) => i.kind === "message" && i.mode === "collect");
        const newest = Math.max(...t.inbox.slice(0, count).map((i) => i.at));
        const waited = this.now() - newest;
        if (waited < debounceMs)
          return { status: "wait", waitMs: Math.max(1, debounceMs - waited), control: { ...t.control } };
      }
    }
    const items = t.inbox.splice(0, count);
    t.inflight.push(...items);
    return { status: "taken", items, control: { ...t.control } };
  }

  /** `settle`, `take("next")` and, when that took nothing, `release`, with nothing between them (no await). */
  async finish(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    debounceMs: number,
    contextTokens?: number,
  ): Promise<FinishOutcome> {
    if (!this.settleNow(threadKey, token, persisted, true)) return { status: "lost" };
    if (contextTokens !== undefined) this.thread(threadKey).contextTokens = Math.round(contextTokens);
    const next = this.takeNow(threadKey, token, "next", debounceMs);
    if (next.status === "lost") return next;
    if (next.status === "wait" || next.items.length > 0) return { status: "kept", next };
    const r = this.releaseNow(threadKey, token);
    if (r === "lost") return { status: "lost" };
    return r === "released"
      ? { status: "released" }
      : { status: "kept", next: { status: "taken", items: [] } };
  }

  async inflight(threadKey: string): Promise<InboxItem[]> {
    return [...this.thread(threadKey).inflight];
  }

  async settle(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    dropPersisted: boolean,
  ): Promise<boolean> {
    return this.settleNow(threadKey, token, persisted, dropPersisted);
  }

  private settleNow(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    dropPersisted: boolean,
  ): boolean {
    const t = this.thread(threadKey);
    if (this.holder(t) !== token) return false;
    const done = new Set(persisted);
    const back = t.inflight.filter((i) => !done.has(i.seq));
    t.inflight = dropPersisted ? [] : t.inflight.filter((i) => done.has(i.seq));
    t.inbox.unshift(...back);
    return true;
  }

  /** Whether `token` holds the thread's lease now (the file store's fence check). */
  holds(threadKey: string, token: string): boolean {
    const t = this.threads.get(threadKey);
    return t !== undefined && this.holder(t) === token;
  }

  /** Sets the wake flag whatever it holds (a re-wake). */
  setWake(threadKey: string, marker: string): void {
    this.thread(threadKey).wake = marker;
  }

  /** Threads with queued or inflight items and no live lease (for the embedded scheduler's safety net). */
  strandedThreads(): string[] {
    const out: string[] = [];
    for (const [key, t] of this.threads) {
      if ((t.inbox.length > 0 || t.inflight.length > 0) && this.holder(t) === undefined) out.push(key);
    }
    return out;
  }

  async close(): Promise<void> {
    this.threads.clear();
  }
}
