/**
 * What the BudgetLedger contract's files share: the subject a test opens, the cap and amount
 * shorthands, and one call from reserve to settle.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Amount, BudgetCap, BudgetLedger, BudgetScope } from "../../../src/queue/budgets/types.js";

export interface BudgetLedgerSubject {
  ledger: BudgetLedger;
  /** Another ledger over the same spending (another process's connection); in memory the same one. */
  peer(): Promise<BudgetLedger>;
  close(): Promise<void>;
}

/** Opens an empty ledger counting in `timeZone`. */
export type MakeLedger = (timeZone: string) => Promise<BudgetLedgerSubject>;

export const at = (iso: string) => Date.parse(iso);
export const T0 = at("2026-03-10T12:00:00Z");
export const TTL = 60_000;

export const callId = () => `call-${randomUUID()}`;
export const usd = (n: number, tokens = 0): Amount => ({ usd: n, tokens });

/** A cap of a fresh member of `scope` (a user by default): 1 USD a day unless told otherwise. */
export function cap(over: Partial<BudgetCap> = {}): BudgetCap {
  const scope: BudgetScope = over.scope ?? "user";
  const key = scope === "deployment" ? "" : `telegram:${randomUUID().slice(0, 8)}`;
  return { scope, key, period: "day", ...(over.tokens === undefined ? { usd: 1 } : {}), ...over };
}

/** Reserves `amount` for a fresh call id at `now`. */
export function reserveAt(ledger: BudgetLedger, caps: BudgetCap[], amount: Amount, now = T0) {
  return ledger.reserve({ callId: callId(), caps, amount, now, ttlMs: TTL });
}

/** One call from reserve to settle, at `now`. */
export async function spend(
  ledger: BudgetLedger,
  caps: BudgetCap[],
  amount: Amount,
  now = T0,
): Promise<void> {
  const id = callId();
  expect(await ledger.reserve({ callId: id, caps, amount, now, ttlMs: TTL })).toEqual({ ok: true });
  await ledger.settle({ callId: id, caps, actual: amount, now });
}

/** What `c` has spent in its period containing `now`. */
export async function spentOf(ledger: BudgetLedger, c: BudgetCap, now = T0): Promise<Amount> {
  const [u] = await ledger.usage([c], now);
  if (!u) throw new Error("usage gave no line");
  return u.spent;
}

/** What live reservations hold of `c` in its period containing `now`. */
export async function reservedOf(ledger: BudgetLedger, c: BudgetCap, now = T0): Promise<Amount> {
  const [u] = await ledger.usage([c], now);
  if (!u) throw new Error("usage gave no line");
  return u.reserved;
}
