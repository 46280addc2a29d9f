/**
 * `BudgetLedger` on Redis, shared by every process of a deployment. Every key carries the one hash
 * tag `{budgets}` (`BudgetKeys` in src/redis-keys.ts), so each step is one budget-*.lua script in
 * src/queue/lua/ over a single slot, atomic across processes and also on Redis Cluster. Counters
 * are hash fields in whole micro-dollars and tokens (HINCRBY: sums never drift); this module turns
 * caps into period ids and amounts into units before a script runs, and units back into USD after.
 */
import { BudgetKeys, DEFAULT_KEY_PREFIX } from "../../redis-keys.js";
import { luaScript } from "../lua/load.js";
import type { RedisClient } from "../redis/client.js";
import { runScript, type ScriptReply } from "../redis/run-script.js";
import { assertTimeZone } from "./periods.js";
import {
  admitRule,
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
  SETTLED_KEEP_MS,
  spentDropAt,
  toUnits,
  type Units,
  usageDay,
  usageFields,
  usageRow,
} from "./plan.js";
import type {
  Amount,
  BudgetCap,
  BudgetLedger,
  CapUsage,
  ReserveOutcome,
  ReserveRequest,
  SettleRequest,
  UsageRow,
} from "./types.js";

/** Checks and reserves against every cap at once (budget-reserve.7.lua). */
const RESERVE = luaScript("budget-reserve");
/** Turns a reservation into spent, once (budget-settle.8.lua). */
const SETTLE = luaScript("budget-settle");
/** Drops a reservation (budget-release.4.lua). */
const RELEASE = luaScript("budget-release");
/** Reads spent and live reserved sums and stored limits after the sweep (budget-usage.7.lua). */
const USAGE = luaScript("budget-usage");
/** Stores a cap period's limits (budget-set-limit.7.lua). */
const SET_LIMIT = luaScript("budget-set-limit");
/** Sets a cap period's spent back to zero (budget-reset.7.lua). */
const RESET = luaScript("budget-reset");
/** Claims an id until a time (budget-claim.1.lua). */
const CLAIM = luaScript("budget-claim");

/** Options of a `RedisBudgetLedger`. */
export interface RedisBudgetLedgerOptions {
  /** The IANA zone the days and months are counted in (`UTC`, `Europe/Berlin`, …). */
  timeZone: string;
  /** The key prefix (default `DEFAULT_KEY_PREFIX`). */
  prefix?: string;
}

/**
 * The budget ledger in Redis under a prefix. Uses (does not own) `redis`: `close` leaves it open.
 * Every method is one script but `exportUsage`, which reads each day's rows with HGETALL. The
 * constructor throws a RangeError for a zone Intl does not know.
 */
export class RedisBudgetLedger implements BudgetLedger {
  private readonly keys: BudgetKeys;
  private readonly timeZone: string;

  constructor(
    private readonly redis: RedisClient,
    o: RedisBudgetLedgerOptions,
  ) {
    assertTimeZone(o.timeZone);
    this.timeZone = o.timeZone;
    this.keys = new BudgetKeys(o.prefix ?? DEFAULT_KEY_PREFIX);
  }

  async reserve(r: ReserveRequest): Promise<ReserveOutcome> {
    const amount = toUnits(r.amount);
    const expiresAt = leaseEnd(r.now, r.ttlMs);
    const periods = capPeriods(r.caps, r.now, this.timeZone);
    const args: (string | number)[] = [
      r.now,
      r.callId,
      expiresAt,
      amount.usd,
      amount.tokens,
      r.override ? 1 : 0,
      admitRule(r.admit),
      periods.length,
    ];
    for (const p of periods)
      args.push(p.id, p.limit.usd ?? "", p.limit.tokens ?? "", spentDropAt(p.window.end));
    const reply = (await runScript(this.redis, RESERVE, this.ledgerKeys(), args)) as ScriptReply[];
    if (reply[0] === 1) return { ok: true };
    const refused = periods[Number(reply[1]) - 1];
    if (!refused)
      throw new Error(`budget-reserve answered ${JSON.stringify(reply)}; expected {1} or {0, i, …}.`);
    const [spent, reserved] = amounts(reply.slice(2));
    const limit = limitFromUnits(replyLimit(reply.slice(6)));
    return { ok: false, cap: refused.cap, spent, reserved, limit, resetsAt: refused.window.end };
  }

