/**
 * `BudgetLedger` for the embedded mode (one process, no Redis). Each method changes memory in one
 * synchronous step before its first await, which makes it atomic in the process; the counters are
 * whole micro-dollars and tokens, as in Redis, so both ledgers add up alike. Given a path, the
 * spent counters, stored limits, usage rows and claimed ids are kept in that JSON file
 * (budgets-file.ts), rewritten whole at each change (settle, setLimit, resetSpent, a new claim);
 * reservations and settled call ids live in memory only, since a restart ended every call they
 * belong to.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import {
  type BudgetsState,
  emptyBudgetsState,
  type LimitEntry,
  readBudgetsFile,
  type UsageSums,
  writeBudgetsFile,
} from "./budgets-file.js";
import { assertTimeZone } from "./periods.js";
import {
  admitRule,
  type CapPeriod,
  capPeriod,
  capPeriods,
  checkClaim,
  compareUsageRows,
  daysBetween,
  effectiveLimit,
  fromUnits,
  leaseEnd,
  limitFromUnits,
  limitToSet,
  refuses,
  SETTLED_KEEP_MS,
  spentDropAt,
  toUnits,
  type Units,
  usageDay,
  usageFields,
  usageRow,
} from "./plan.js";
import type {
  BudgetCap,
  BudgetLedger,
  CapUsage,
  ReserveOutcome,
  ReserveRequest,
  SettleRequest,
  UsageRow,
} from "./types.js";

/** Options of a `MemoryBudgetLedger`. */
export interface MemoryBudgetLedgerOptions {
  /** The IANA zone the days and months are counted in (`UTC`, `Europe/Berlin`, …). */
  timeZone: string;
  /** The JSON file to keep spending in (`<dataDir>/budgets.json`); none: memory only. */
  path?: string;
}

interface Reservation {
  amount: Units;
  /** The period ids reserved against, and when each one's spent counters may go. */
  periods: { id: string; dropAt: number }[];
  expiresAt: number;
}

const ZERO: Units = { usd: 0, tokens: 0 };

/**
 * The budget ledger of one process. With a path, the constructor creates its directory and loads
 * the file (none: nothing spent), and throws when the file is damaged (the Error names it and says
 * to move it aside); `settle`, `setLimit`, `resetSpent` and a successful `claimOnce` resolve once a
 * write made after their change is in place. Writes run one after another and a change made
 * meanwhile joins the next. The constructor also throws a RangeError for a zone Intl does not know.
 */
export class MemoryBudgetLedger implements BudgetLedger {
  private readonly timeZone: string;
  private readonly path: string | undefined;
  private readonly state: BudgetsState;
  /** The sums of live reservations by period id. */
  private readonly reserved = new Map<string, Units>();
  private readonly reservations = new Map<string, Reservation>();
  /** Settled call ids → when they may be forgotten. */
  private readonly settled = new Map<string, number>();
  /** The last write queued or under way; never rejects (its callers got the failure). */
  private writes: Promise<void> = Promise.resolve();
  /** A write queued and not started yet, which a new change may join. */
  private queued: Promise<void> | undefined;

  constructor(o: MemoryBudgetLedgerOptions) {
    assertTimeZone(o.timeZone);
    this.timeZone = o.timeZone;
    this.path = o.path;
    if (o.path) mkdirSync(dirname(o.path), { recursive: true });
    this.state = o.path ? readBudgetsFile(o.path) : emptyBudgetsState();
  }

  async reserve(r: ReserveRequest): Promise<ReserveOutcome> {
    const amount = toUnits(r.amount);
    const expiresAt = leaseEnd(r.now, r.ttlMs);
    const periods = capPeriods(r.caps, r.now, this.timeZone);
    const rule = admitRule(r.admit);
    this.sweep(r.now);
    if (this.reservations.has(r.callId) || this.settled.has(r.callId)) return { ok: true };
    if (!r.override)
      for (const p of periods) {
        const spent = this.spentOf(p.id);
        const reserved = this.reserved.get(p.id) ?? ZERO;
        const limit = this.limitOf(p);
        if (refuses(rule, limit, spent, reserved, amount))
          return {
            ok: false,
            cap: p.cap,
            spent: fromUnits(spent),
            reserved: fromUnits(reserved),
            limit: limitFromUnits(limit),
            resetsAt: p.window.end,
          };
      }
    for (const p of periods) this.addReserved(p.id, amount, 1);
    this.reservations.set(r.callId, {
      amount,
      periods: periods.map((p) => ({ id: p.id, dropAt: spentDropAt(p.window.end) })),
      expiresAt,
    });
    return { ok: true };
  }

