/**
 * One worker's tenure on one thread, as one state machine: every state it can be in, every
 * transition, and every lease step (acquire, renew, take, settle, release, hand over) that moves
 * it. Once acquired, the lease is held through `holdLease` (queue/lease/hold.ts), the one rule for
 * every lease: renewed every fifth of its TTL, lost when a renewal is refused or none was confirmed
 * for ⅔ of the TTL. The parts of the worker that act within a tenure (the holder's loop, the run
 * driver, session commands, compaction, the session writer) receive this object and ask it what
 * they may do; a step whose reply says the lease is gone moves it to `lost` by itself.
 *
 * ```
 *          acquire()               begin(work)            endWork()
 *   idle ────────────► leased ─────────────► running ─────────────► settling
 *     │                 ▲  │ ▲                                          │
 *     │ a live holder   │  │ └───────────────── settled() ──────────────┘
 *     ▼                 │  │ release(): nothing left to take
 *   declined      busy  │  ▼
 *                       └─ releasing ────────► released
 *   settling ── finish() ──► releasing (a finished run's settle, take and release in one step)
 *
 *   leased, running, settling, releasing ── handOff() ──► handingOff ── end() ──► handedOff
 *   any state but idle and the terminal ones ── lose() ──► lost    ── fail() ──► failed
 * ```
 *
 * - `running` is an agent run or a session command (`/new`, `/compact`); `settling` is the end of
 *   one: its session writes are flushed, its sink is closed (awaited, before the items settle: the
 *   step where a run's final render is to be confirmed, or recorded as owed), and its items are
 *   settled.
 * - `handingOff` (shutdown): the work stops at its next checkpoint, or at once (`now`); the lease
 *   is renewed until `end()` deletes it, so the items settle under the lease.
 * - Terminal states (`declined`, `released`, `handedOff`, `lost`, `failed`) ignore every further
 *   transition: a renewal refused after the tenure ended is not a loss.
 *
 * Lease events are reported write-ahead: `releasing` is reported before a release is sent, so a
 * log kept by `onLease` bounds the end of every tenure from below even when the process dies with
 * the release on the wire (docs/runtime.md, "No two holders").
 */
import type { Clock } from "../../agent/clock.js";
import { holdLease } from "../lease/hold.js";
import type { LeaseAcquire } from "../lease/store.js";
import type {
  ControlState,
  FinishOutcome,
  ReleaseOutcome,
  TakeOutcome,
  TakeRule,
  ThreadState,
} from "../state/types.js";
import type { InboxItem } from "../types.js";

export type TenureState =
  | "idle"
  | "leased"
  | "running"
  | "settling"
  | "releasing"
  | "handingOff"
  | "declined"
  | "released"
  | "handedOff"
  | "lost"
  | "failed";

/** Every allowed transition; terminal states have none. */
const TRANSITIONS: Readonly<Record<TenureState, readonly TenureState[]>> = {
  idle: ["leased", "declined"],
  leased: ["running", "releasing", "handingOff", "lost", "failed"],
  running: ["settling", "handingOff", "lost", "failed"],
  settling: ["leased", "releasing", "handingOff", "lost", "failed"],
  releasing: ["released", "leased", "handingOff", "lost", "failed"],
  handingOff: ["released", "handedOff", "lost", "failed"],
  declined: [],
  released: [],
  handedOff: [],
  lost: [],
  failed: [],
};

/** States in which new work may start. */
const ACTIVE: ReadonlySet<TenureState> = new Set(["leased", "running", "settling", "releasing"]);
/** States in which the lease is renewed (not while a release is on the wire). */
const RENEWING: ReadonlySet<TenureState> = new Set(["leased", "running", "settling", "handingOff"]);

