/**
 * The coordination primitives of the runtime, one interface per concern: the event claims
 * (`EventClaimStore`, the dedupe point's), and each thread's inbox, control state, lease and run
 * steps (together `ThreadState`). `RedisThreadState` implements the thread's with one Lua script per
 * step; `MemoryThreadState` implements the same semantics in one process (composing its combined
 * steps from its single ones). The dispatcher, the job processor and the thread holder are written
 * against these interfaces only, so both runtimes share every rule about ordering and delivery.
 */
import type { LeaseAcquire } from "../lease/store.js";
import type { InboxItem } from "../types.js";

/** What to do when a message arrives at a full inbox: refuse it (`new`) or drop the oldest (`old`). */
export type DropPolicy = "new" | "old";

export interface AppendOptions {
  /** Maximum queued items (at least 1). */
  cap: number;
  dropPolicy: DropPolicy;
}

export type AppendOutcome =
  | {
      accepted: true;
      seq: number;
      depth: number;
      /** The wake flag was newly set: the caller must make sure a wake job exists (`Waker.wake`). */
      woke: boolean;
      /** The flag value set when `woke` (pass it to `Waker.wake`). */
      wakeMarker: string;
      /** A lease was held at append time. */
      active: boolean;
      /** Items removed to make room (`old` policy) or discarded by an interrupt. */
      dropped: InboxItem[];
      /**
       * The item's `eventId` was appended before (a retry of a delivery refused after its append):
       * `seq` is the stored item's and nothing was added.
       */
      repeated?: boolean;
    }
  | { accepted: false; depth: number; active: boolean };

/**
 * What `claimEvent` found. `claimed`: the caller owns the event now and must handle it, renew the
 * claim while it works and end with `confirmEvent` (handled) or `releaseEvent` (failed).
 * `done`: a process handled it within the dedupe window. `held`: another live owner holds a claim
 * that expires in `remainingMs` unless that owner renews it.
 */
export type EventClaim = { status: "claimed" } | { status: "done" } | { status: "held"; remainingMs: number };

export type ReleaseOutcome = "released" | "busy" | "lost";

/**
 * What `finish` did: `lost` (not the holder; nothing changed); `released` (settled, nothing left,
 * the lease is deleted); `kept` (settled; `next` is what the "next" rule took, or its wait).
 */
export type FinishOutcome =
  | { status: "lost" }
  | { status: "released" }
  | { status: "kept"; next: Exclude<TakeOutcome, { status: "lost" }> };

/**
 * Which items a checkpoint takes from the head of the inbox (never out of order):
 * - `steer`: the consecutive `steer`/`interrupt` messages at the head.
 * - `next`: what starts the next run: one `followUp` message, or the consecutive
 *   `steer`/`interrupt` messages, or the consecutive `collect` messages once the newest is older
 *   than the debounce window, or one `newSession` item.
 * - `followUp`: like `next` but never a `newSession` item (that one ends the run first).
 */
export type TakeRule = "steer" | "followUp" | "next";

/**
 * What a take did. `control`, when the state gives it, is the thread's control state read in the
 * same atomic step (after the items moved): the holder applies it instead of reading it again.
 */
export type TakeOutcome =
  | { status: "lost" }
  /** The head is a collect group still within its debounce window; ask again after `waitMs`. */
  | { status: "wait"; waitMs: number; control?: ControlState }
  /** The items now in the inflight list (possibly none). */
  | { status: "taken"; items: InboxItem[]; control?: ControlState };

/**
 * What `wakeAcquire` did: the lease was taken (with the control state read in the same step), or a
 * live holder has it (as `LeaseAcquire` reports it). Asked to take ahead, a state also returns the
 * inflight list as it was when the lease was taken, and `ahead`: what `take("next")` would have
 * returned right after (never `lost`), left out when something may be left to recover first (a
 * state that does not read the render journal leaves it out whenever the journal is in use).
 */
export type WakeAcquire =
  | {
      acquired: true;
      control: ControlState;
      inflight?: InboxItem[];
      ahead?: Exclude<TakeOutcome, { status: "lost" }>;
    }
  | { acquired: false; holder: string; pttl: number };

/**
 * `wakeAcquire`'s take ahead: the first `take("next")` in the step that takes the lease, made only
 * when the inflight list is empty (a predecessor left nothing to recover first) and, with
 * `journal`, the thread's render journal owes nothing (a cut-off reply is finished first).
 */
export interface TakeAhead {
  debounceMs: number;
  journal: boolean;
}

export interface ControlState {
  /** A run whose first item has `seq <= abortAt` must abort (a stop or an interrupt came after it). */
  abortAt: number;
  /** Bumped by every control command, so a holder knows to re-read the thread's settings. */
  ver: number;
  /** Counts stops and interrupts: a run that saw a lower count when it started aborts. */
  stops: number;
}

export interface StopOutcome {
  abortAt: number;
  /** A lease was held when the stop arrived. */
  active: boolean;
  /** Queued messages removed. */
  discarded: InboxItem[];
}

export interface ThreadProbe {
  inboxDepth: number;
  inflightDepth: number;
  active: boolean;
}

