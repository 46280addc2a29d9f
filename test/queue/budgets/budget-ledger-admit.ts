/**
 * The BudgetLedger contract's admission rules and counting-only caps (budget-ledger-contract.ts
 * runs them): `admit: "fits"` (the default) refuses a call that would pass a limit, `admit: "under"`
 * only once spent + reserved has reached it; a cap without limits counts and never refuses; every
 * refusal and usage line reports the limit that applied.
 */
import { describe, expect, it } from "vitest";
import type { AdmitRule, Amount, BudgetCap, BudgetLedger } from "../../../src/queue/budgets/types.js";
import {
  at,
  type BudgetLedgerSubject,
  callId,
  cap,
  reservedOf,
  spentOf,
  T0,
  TTL,
  usd,
} from "./budget-ledger-support.js";

const reserveWith = (
  ledger: BudgetLedger,
  admit: AdmitRule | undefined,
  caps: BudgetCap[],
  amount: Amount,
  id = callId(),
) => ledger.reserve({ callId: id, caps, amount, now: T0, ttlMs: TTL, ...(admit ? { admit } : {}) });

/** Spends `amount` on `caps` under `admit`, expecting the reservation to go through. */
async function spendWith(ledger: BudgetLedger, admit: AdmitRule, caps: BudgetCap[], amount: Amount) {
  const id = callId();
  expect(await reserveWith(ledger, admit, caps, amount, id)).toEqual({ ok: true });
  await ledger.settle({ callId: id, caps, actual: amount, now: T0 });
}

export function budgetLedgerAdmission(open: () => Promise<BudgetLedgerSubject>): void {
  describe("admission rules", () => {
    it('"under" admits a call while the cap is not reached, even one that takes spending past it', async () => {
      const { ledger } = await open();
      const c = cap();
      await spendWith(ledger, "fits", [c], usd(0.9));
      // "fits" (also the default) refuses what would pass the limit; "under" lets it run.
      expect((await reserveWith(ledger, undefined, [c], usd(0.2))).ok).toBe(false);
      expect((await reserveWith(ledger, "fits", [c], usd(0.2))).ok).toBe(false);
      const id = callId();
      expect(await reserveWith(ledger, "under", [c], usd(0.2), id)).toEqual({ ok: true });
      // The worst case it reserved reaches the cap: the next call waits, under either rule.
      expect(await reserveWith(ledger, "under", [c], usd(0))).toEqual({
        ok: false,
        cap: c,
        spent: usd(0.9),
        reserved: usd(0.2),
        limit: { usd: 1 },
        resetsAt: at("2026-03-11T00:00:00Z"),
      });
      await ledger.settle({ callId: id, caps: [c], actual: usd(0.15), now: T0 });
      expect(await spentOf(ledger, c)).toEqual(usd(1.05));
      expect((await reserveWith(ledger, "under", [c], usd(0.01))).ok).toBe(false);
    });

    it('"under" refuses at the limit exactly, and every call on a zero limit', async () => {
      const { ledger } = await open();
      const c = cap({ usd: 0.5 });
      await spendWith(ledger, "under", [c], usd(0.5));
      expect(await reserveWith(ledger, "under", [c], usd(0))).toMatchObject({ ok: false, spent: usd(0.5) });
      const zero = cap({ usd: 0 });
      expect(await reserveWith(ledger, "under", [zero], usd(0))).toMatchObject({
        ok: false,
        cap: zero,
        limit: { usd: 0 },
      });
      // "fits" lets a call that costs nothing reach a zero limit.
      expect(await reserveWith(ledger, "fits", [zero], usd(0))).toEqual({ ok: true });
    });

    it('"under" checks each dimension a cap limits, and none it does not', async () => {
      const { ledger } = await open();
      const tokens = cap({ tokens: 100 });
      expect(await reserveWith(ledger, "under", [tokens], usd(50, 99))).toEqual({ ok: true });
      expect(await reserveWith(ledger, "under", [tokens], usd(50, 500))).toEqual({ ok: true });
      expect(await reserveWith(ledger, "under", [tokens], usd(0, 0))).toMatchObject({
        ok: false,
        reserved: usd(100, 599),
        limit: { tokens: 100 },
      });
      const both = cap({ usd: 1, tokens: 100 });
      await spendWith(ledger, "under", [both], usd(0.1, 100));
      expect(await reserveWith(ledger, "under", [both], usd(0.1, 0))).toMatchObject({
        ok: false,
        limit: { usd: 1, tokens: 100 },
      });
    });

    it('"under" over several caps refuses on the first reached one and reserves against none', async () => {
      const { ledger } = await open();
      const roomy = cap({ scope: "channel", usd: 10 });
      const reached = cap({ usd: 0.2 });
      await spendWith(ledger, "fits", [reached], usd(0.2));
      expect(await reserveWith(ledger, "under", [roomy, reached], usd(5))).toMatchObject({
        ok: false,
        cap: reached,
      });
      expect(await reservedOf(ledger, roomy)).toEqual(usd(0));
      expect(
        await ledger.reserve({
          callId: callId(),
          caps: [reached],
          amount: usd(1),
          now: T0,
          ttlMs: TTL,
          admit: "under",
          override: true,
        }),
      ).toEqual({ ok: true });
    });

    it('"under" lets only as many simultaneous calls through as their reservations take to reach the cap', async () => {
      const subject = await open();
      const ledgers = [subject.ledger, ...(await Promise.all([1, 2, 3].map(() => subject.peer())))];
      const c = cap();
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          reserveWith(ledgers[i % 4] as BudgetLedger, "under", [c], usd(0.3)),
        ),
      );
      // 0, 0.3, 0.6 and 0.9 are under 1.00; at 1.2 every later call waits.
      expect(outcomes.filter((o) => o.ok)).toHaveLength(4);
      expect(await reservedOf(subject.ledger, c)).toEqual(usd(1.2));
    });

    it("refuses an unknown rule (a caller's bug)", async () => {
      const { ledger } = await open();
      await expect(reserveWith(ledger, "roomy" as AdmitRule, [cap()], usd(0.1))).rejects.toThrow(RangeError);
      expect(await reserveWith(ledger, "under", [cap()], usd(0.1))).toEqual({ ok: true });
    });
  });

  describe("caps that only count", () => {
    it("reserves, spends and reports a cap without limits, and never refuses on it", async () => {
      const { ledger } = await open();
      const counting: BudgetCap = { scope: "channel", key: `slack:${callId()}`, period: "month" };
      const limited = cap({ usd: 0.5 });
      for (const admit of ["fits", "under"] as const)
        expect(await reserveWith(ledger, admit, [counting], usd(1e6, 1e9))).toEqual({ ok: true });
      await spendWith(ledger, "fits", [counting, limited], usd(0.5, 10));
      expect(await reserveWith(ledger, "fits", [counting, limited], usd(0.01))).toMatchObject({
        ok: false,
        cap: limited,
      });
      const [line] = await ledger.usage([counting], T0);
      expect(line).toMatchObject({ cap: counting, spent: usd(0.5, 10), reserved: usd(2e6, 2e9), limit: {} });
      expect(await ledger.exportUsage(T0, T0 + 1)).toContainEqual({
        day: "2026-03-10",
        scope: "channel",
        key: counting.key,
        model: "",
        usd: 0.5,
        tokens: 10,
        calls: 1,
      });
    });
  });
}