/**
 * A lease event, for observability and for the multi-process test's overlap check.
 * - `acquired`: `at` when the reply arrived (the lease was set no later), `sentAt` when it was sent.
 * - `declined`: a wake job left the thread to the live holder it found (or the worker is stopping).
 * - `renewed`: a confirmed renewal; `at` when it was sent (the lease lasts at least a TTL from then).
 * - `releasing`: reported just before a release is sent (`force`: a hand-over or a failure deletes
 *   the lease whatever is queued); `at` is the send time. Until `kept` answers it, the lease may
 *   have ended at `at`.
 * - `kept`: the release answered "busy": the lease stays.
 * - `released` / `handoff`: the lease was deleted; `at` is when the request was sent.
 * - `lost` / `failed`: when the tenure found out.
 */
export interface LeaseEvent {
  type:
    | "acquired"
    | "declined"
    | "renewed"
    | "releasing"
    | "kept"
    | "released"
    | "handoff"
    | "lost"
    | "failed";
  threadKey: string;
  token: string;
  at: number;
  sentAt?: number;
  force?: boolean;
}

/** What a tenure needs; shared by every tenure of a worker process. */
export interface TenureEnv {
  state: ThreadState;
  clock: Clock;
  leaseTtlMs: number;
  collectDebounceMs: number;
  onError: (error: unknown, context: string) => void;
  onLease?: (event: LeaseEvent) => void;
}

/** A predecessor's leftovers as the step that took the lease read them. */
export interface AcquiredLeftovers {
  /** The inflight list. */
  inflight: InboxItem[];
  /** The step took ahead, which it does only when the render journal (if in use) owes nothing. */
  nothingOwed: boolean;
}

/**
 * What the step that took the lease read, as one value: the holder's first round uses it instead
 * of asking again. A wake acquire reads the control state, and asked to take ahead, a
 * predecessor's leftovers and (when nothing is left to recover) the first `take("next")`; a plain
 * acquire (a retry after meeting a live lease) reads none of them. Each part left undefined is read
 * by the holder itself.
 */
export interface FirstRound {
  control: ControlState | undefined;
  leftovers: AcquiredLeftovers | undefined;
  firstTake: Exclude<TakeOutcome, { status: "lost" }> | undefined;
}

/** A lease try: taken (with what its step read), or a live holder's, as `LeaseAcquire` reports it. */
type Acquired = { acquired: true; first: FirstRound } | Extract<LeaseAcquire, { acquired: false }>;

/** The work a tenure does while `running`: an agent run or a session command. */
export interface TenureWork {
  /** A stop aborted it: nothing more is taken for it and no automatic compaction starts. */
  readonly aborted: boolean;
  /** The thread's durable control state changed: abort when a stop targets this work. */
  onControl(c: ControlState): void;
}

export class Tenure {
  private current: TenureState = "idle";
  private activeWork: TenureWork | undefined;
  private readonly stopping = new AbortController();
  private readonly ending = new AbortController();
  /** The lease's renewals: settles once they stopped (the tenure ended, or the lease was lost). */
  private holding: Promise<unknown> = Promise.resolve();

  constructor(
    readonly threadKey: string,
    readonly token: string,
    private readonly env: TenureEnv,
  ) {}

  get state(): TenureState {
    return this.current;
  }

  /** Holds the lease and may start new work (not handing over, not ended). */
  get active(): boolean {
    return ACTIVE.has(this.current);
  }

  /** A shutdown asked for the thread to be handed over. */
  get handingOff(): boolean {
    return this.current === "handingOff";
  }

  /** In a terminal state. */
  get ended(): boolean {
    return TRANSITIONS[this.current].length === 0;
  }

  /** The work in progress (`running`, `settling`, or a hand-over that interrupted it). */
  get work(): TenureWork | undefined {
    return this.activeWork;
  }

  /**
   * Aborted when the work must stop at once: the lease is lost, the tenure failed, or a hand-over
   * reached its stopping point. The session writer queues nothing more and the agent is aborted.
   */
  get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  /** Aborted when the tenure reaches a terminal state: renewals and control polls stop. */
  get endSignal(): AbortSignal {
    return this.ending.signal;
  }

