/**
 * The BudgetLedger contract under concurrency, the feature's acceptance test (budget-ledger-
 * contract.ts runs it): many calls at once, from several ledgers over the same spending (several
 * Redis connections; in memory the one ledger), never pass a cap and are never refused while they fit.
 */
import { describe, expect, it } from "vitest";
import type { BudgetLedger, ReserveOutcome } from "../../../src/queue/budgets/types.js";
import {
  type BudgetLedgerSubject,
  callId,
  cap,
  reservedOf,
  spentOf,
  T0,
  TTL,
  usd,
} from "./budget-ledger-support.js";

const units = (v: number) => Math.round(v * 1e6);

/** A small seeded generator (a failure replays the same run). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

/** Gives the other calls a turn a few times (the event loop's, not the clock's). */
async function yieldTurns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function ledgersOf(subject: BudgetLedgerSubject, n: number): Promise<BudgetLedger[]> {
  return [subject.ledger, ...(await Promise.all(Array.from({ length: n - 1 }, () => subject.peer())))];
}

export function budgetLedgerConcurrency(open: () => Promise<BudgetLedgerSubject>): void {
  describe("concurrency", () => {
    it("lets exactly 10 of 50 simultaneous 0.10 USD reservations through a 1.00 USD cap, from 5 ledgers", async () => {
      const subject = await open();
      const ledgers = await ledgersOf(subject, 5);
      const user = cap();
      const channel = cap({ scope: "channel", usd: 100 });
      const deployment = cap({ scope: "deployment", period: "month", usd: 1000 });
      const caps = [channel, user, deployment];
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (ledgers[i % 5] as BudgetLedger).reserve({
            callId: callId(),
            caps,
            amount: usd(0.1),
            now: T0,
            ttlMs: TTL,
          }),
        ),
      );
      expect(outcomes.filter((o) => o.ok)).toHaveLength(10);
      for (const o of outcomes)
        if (!o.ok) expect(o).toMatchObject({ cap: user, spent: usd(0), reserved: usd(1) });
      // Every cap got exactly the reservations that went through, the roomy ones too.
      for (const c of caps) expect(await reservedOf(subject.ledger, c)).toEqual(usd(1));
    });

    it("keeps spent within the cap while calls settle below their reservations, refusing only calls that would pass it", async () => {
      const subject = await open();
      const ledgers = await ledgersOf(subject, 5);
      const c = cap();
      const next = random(42);
      const amount = usd(0.1);
      let settled = 0;
      const refusals: ReserveOutcome[] = [];
      await Promise.all(
        Array.from({ length: 80 }, async (_, i) => {
          const ledger = ledgers[i % 5] as BudgetLedger;
          await yieldTurns(Math.floor(next() * 4));
          const id = callId();
          const outcome = await ledger.reserve({ callId: id, caps: [c], amount, now: T0, ttlMs: TTL });
          if (!outcome.ok) {
            refusals.push(outcome);
            return;
          }
          await yieldTurns(Math.floor(next() * 4));
          const actual = Math.floor(next() * units(amount.usd) + 1);
          await ledger.settle({ callId: id, caps: [c], actual: usd(actual / 1e6), now: T0 });
          settled += actual;
          expect(units((await spentOf(ledger, c)).usd)).toBeLessThanOrEqual(units(1));
        }),
      );
      for (const r of refusals) {
        if (r.ok) continue;
        expect(units(r.spent.usd) + units(r.reserved.usd) + units(amount.usd)).toBeGreaterThan(units(1));
      }
      expect(refusals.length).toBeGreaterThan(0);
      // Nothing lost, nothing counted twice, nothing left reserved.
      expect(units((await spentOf(subject.ledger, c)).usd)).toBe(settled);
      expect(settled).toBeLessThanOrEqual(units(1));
      expect(await reservedOf(subject.ledger, c)).toEqual(usd(0));
    });
  });
}
