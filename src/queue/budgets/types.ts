/**
 * Spend budgets: caps in money (USD) and tokens per user, channel, thread and the whole deployment,
 * per day and per month in the ledger's time zone. `BudgetLedger` is the seam the embedded mode's
 * `MemoryBudgetLedger` and the Redis mode's `RedisBudgetLedger` implement with the same semantics
 * (the contract suite, test/queue/budgets/budget-ledger-contract.ts, runs on both); docs/budgets.md
 * says what they keep and why.
 */

/** How long a cap counts before it starts again at zero: a calendar day or month in the ledger's zone. */
export type BudgetPeriod = "day" | "month";

/** Whose spending a cap limits: one person, one channel, one thread, or every call of the deployment. */
export type BudgetScope = "user" | "channel" | "thread" | "deployment";

/**
 * One limit on one scope's spending in one period. `key` names the scope's member (`telegram:42`
 * for a user, the thread key for a thread, `""` for the deployment); spending is counted per
 * (scope, key, period) and per period start, so a new day or month starts at zero. A cap limits
 * money (`usd`), tokens (`tokens`), both, or neither: a cap without limits only counts (spent
 * counters, usage rows) and never refuses, unless `setLimit` gave its period one. Limits must be
 * finite and ≥ 0 (the ledgers throw a RangeError otherwise: a caller's bug). Under the default
 * admission rule (`fits`) limits are inclusive: spending may reach a limit, not pass it.
 */
export interface BudgetCap {
  scope: BudgetScope;
  key: string;
  period: BudgetPeriod;
  usd?: number;
  tokens?: number;
}

/** Limits in USD and tokens; an absent dimension is not limited. */
export interface BudgetLimit {
  usd?: number;
  tokens?: number;
}

/**
 * How a reservation is admitted against a cap's limit (per dimension the cap limits, with the
 * period's spent and its live reservations):
 * - `fits` (the default): refused when spent + reserved + amount would pass the limit, so spending
 *   never passes a cap;
 * - `under`: refused only when spent + reserved has already reached the limit (a zero limit refuses
 *   every call); an admitted call may take spending past the limit by its own amount. Worst-case
 *   reservations are far above what calls really cost, so `fits` refuses calls while the spend is
 *   well under the cap; `under` lets a call run while the cap is not reached, and the worst-case
 *   reservations still keep concurrent calls from all slipping in at once: spending passes a cap by
 *   at most about one call.
 */
export type AdmitRule = "fits" | "under";

/**
 * An amount of spending. USD is kept in whole micro-dollars inside the ledgers (so sums never drift)
 * and tokens as whole numbers: both are rounded to those units at the edge. Never negative.
 */
export interface Amount {
  usd: number;
  tokens: number;
}

/**
 * A reservation request: the worst-case `amount` of call `callId` (unique per model call: the
 * ledger treats a repeated id as a retry of the same call) against every cap in `caps`, at `now`
 * (ms; its periods are the ones containing `now`), held for `ttlMs` (> 0; the lease: a worker that
 * dies before it settles leaves nothing behind for longer). `admit` is the admission rule
 * (`AdmitRule`, default `fits`). `override` reserves past the caps (an admin approved one more
 * run); it is still one reservation, counted like any other.
 */
export interface ReserveRequest {
  callId: string;
  caps: readonly BudgetCap[];
  amount: Amount;
  now: number;
  ttlMs: number;
  admit?: AdmitRule;
  override?: boolean;
}

/**
 * What a reservation came to. Refused: `cap` is the first cap (in request order) that refused it
 * under the request's admission rule, with what it had `spent` and `reserved` (live reservations
 * only) in its current period, the `limit` that applied (the one `setLimit` stored for the period,
 * per dimension, else the cap's own), and `resetsAt`, the end of that period (ms), when it starts
 * again at zero.
 */
export type ReserveOutcome =
  | { ok: true }
  | {
      ok: false;
      cap: BudgetCap;
      spent: Amount;
      reserved: Amount;
      limit: BudgetLimit;
      resetsAt: number;
    };

/**
 * A settlement: call `callId` ended and cost `actual`. `caps` are the caps it was reserved against
 * and `reservedAt` the `now` it was reserved at (default: `now`); the ledger uses them only when it
 * no longer holds the reservation (it expired before the settle, or was released), so that spend is
 * never lost: `actual` then goes to those caps' periods containing `reservedAt`. `model` names the
 * model for the usage rows (default `""`).
 */
export interface SettleRequest {
  callId: string;
  caps: readonly BudgetCap[];
  actual: Amount;
  now: number;
  reservedAt?: number;
  model?: string;
}