/**
 * The dedupe point's store of platform event claims: each claim is a short lease of one handling
 * attempt, held on the same rule as a thread's lease (`holdLease`: renewed every fifth of its TTL,
 * lost when refused or unconfirmed for ⅔ of it). Not a thread's state: an event is claimed before
 * it is known which thread (if any) it reaches.
 */
export interface EventClaimStore {
  /**
   * Claims a platform event id for `owner` (unique per handling attempt) until `ttlMs` from now on
   * the store's clock. A claim whose owner stopped renewing it (a dead process) has expired and is
   * taken over; one marked done is never claimed again within the dedupe window.
   */
  claimEvent(eventId: string, owner: string, ttlMs: number): Promise<EventClaim>;
  /** Extends `owner`'s claim to `ttlMs` from now; false when `owner` no longer holds it. */
  renewEvent(eventId: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Marks an event handled (its message is durable), for the dedupe window. */
  confirmEvent(eventId: string): Promise<void>;
  /** Forgets `owner`'s claim after a failed handling, so a platform retry gets through. */
  releaseEvent(eventId: string, owner: string): Promise<void>;
}

/** A thread's inbox as the gateway writes it: appends, stops, and the `status` probe. */
export interface ThreadInbox {
  /**
   * Appends one item (a message or `newSession`) and sets the wake flag if it was not set. A message
   * whose `eventId` this thread stored within the dedupe window is not stored again (`repeated`).
   */
  append(
    threadKey: string,
    item: Pick<InboxItem, "mode" | "kind" | "message" | "instructions">,
    options: AppendOptions,
  ): Promise<AppendOutcome>;
  /** Aborts everything delivered so far: sets `abortAt` to the last seq and empties the inbox (except `newSession` items). */
  stop(threadKey: string): Promise<StopOutcome>;
  probe(threadKey: string): Promise<ThreadProbe>;
}

/** A thread's durable control state, and the context size its holder last recorded (`status`). */
export interface ThreadControl {
  /** Bumps the control version (a setting changed). */
  touchControl(threadKey: string): Promise<void>;
  readControl(threadKey: string): Promise<ControlState>;
  /** Records the holder's latest estimate of the thread's context size (tokens), for `status`. */
  setContextTokens(threadKey: string, tokens: number): Promise<void>;
  /** The latest recorded estimate, or undefined. */
  contextTokens(threadKey: string): Promise<number | undefined>;
}

/** A thread's lease and wake flag: who holds the thread, and whether a wake job is owed. */
export interface ThreadLease {
  /** Clears the wake flag (a wake job's first step, before it tries the lease). */
  clearWake(threadKey: string): Promise<void>;
  /**
   * Takes the thread's lease for `token` (a `LeaseStore` acquire on the thread's lease key); the
   * steps that also read the inbox check the same key.
   */
  acquire(threadKey: string, token: string, ttlMs: number): Promise<LeaseAcquire>;
  /**
   * A wake job's first step as one atomic call, with the effect of `clearWake` then `acquire`; when
   * the lease is taken it also returns the control state read in that step, and with `ahead` the
   * inflight list and the first take (`TakeAhead`).
   */
  wakeAcquire(threadKey: string, token: string, ttlMs: number, ahead?: TakeAhead): Promise<WakeAcquire>;
  /** Extends the lease; false when `token` no longer holds it. */
  renew(threadKey: string, token: string, ttlMs: number): Promise<boolean>;
  /** Releases the lease only if the inbox and the inflight list are empty (one atomic step). */
  release(threadKey: string, token: string): Promise<ReleaseOutcome>;
  /** Releases the lease whatever is queued (a worker handing a thread over); the caller wakes the thread. */
  forceRelease(threadKey: string, token: string): Promise<void>;
}

/** A holder's steps on the inbox and the inflight list, each fenced by the lease. */
export interface RunSteps {
  /** Moves items from the inbox head to the inflight list, fenced by the lease. */
  take(threadKey: string, token: string, rule: TakeRule, debounceMs: number): Promise<TakeOutcome>;
  /** The inflight list (items taken and not yet settled). */
  inflight(threadKey: string): Promise<InboxItem[]>;
  /**
   * Fenced. Inflight items whose seq is not in `persisted` go back to the inbox head, in order;
   * persisted ones are removed when `dropPersisted`, else kept (a run still in progress).
   * Returns false when the lease is lost.
   */
  settle(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    dropPersisted: boolean,
  ): Promise<boolean>;
  /**
   * The end of a finished run as one fenced, atomic step, with the effect of
   * `settle(persisted, true)`, `take("next")` and, when that took nothing, `release` back to back.
   * `contextTokens` (the holder's context estimate) is recorded in the same step, as
   * `setContextTokens` would.
   */
  finish(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    debounceMs: number,
    contextTokens?: number,
  ): Promise<FinishOutcome>;
}

/**
 * The per-thread coordination state, by concern. Every method is atomic on its own, and required
 * of both backends: the worker and the dispatcher have one code path whichever runs them.
 */
export interface ThreadState extends ThreadInbox, ThreadControl, ThreadLease, RunSteps {
  /** Releases resources (connections). */
  close(): Promise<void>;
}

/** Makes sure a wake job exists for a thread whose wake flag the caller set. */
export interface Waker {
  wake(threadKey: string, marker: string): Promise<void>;
}
