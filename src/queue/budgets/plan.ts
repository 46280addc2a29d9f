/**
 * What both ledgers compute alike before they touch their state: amounts in whole units, the
 * checked caps with their period in the ledger's zone, the names spending is counted under, and how
 * long each thing is kept. Keeping it here is what makes the memory and the Redis ledger agree.
 */
import { dayOf, type PeriodWindow, periodWindow } from "./periods.js";
import type { AdmitRule, Amount, BudgetCap, BudgetLimit, BudgetScope, UsageRow } from "./types.js";

const DAY_MS = 86_400_000;

/** A settled call id is remembered this long after its settle: a settle or reserve repeated within it is a no-op. */
export const SETTLED_KEEP_MS = DAY_MS;
/** A period's spent counters are kept this long after it ends (last month stays visible a while). */
const SPENT_KEEP_MS = 35 * DAY_MS;
/** A day's usage rows are kept this long after the day ends (for the export). */
const USAGE_KEEP_MS = 400 * DAY_MS;
/** The longest range `exportUsage` reads: longer than the rows are kept, so never a real need. */
const EXPORT_MAX_DAYS = 1000;
/** The scopes whose spending the usage rows keep (threads are many and short-lived). */
const USAGE_SCOPES: ReadonlySet<BudgetScope> = new Set(["user", "channel", "deployment"]);

/** An amount in the ledgers' units: whole micro-dollars and whole tokens. */
export interface Units {
  usd: number;
  tokens: number;
}

/** `amount` in whole micro-dollars and tokens; throws on a negative or non-finite part (a caller's bug). */
export function toUnits(amount: Amount): Units {
  for (const v of [amount.usd, amount.tokens])
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`An amount must be finite and ≥ 0, not ${v}.`);
  return { usd: Math.round(amount.usd * 1e6), tokens: Math.round(amount.tokens) };
}

/** When a reservation made at `now` for `ttlMs` expires; throws unless the lease is positive and finite. */
export function leaseEnd(now: number, ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0)
    throw new RangeError(`A reservation's ttlMs must be > 0, not ${ttlMs}.`);
  return now + ttlMs;
}

/** Units back as an `Amount` in USD and tokens. */
export function fromUnits(u: Units): Amount {
  return { usd: u.usd / 1e6, tokens: u.tokens };
}

/** One cap in the period containing the time asked about, with the name its counters go by. */
export interface CapPeriod {
  cap: BudgetCap;
  /** `<scope>:<key>:<period>:<start ms>`: one counter per cap and period start. */
  id: string;
  window: PeriodWindow;
  /** The cap's own limits in units; absent where it does not limit (a cap may limit nothing). */
  limit: Partial<Units>;
}

/** The limits a cap names, in units; throws a RangeError for a negative or non-finite one. */
function limitOf(cap: BudgetCap): Partial<Units> {
  const u = toUnits({ usd: cap.usd ?? 0, tokens: cap.tokens ?? 0 });
  const limit: Partial<Units> = {};
  if (cap.usd !== undefined) limit.usd = u.usd;
  if (cap.tokens !== undefined) limit.tokens = u.tokens;
  return limit;
}

/**
 * The limits `setLimit` stores from `cap`, in units; throws a RangeError when the cap names none
 * (there would be nothing to set) or one is negative or not finite.
 */
export function limitToSet(cap: BudgetCap): Partial<Units> {
  if (cap.usd === undefined && cap.tokens === undefined)
    throw new RangeError(
      `setLimit needs a usd or tokens limit; the ${cap.period} cap of ${cap.scope} "${cap.key}" names neither.`,
    );
  return limitOf(cap);
}

/** `cap` in its period containing `at`; throws a RangeError for a negative or non-finite limit. */
export function capPeriod(cap: BudgetCap, at: number, timeZone: string): CapPeriod {
  const window = periodWindow(cap.period, at, timeZone);
  const id = `${cap.scope}:${cap.key}:${cap.period}:${window.start}`;
  return { cap: { ...cap }, id, window, limit: limitOf(cap) };
}

/**
 * Each distinct cap of `caps` in its period containing `at`, in the order given; a cap repeated
 * (same scope, key and period) counts once, with the first one's limits, so a call is never
 * reserved twice against one counter.
 */
export function capPeriods(caps: readonly BudgetCap[], at: number, timeZone: string): CapPeriod[] {
  const byId = new Map<string, CapPeriod>();
  for (const cap of caps) {
    const p = capPeriod(cap, at, timeZone);
    if (!byId.has(p.id)) byId.set(p.id, p);
  }
  return [...byId.values()];
}