  async settle(s: SettleRequest): Promise<void> {
    const actual = toUnits(s.actual);
    const at = s.reservedAt ?? s.now;
    const periods = capPeriods(s.caps, at, this.timeZone);
    const { day, dropAt } = usageDay(at, this.timeZone);
    const rows = usageFields(s.caps, s.model ?? "");
    const args: (string | number)[] = [
      s.now,
      s.callId,
      s.now + SETTLED_KEEP_MS,
      actual.usd,
      actual.tokens,
      // Relative to the caller's clock, so a test's (or a skewed) clock never makes it expire at once.
      Math.max(1, dropAt - s.now),
      periods.length,
    ];
    for (const p of periods) args.push(p.id, spentDropAt(p.window.end));
    args.push(rows.length, ...rows);
    await runScript(this.redis, SETTLE, [...this.ledgerKeys(), this.keys.usage(day)], args);
  }

  async release(callId: string): Promise<void> {
    await runScript(this.redis, RELEASE, this.ledgerKeys().slice(0, 4), [callId]);
  }

  async usage(caps: readonly BudgetCap[], now: number): Promise<CapUsage[]> {
    const periods = caps.map((cap) => capPeriod(cap, now, this.timeZone));
    if (periods.length === 0) return [];
    const ids = [...new Set(periods.map((p) => p.id))];
    const rows = (await runScript(this.redis, USAGE, this.ledgerKeys(), [now, ...ids])) as ScriptReply[];
    const byId = new Map(ids.map((id, i) => [id, rows.slice(6 * i, 6 * i + 6)]));
    return periods.map((p) => {
      const row = byId.get(p.id) ?? [];
      const [spent, reserved] = amounts(row);
      const limit = limitFromUnits(effectiveLimit(p.limit, replyLimit(row.slice(4))));
      return { cap: p.cap, spent, reserved, limit, resetsAt: p.window.end };
    });
  }

  async setLimit(cap: BudgetCap, now: number): Promise<void> {
    const set = limitToSet(cap);
    const p = capPeriod(cap, now, this.timeZone);
    const args = [now, p.id, set.usd ?? "", set.tokens ?? "", spentDropAt(p.window.end)];
    await runScript(this.redis, SET_LIMIT, this.ledgerKeys(), args);
  }

  async resetSpent(cap: BudgetCap, now: number): Promise<void> {
    const p = capPeriod(cap, now, this.timeZone);
    await runScript(this.redis, RESET, this.ledgerKeys(), [now, p.id]);
  }

  async claimOnce(id: string, now: number, until: number): Promise<boolean> {
    checkClaim(now, until);
    return (await runScript(this.redis, CLAIM, [this.keys.claims], [now, id, until])) === 1;
  }

  async exportUsage(sinceMs: number, untilMs: number): Promise<UsageRow[]> {
    const days = daysBetween(sinceMs, untilMs, this.timeZone);
    const hashes = await Promise.all(days.map((day) => this.redis.hgetall(this.keys.usage(day))));
    const rows: UsageRow[] = [];
    days.forEach((day, i) => {
      const sums = new Map<string, Units & { calls: number }>();
      for (const [field, value] of Object.entries(hashes[i] ?? {})) {
        const colon = field.indexOf(":");
        const dimension = field.slice(0, colon) as "usd" | "tokens" | "calls";
        const row = field.slice(colon + 1);
        const s = sums.get(row) ?? { usd: 0, tokens: 0, calls: 0 };
        s[dimension] = Number(value);
        sums.set(row, s);
      }
      for (const [row, s] of sums) rows.push(usageRow(day, row, s));
    });
    return rows.sort(compareUsageRows);
  }

  async close(): Promise<void> {}

  /** The seven keys every budget script but budget-claim takes first, in budget-sweep.lua's order. */
  private ledgerKeys(): string[] {
    const k = this.keys;
    return [k.spent, k.reserved, k.reservations, k.expiries, k.settled, k.periods, k.limits];
  }
}

/** `[usd limit, tokens limit]` of a script's reply (units; nil where none limits) as partial units. */
function replyLimit(reply: readonly ScriptReply[]): Partial<Units> {
  const limit: Partial<Units> = {};
  if (reply[0] !== null && reply[0] !== undefined) limit.usd = Number(reply[0]);
  if (reply[1] !== null && reply[1] !== undefined) limit.tokens = Number(reply[1]);
  return limit;
}

/** `[spent usd, spent tokens, reserved usd, reserved tokens]` (units, 0 where missing) in USD. */
function amounts(reply: readonly ScriptReply[]): [Amount, Amount] {
  const n = (i: number) => Number(reply[i] ?? 0);
  return [fromUnits({ usd: n(0), tokens: n(1) }), fromUnits({ usd: n(2), tokens: n(3) })];
}