  /** Settles once the lease's renewals have stopped (after the tenure ended). Never rejects. */
  get renewals(): Promise<void> {
    return this.holding.then(() => {});
  }

  // ---- idle → leased | declined ----

  /**
   * Takes the lease, or declines because a live holder has it. A lease that looks stale (not
   * renewed within half its TTL, or any lease met by a stalled job's rerun, whose holder may be
   * the dead worker) is watched until it expires (then taken) or is renewed or replaced (then its
   * holder is alive). The lease itself expires on the store's clock (Redis's own in Redis mode);
   * the watch only decides how long to keep asking. `wake`: this is a wake job's first step, so the
   * thread's wake flag is cleared in the same atomic step as the first try (`wakeAcquire`), which
   * also reads the control state. `takeAhead` (with `wake`): that step also reads the inflight list
   * and, when nothing is left to recover, makes the first `take("next")`; `journal` says the render
   * journal is in use, so an owed render counts as something to recover. Returns what the step that
   * took the lease read (`FirstRound`), or undefined when declined.
   */
  async acquire(o: {
    rerun: boolean;
    wake?: boolean;
    takeAhead?: { journal: boolean };
    signal?: AbortSignal;
  }): Promise<FirstRound | undefined> {
    const { clock, leaseTtlMs: ttl } = this.env;
    const tolerance = Math.max(25, ttl / 20);
    const deadline = clock.now() + 2 * ttl + 1000;
    let seen: { holder: string; expiresAt: number } | undefined;
    let clearWake = o.wake === true;
    for (;;) {
      const sentAt = clock.now();
      const r = clearWake ? await this.wakeAcquire(o.takeAhead) : await this.plainAcquire();
      clearWake = false;
      if (r.acquired) {
        this.to("leased");
        this.report({ type: "acquired", at: clock.now(), sentAt });
        this.hold(sentAt);
        return r.first;
      }
      const now = clock.now();
      const expiresAt = now + Math.max(0, r.pttl);
      const alive = seen
        ? seen.holder !== r.holder || expiresAt > seen.expiresAt + tolerance
        : !o.rerun && r.pttl > ttl / 2;
      if (alive || o.signal?.aborted || now > deadline) return this.decline();
      seen ??= { holder: r.holder, expiresAt };
      try {
        await clock.sleep(Math.min(Math.max(r.pttl, 5), ttl / 4), o.signal);
      } catch {
        return this.decline();
      }
    }
  }

  /** The state's `acquire`: it reads nothing for the first round. */
  private async plainAcquire(): Promise<Acquired> {
    const r = await this.env.state.acquire(this.threadKey, this.token, this.env.leaseTtlMs);
    if (!r.acquired) return r;
    return { acquired: true, first: { control: undefined, leftovers: undefined, firstTake: undefined } };
  }

  /** The state's `wakeAcquire`, with what it read as the first round's value. */
  private async wakeAcquire(takeAhead: { journal: boolean } | undefined): Promise<Acquired> {
    const { state, leaseTtlMs, collectDebounceMs } = this.env;
    const ahead = takeAhead && { debounceMs: collectDebounceMs, journal: takeAhead.journal };
    const r = await state.wakeAcquire(this.threadKey, this.token, leaseTtlMs, ahead);
    if (!r.acquired) return r;
    // A state takes ahead only when the journal (if in use) owes the thread nothing.
    const leftovers = r.inflight && { inflight: r.inflight, nothingOwed: r.ahead !== undefined };
    return { acquired: true, first: { control: r.control, leftovers, firstTake: r.ahead } };
  }

  private decline(): undefined {
    this.to("declined");
    this.report({ type: "declined", at: this.env.clock.now() });
    return undefined;
  }

  // ---- leased → running → settling → leased ----

  /** Work may start now: `leased` (not handing over, not ended, no work in progress). */
  get mayBegin(): boolean {
    return this.current === "leased";
  }