  async settle(s: SettleRequest): Promise<void> {
    const actual = toUnits(s.actual);
    const at = s.reservedAt ?? s.now;
    const periods = capPeriods(s.caps, at, this.timeZone);
    const rows = usageFields(s.caps, s.model ?? "");
    this.sweep(s.now);
    if (this.settled.has(s.callId)) return;
    const reservation = this.drop(s.callId);
    const targets =
      reservation?.periods ?? periods.map((p) => ({ id: p.id, dropAt: spentDropAt(p.window.end) }));
    const { spent, usage } = this.state;
    for (const { id, dropAt } of targets) {
      const entry = spent[id] ?? { usd: 0, tokens: 0, dropAt };
      spent[id] = { ...entry, usd: entry.usd + actual.usd, tokens: entry.tokens + actual.tokens };
    }
    if (rows.length > 0) {
      const { day, dropAt } = usageDay(at, this.timeZone);
      const today = usage[day] ?? { dropAt, rows: {} };
      usage[day] = today;
      for (const row of rows) {
        const sums: UsageSums = today.rows[row] ?? { usd: 0, tokens: 0, calls: 0 };
        today.rows[row] = {
          usd: sums.usd + actual.usd,
          tokens: sums.tokens + actual.tokens,
          calls: sums.calls + 1,
        };
      }
    }
    this.settled.set(s.callId, s.now + SETTLED_KEEP_MS);
    await this.persist();
  }

  async release(callId: string): Promise<void> {
    this.drop(callId);
  }

  async usage(caps: readonly BudgetCap[], now: number): Promise<CapUsage[]> {
    const periods = caps.map((cap) => capPeriod(cap, now, this.timeZone));
    this.sweep(now);
    return periods.map((p) => ({
      cap: p.cap,
      spent: fromUnits(this.spentOf(p.id)),
      reserved: fromUnits(this.reserved.get(p.id) ?? ZERO),
      limit: limitFromUnits(this.limitOf(p)),
      resetsAt: p.window.end,
    }));
  }

  async setLimit(cap: BudgetCap, now: number): Promise<void> {
    const set = limitToSet(cap);
    const p = capPeriod(cap, now, this.timeZone);
    this.sweep(now);
    const entry: LimitEntry = { ...this.state.limits[p.id], ...set, dropAt: spentDropAt(p.window.end) };
    this.state.limits[p.id] = entry;
    await this.persist();
  }

  async resetSpent(cap: BudgetCap, now: number): Promise<void> {
    const p = capPeriod(cap, now, this.timeZone);
    this.sweep(now);
    if (!this.state.spent[p.id]) return;
    delete this.state.spent[p.id];
    await this.persist();
  }

  async claimOnce(id: string, now: number, until: number): Promise<boolean> {
    checkClaim(now, until);
    this.sweep(now);
    if (this.state.claims[id] !== undefined) return false;
    this.state.claims[id] = until;
    await this.persist();
    return true;
  }

  async exportUsage(sinceMs: number, untilMs: number): Promise<UsageRow[]> {
    const rows: UsageRow[] = [];
    for (const day of daysBetween(sinceMs, untilMs, this.timeZone))
      for (const [row, sums] of Object.entries(this.state.usage[day]?.rows ?? {}))
        rows.push(usageRow(day, row, sums));
    return rows.sort(compareUsageRows);
  }

  /** Resolves once every write so far has ended. */
  async close(): Promise<void> {
    await this.writes;
  }

  /** The limits that apply to `p`: those `setLimit` stored for its period over the cap's own. */
  private limitOf(p: CapPeriod): Partial<Units> {
    const { dropAt: _, ...stored } = this.state.limits[p.id] ?? { dropAt: 0 };
    return effectiveLimit(p.limit, stored);
  }

  private spentOf(id: string): Units {
    const entry = this.state.spent[id];
    return entry ? { usd: entry.usd, tokens: entry.tokens } : ZERO;
  }

  /** Adds `sign` × `amount` to the reserved sums of `id`, forgetting sums that reach zero. */
  private addReserved(id: string, amount: Units, sign: 1 | -1): void {
    const sums = this.reserved.get(id) ?? { usd: 0, tokens: 0 };
    const next = { usd: sums.usd + sign * amount.usd, tokens: sums.tokens + sign * amount.tokens };
    if (next.usd <= 0 && next.tokens <= 0) this.reserved.delete(id);
    else this.reserved.set(id, next);
  }

  /** Removes a reservation and its amount from the sums; returns it. */
  private drop(callId: string): Reservation | undefined {
    const reservation = this.reservations.get(callId);
    if (!reservation) return undefined;
    for (const { id } of reservation.periods) this.addReserved(id, reservation.amount, -1);
    this.reservations.delete(callId);
    return reservation;
  }

  /** Drops what expired at `now`, as the Redis scripts' sweep does (memory only; the file follows). */
  private sweep(now: number): void {
    for (const [callId, r] of this.reservations) if (r.expiresAt <= now) this.drop(callId);
    for (const [callId, dropAt] of this.settled) if (dropAt <= now) this.settled.delete(callId);
    for (const [id, entry] of Object.entries(this.state.spent))
      if (entry.dropAt <= now) delete this.state.spent[id];
    for (const [id, entry] of Object.entries(this.state.limits))
      if (entry.dropAt <= now) delete this.state.limits[id];
    for (const [id, until] of Object.entries(this.state.claims))
      if (until <= now) delete this.state.claims[id];
    for (const [day, usage] of Object.entries(this.state.usage))
      if (usage.dropAt <= now) delete this.state.usage[day];
  }

  /** Writes the file (when there is one) after the writes before; the state is taken when it starts. */
  private persist(): Promise<void> {
    const path = this.path;
    if (!path) return Promise.resolve();
    if (!this.queued) {
      const write = this.writes.then(() => {
        this.queued = undefined;
        return writeBudgetsFile(path, this.state);
      });
      this.queued = write;
      this.writes = write.catch(() => {});
    }
    return this.queued;
  }
}