/**
 * One cap as it stands in the period containing the time asked about: its `spent`, its live
 * `reserved`, the `limit` that applies there (per dimension the one `setLimit` stored for the
 * period, else the cap's own; an absent dimension is not limited) and when that period ends.
 */
export interface CapUsage {
  cap: BudgetCap;
  spent: Amount;
  reserved: Amount;
  limit: BudgetLimit;
  resetsAt: number;
}

/**
 * One row of the usage export: what one member of a scope spent on one model on one day (the
 * ledger's zone), and in how many settled calls. Kept for user, channel and deployment caps (a
 * thread's spending is in its channel's and user's rows); `model` is `""` when the settle named none.
 */
export interface UsageRow {
  day: string;
  scope: BudgetScope;
  key: string;
  model: string;
  usd: number;
  tokens: number;
  calls: number;
}

/**
 * The spend ledger of a deployment, shared by every process that calls models. Every step first
 * sweeps the reservations whose lease ran out, so an expired reservation counts nowhere without any
 * background job. Spent counters and the limits `setLimit` stored are kept a while (35 days) after
 * their period ends, usage rows 400 days, claims until their time is up.
 */
export interface BudgetLedger {
  /**
   * Reserves `amount` against every cap in `caps`, atomically also across processes: either every
   * cap gets the reservation or none does. The limit of each cap is, per dimension, the one
   * `setLimit` stored for its period, else the cap's own (read in the same atomic step). Refused
   * when, for any cap and any dimension so limited, the admission rule `admit` refuses: under
   * `fits` (default) when spent + reserved (live reservations) + amount would pass the limit, under
   * `under` when spent + reserved has already reached it. `override` skips that check. Idempotent per call id: a call id that holds a live reservation, or was settled
   * within the last day, answers ok and counts nothing again. The reservation expires `ttlMs` after
   * `now`; from then on it counts nowhere.
   */
  reserve(r: ReserveRequest): Promise<ReserveOutcome>;
  /**
   * Ends a call once: removes its reservation and adds `actual` to the spent of every cap it was
   * reserved against, in the periods it was reserved in; without a live reservation (expired, or
   * released) it adds `actual` to the periods of the request's `caps` containing `reservedAt`
   * instead, so spend is never lost. It also adds the call to the usage rows of the day of
   * `reservedAt ?? now`. A second settle of the same call id within a day changes nothing.
   */
  settle(s: SettleRequest): Promise<void>;
  /**
   * Drops a call's reservation without spending (the call was not made); nothing when it holds
   * none. It is no settlement: a later settle of the call id still counts its spend.
   */
  release(callId: string): Promise<void>;
  /**
   * Each cap's spent and live reserved amounts and its limit (as `reserve` would apply it) in its
   * period containing `now`, in the order given.
   */
  usage(caps: readonly BudgetCap[], now: number): Promise<CapUsage[]>;
  /**
   * Sets the limits of `cap`'s period containing `now` (an admin raised or lowered a cap): each
   * dimension `cap` names (`usd`, `tokens`) replaces that dimension's limit in every later
   * `reserve` against the cap (same scope, key and period) in that period, whatever limits the
   * request's cap carries; a dimension it does not name keeps the limit stored before, if any,
   * else the request's. Kept and dropped with the period's spent counters; the next period starts
   * with the caps' own limits. Rejects with a RangeError when `cap` names no limit, or a negative
   * or non-finite one.
   */
  setLimit(cap: BudgetCap, now: number): Promise<void>;
  /**
   * Sets the spent of `cap`'s period containing `now` back to zero (the cap's limits do not
   * matter). Live reservations stay, and so do the usage rows and any limit `setLimit` stored.
   */
  resetSpent(cap: BudgetCap, now: number): Promise<void>;
  /**
   * Claims `id` (any string) until `until` (ms), atomically also across processes: true for the
   * first claim, false for every later claim while `now` < `until`; from `until` on the id may be
   * claimed again (true once more). For one-time notices, such as one warning per cap and period.
   * Time is the caller's `now`, as everywhere in the ledger.
   */
  claimOnce(id: string, now: number, until: number): Promise<boolean>;
  /**
   * The usage rows of every day (the ledger's zone) that overlaps [sinceMs, untilMs), ordered by day,
   * scope, key and model. Rejects with a RangeError for a range over 1000 days or not finite.
   */
  exportUsage(sinceMs: number, untilMs: number): Promise<UsageRow[]>;
  /** Resolves once the ledger's own writes have ended; leaves a Redis client it was given open. */
  close(): Promise<void>;
}