  /** Work starts (a run or a session command); check `mayBegin` first, in the same tick. */
  begin(work: TenureWork): void {
    this.to("running");
    this.activeWork = work;
  }

  /** The work ended; its writes, sink and items are settled next. A hand-over stays a hand-over. */
  endWork(): void {
    if (this.current === "running") this.to("settling");
  }

  /** The work's items are settled: back to `leased`. */
  settled(): void {
    this.activeWork = undefined;
    if (this.current === "settling") this.to("leased");
  }

  // ---- lease steps ----

  /** Moves items from the inbox head to the inflight list by `rule` (fenced); `lost` ends the tenure. */
  async take(rule: TakeRule): Promise<TakeOutcome> {
    const t = await this.env.state.take(this.threadKey, this.token, rule, this.env.collectDebounceMs);
    if (t.status === "lost") this.lose();
    return t;
  }

  /**
   * Puts what a take made ahead of time (the first round's) back at the inbox head: older work
   * comes first (a predecessor's unanswered question). Only for a take made while nothing was
   * inflight, so the settle puts back exactly what it took. False (and `lost`) when the lease is gone.
   */
  async putBack(ahead: TakeOutcome | Promise<TakeOutcome>): Promise<boolean> {
    const t = await ahead;
    if (t.status === "lost") return false;
    if (t.status !== "taken" || t.items.length === 0) return true;
    return this.settle([], false);
  }

  /**
   * Settles the inflight list against the seqs the session holds (fenced): the others go back to
   * the inbox head; held ones are removed (`dropPersisted`) or kept. False (and `lost`) when the
   * lease is gone.
   */
  async settle(persisted: readonly number[], dropPersisted: boolean): Promise<boolean> {
    const ok = await this.env.state.settle(this.threadKey, this.token, persisted, dropPersisted);
    if (!ok) this.lose();
    return ok;
  }

  /**
   * `leased → releasing`: deletes the lease only if the inbox and the inflight list are empty (one
   * atomic step). `released`: the tenure is over; `busy`: back to `leased` (something arrived);
   * `lost`: the lease was gone.
   */
  async release(): Promise<ReleaseOutcome> {
    this.to("releasing");
    const sentAt = this.env.clock.now();
    this.report({ type: "releasing", at: sentAt });
    const r = await this.env.state.release(this.threadKey, this.token);
    if (r === "released") {
      this.to("released");
      this.report({ type: "released", at: sentAt });
    } else if (r === "lost") {
      this.lose();
    } else {
      this.report({ type: "kept", at: this.env.clock.now() });
      if (this.current === "releasing") this.to("leased");
    }
    return r;
  }

  /** `finish` may be used now: `settling` (not handing over). */
  get mayFinish(): boolean {
    return this.current === "settling";
  }

  /**
   * `settling → releasing`: the end of a finished run as one fenced step with the effect of
   * `settle(persisted, true)`, `take("next")` and, when that took nothing, `release()` back to back
   * (the state's `finish`). `released`: the tenure is over; `kept`: back to `leased`, with what the
   * "next" rule took (or its wait): the holder's next take; `lost`: the lease was gone. Reported like
   * a release (write-ahead `releasing`, then `released` or `kept`). Check `mayFinish` first, in the
   * same tick.
   */
  async finish(persisted: readonly number[], contextTokens?: number): Promise<FinishOutcome> {
    this.to("releasing");
    this.activeWork = undefined;
    const sentAt = this.env.clock.now();
    this.report({ type: "releasing", at: sentAt });
    const r = await this.env.state.finish(
      this.threadKey,
      this.token,
      persisted,
      this.env.collectDebounceMs,
      contextTokens,
    );
    if (r.status === "released") {
      this.to("released");
      this.report({ type: "released", at: sentAt });
    } else if (r.status === "lost") {
      this.lose();
    } else {
      this.report({ type: "kept", at: this.env.clock.now() });
      if (this.current === "releasing") this.to("leased");
    }
    return r;
  }