/** The limits that apply: each dimension `stored` (by `setLimit`) names, else the cap's own. */
export function effectiveLimit(own: Partial<Units>, stored: Partial<Units>): Partial<Units> {
  const limit: Partial<Units> = {};
  const usd = stored.usd ?? own.usd;
  const tokens = stored.tokens ?? own.tokens;
  if (usd !== undefined) limit.usd = usd;
  if (tokens !== undefined) limit.tokens = tokens;
  return limit;
}

/** Limits in units back as a `BudgetLimit` in USD and tokens (absent dimensions stay absent). */
export function limitFromUnits(limit: Partial<Units>): BudgetLimit {
  const out: BudgetLimit = {};
  if (limit.usd !== undefined) out.usd = limit.usd / 1e6;
  if (limit.tokens !== undefined) out.tokens = limit.tokens;
  return out;
}

/** The admission rule of a request: `fits` unless told; throws a RangeError for an unknown one. */
export function admitRule(admit: AdmitRule | undefined): AdmitRule {
  if (admit === undefined || admit === "fits" || admit === "under") return admit ?? "fits";
  throw new RangeError(`admit must be "fits" or "under", not ${JSON.stringify(admit)}.`);
}

/**
 * Whether `limit` refuses `amount` under `rule`, given the period's `spent` and live `reserved`:
 * `fits` refuses when spent + reserved + amount would pass a limit; `under` when spent + reserved
 * has already reached one (a zero limit refuses every call). Dimensions without a limit never refuse.
 */
export function refuses(
  rule: AdmitRule,
  limit: Partial<Units>,
  spent: Units,
  reserved: Units,
  amount: Units,
): boolean {
  const over = (max: number | undefined, held: number, more: number) =>
    max !== undefined && (rule === "under" ? held >= max : held + more > max);
  return (
    over(limit.usd, spent.usd + reserved.usd, amount.usd) ||
    over(limit.tokens, spent.tokens + reserved.tokens, amount.tokens)
  );
}

/** Checks the times of a `claimOnce`: both must be finite (a caller's bug otherwise: RangeError). */
export function checkClaim(now: number, until: number): void {
  if (!Number.isFinite(now) || !Number.isFinite(until))
    throw new RangeError(`A claim's now and until must be finite, not ${now} and ${until}.`);
}

/** When a spent counter of a period ending at `end` may go. */
export function spentDropAt(end: number): number {
  return end + SPENT_KEEP_MS;
}

/** The day a settled call's usage goes to, and when that day's rows may go. */
export function usageDay(at: number, timeZone: string): { day: string; dropAt: number } {
  return { day: dayOf(at, timeZone), dropAt: periodWindow("day", at, timeZone).end + USAGE_KEEP_MS };
}

/**
 * The usage row names a settle adds to: `[scope, key, model]` as JSON, for each distinct cap of a
 * usage scope (JSON so that no key or model can make two rows one).
 */
export function usageFields(caps: readonly BudgetCap[], model: string): string[] {
  const fields = caps
    .filter((c) => USAGE_SCOPES.has(c.scope))
    .map((c) => JSON.stringify([c.scope, c.key, model]));
  return [...new Set(fields)];
}

/** A usage row from its day, its name (`usageFields`) and its sums in units. */
export function usageRow(day: string, field: string, sums: Units & { calls: number }): UsageRow {
  const [scope, key, model] = JSON.parse(field) as [BudgetScope, string, string];
  return { day, scope, key, model, ...fromUnits(sums), calls: sums.calls };
}

/** Orders usage rows by day, scope, key and model. */
export function compareUsageRows(a: UsageRow, b: UsageRow): number {
  for (const [x, y] of [
    [a.day, b.day],
    [a.scope, b.scope],
    [a.key, b.key],
    [a.model, b.model],
  ] as const)
    if (x !== y) return x < y ? -1 : 1;
  return 0;
}

/**
 * The local days (`YYYY-MM-DD`) that overlap [sinceMs, untilMs), oldest first. Throws a RangeError
 * for a bound that is not finite or a range over 1000 days (each day is one read in Redis).
 */
export function daysBetween(sinceMs: number, untilMs: number, timeZone: string): string[] {
  if (!Number.isFinite(sinceMs) || !Number.isFinite(untilMs) || untilMs - sinceMs > EXPORT_MAX_DAYS * DAY_MS)
    throw new RangeError(
      `Usage can be exported for at most ${EXPORT_MAX_DAYS} days at a time, between finite times.`,
    );
  const days: string[] = [];
  for (let t = sinceMs; t < untilMs; t = periodWindow("day", t, timeZone).end) days.push(dayOf(t, timeZone));
  return days;
}