  /**
   * Holds the lease until the tenure ends: renewed on the clock while it may be (not while a release
   * is on the wire), each confirmed renewal reported; a refusal, or no confirmed renewal for ⅔ of
   * the TTL, is a loss (`holdLease` has the rule and why).
   */
  private hold(acquiredAt: number): void {
    const { state, clock, leaseTtlMs: ttl } = this.env;
    this.holding = holdLease({
      clock,
      ttlMs: ttl,
      acquiredAt,
      signal: this.ending.signal,
      renew: () => (RENEWING.has(this.current) ? state.renew(this.threadKey, this.token, ttl) : undefined),
      onRenewed: (sentAt) => this.report({ type: "renewed", at: sentAt }),
      onLost: () => this.lose(),
      onError: (e) => this.env.onError(e, `renewing the lease of ${this.threadKey}`),
    });
  }

  // ---- hand-over, loss, failure ----

  /**
   * Shutdown: hand the thread over. `checkpoint` lets the work run to its next checkpoint (what
   * ended before it is saved); `now` stops it at once. Work that has not started stops at once.
   */
  handOff(mode: "checkpoint" | "now"): void {
    if (this.ended || this.current === "idle") return;
    if (this.current !== "handingOff") this.to("handingOff");
    if (mode === "now" || !this.activeWork) this.stop();
  }

  /** Stop the work now: the session writes nothing more it is asked to, the agent is aborted. */
  stop(): void {
    this.stopping.abort();
  }

  /**
   * The lease is gone, or counted gone: nothing new is queued; writes queued before still reach the
   * fenced store, which takes them only while the lease stands.
   */
  lose(): void {
    if (!this.to("lost")) return;
    this.report({ type: "lost", at: this.env.clock.now() });
  }

  /** An unexpected error: stop at once; `end()` deletes the lease so another attempt can start later. */
  fail(error: unknown, context: string): void {
    if (this.ended) return;
    this.env.onError(error, context);
    this.to("failed");
    this.report({ type: "failed", at: this.env.clock.now() });
  }

  /**
   * After the holder's loop: a hand-over (or a loop that ended without an outcome) deletes the
   * lease whatever is queued (`handedOff`; the caller wakes the thread for the next worker); a
   * failed tenure deletes it too, so the thread can be tried again later. A delete that fails is
   * reported; the lease then expires by itself. Never throws; returns the terminal state.
   */
  async end(): Promise<TenureState> {
    if (!this.ended && this.current !== "idle" && this.current !== "handingOff") this.to("handingOff");
    if (this.current === "handingOff" || this.current === "failed") {
      const sentAt = this.env.clock.now();
      this.report({ type: "releasing", at: sentAt, force: true });
      try {
        await this.env.state.forceRelease(this.threadKey, this.token);
      } catch (e) {
        this.env.onError(e, `releasing the lease of ${this.threadKey} (it expires by itself)`);
      }
      if (this.to("handedOff")) this.report({ type: "handoff", at: sentAt });
    }
    this.stopping.abort();
    this.ending.abort();
    return this.current;
  }

  // ---- the machine ----

  /** Moves to `next`; false when the tenure already ended (ignored). A transition not in the table is a bug. */
  private to(next: TenureState): boolean {
    if (this.ended) return false;
    if (!TRANSITIONS[this.current].includes(next)) {
      throw new Error(
        `Tenure of ${this.threadKey}: no transition ${this.current} → ${next}; this is a bug in the worker.`,
      );
    }
    this.current = next;
    if (this.ended) {
      this.activeWork = undefined;
      this.stopping.abort();
      this.ending.abort();
    }
    return true;
  }

  private report(e: Omit<LeaseEvent, "threadKey" | "token">): void {
    try {
      this.env.onLease?.({ ...e, threadKey: this.threadKey, token: this.token });
    } catch (err) {
      this.env.onError(err, "a lease event observer");
    }
  }
}
