/**
 * The `BudgetLedger` contract, run against every implementation (budget-ledger.test.ts): reserve
 * within a cap and refuse past it, atomically over all caps; settle and release; the lease that
 * frees a dead worker's reservation; periods in a time zone; the usage rows. Time is injected (no
 * test sleeps). Periods and usage rows (budget-ledger-periods.ts), concurrency
 * (budget-ledger-concurrency.ts), the admission rules and counting-only caps (budget-ledger-admit.ts)
 * and the admin steps setLimit, resetSpent and claimOnce (budget-ledger-admin.ts) run on the same
 * subjects.
 */
import { describe, expect, it } from "vitest";
import type { Amount, BudgetCap, BudgetLedger } from "../../../src/queue/budgets/types.js";
import { subjectPerTest } from "../../support/contract-subject.js";
import { budgetLedgerAdmin } from "./budget-ledger-admin.js";
import { budgetLedgerAdmission } from "./budget-ledger-admit.js";
import { budgetLedgerConcurrency } from "./budget-ledger-concurrency.js";
import { budgetLedgerPeriods, budgetLedgerUsageRows } from "./budget-ledger-periods.js";
import {
  at,
  callId,
  cap,
  type MakeLedger,
  reservedOf,
  spend,
  spentOf,
  T0,
  TTL,
  usd,
} from "./budget-ledger-support.js";

export function budgetLedgerContract(name: string, make: MakeLedger): void {
  describe(`BudgetLedger contract: ${name}`, () => {
    const open = subjectPerTest(() => make("UTC"));
    const reserve = (ledger: BudgetLedger, caps: BudgetCap[], amount: Amount, id = callId(), now = T0) =>
      ledger.reserve({ callId: id, caps, amount, now, ttlMs: TTL });

    it("reserves within a cap and counts it as reserved, not spent, until the call settles", async () => {
      const { ledger } = await open();
      const c = cap();
      expect(await reserve(ledger, [c], usd(0.4, 10))).toEqual({ ok: true });
      expect(await ledger.usage([c], T0)).toEqual([
        {
          cap: c,
          spent: usd(0),
          reserved: usd(0.4, 10),
          limit: { usd: 1 },
          resetsAt: at("2026-03-11T00:00:00Z"),
        },
      ]);
    });

    it("refuses past a cap, naming the first cap passed, its spent and reserved, and when it resets", async () => {
      const { ledger } = await open();
      const roomy = cap({ scope: "deployment", period: "month", usd: 100 });
      const tight = cap();
      await spend(ledger, [roomy, tight], usd(0.5, 7));
      expect(await reserve(ledger, [roomy, tight], usd(0.3, 3))).toEqual({ ok: true });
      expect(await reserve(ledger, [roomy, tight], usd(0.21))).toEqual({
        ok: false,
        cap: tight,
        spent: usd(0.5, 7),
        reserved: usd(0.3, 3),
        limit: { usd: 1 },
        resetsAt: at("2026-03-11T00:00:00Z"),
      });
      // Reaching the limit exactly is allowed; passing it by a micro-dollar is not.
      expect(await reserve(ledger, [roomy, tight], usd(0.2))).toEqual({ ok: true });
      expect((await reserve(ledger, [tight], usd(0.000001))).ok).toBe(false);
      expect(await reserve(ledger, [tight], usd(0))).toEqual({ ok: true });
    });

    it("limits only the dimensions a cap names: tokens only, USD only, or both", async () => {
      const { ledger } = await open();
      const tokensOnly = cap({ tokens: 1000 });
      expect(tokensOnly.usd).toBeUndefined();
      expect(await reserve(ledger, [tokensOnly], usd(500, 600))).toEqual({ ok: true });
      expect((await reserve(ledger, [tokensOnly], usd(0, 401))).ok).toBe(false);
      expect(await reserve(ledger, [tokensOnly], usd(0, 400))).toEqual({ ok: true });

      const usdOnly = cap({ usd: 1 });
      expect(await reserve(ledger, [usdOnly], usd(0.5, 1e9))).toEqual({ ok: true });
      expect((await reserve(ledger, [usdOnly], usd(0.51, 0))).ok).toBe(false);

      const both = cap({ usd: 1, tokens: 100 });
      const refused = await reserve(ledger, [both], usd(0.1, 101));
      expect(refused).toMatchObject({ ok: false, cap: both });
      expect((await reserve(ledger, [both], usd(1.01, 1))).ok).toBe(false);
      expect(await reserve(ledger, [both], usd(1, 100))).toEqual({ ok: true });
    });

    it("reserves against every cap or none: one cap refusing leaves the others untouched", async () => {
      const { ledger } = await open();
      const user = cap({ usd: 10 });
      const channel = cap({ scope: "channel", usd: 10 });
      const thread = cap({ scope: "thread", usd: 0.5 });
      const caps = [user, channel, thread];
      expect((await reserve(ledger, caps, usd(0.6))).ok).toBe(false);
      const lines = await ledger.usage(caps, T0);
      expect(lines.map((l) => l.reserved)).toEqual([usd(0), usd(0), usd(0)]);
      expect(await reserve(ledger, caps, usd(0.5))).toEqual({ ok: true });
      expect((await ledger.usage(caps, T0)).map((l) => l.reserved)).toEqual([usd(0.5), usd(0.5), usd(0.5)]);
    });

    it("counts a call once however often it is reserved or settled, and a repeated cap once", async () => {
      const { ledger } = await open();
      const c = cap();
      const id = callId();
      expect(await reserve(ledger, [c, c], usd(0.3), id)).toEqual({ ok: true });
      expect(await reserve(ledger, [c], usd(0.9), id)).toEqual({ ok: true });
      expect(await reservedOf(ledger, c)).toEqual(usd(0.3));
      const settle = { callId: id, caps: [c], actual: usd(0.2, 5), now: T0 + 1 };
      await ledger.settle(settle);
      await ledger.settle(settle);
      await ledger.settle({ ...settle, actual: usd(0.7) });
      expect(await ledger.usage([c, c], T0 + 2)).toEqual([
        {
          cap: c,
          spent: usd(0.2, 5),
          reserved: usd(0),
          limit: { usd: 1 },
          resetsAt: at("2026-03-11T00:00:00Z"),
        },
        {
          cap: c,
          spent: usd(0.2, 5),
          reserved: usd(0),
          limit: { usd: 1 },
          resetsAt: at("2026-03-11T00:00:00Z"),
        },
      ]);
      // A retried reserve of a call already settled is ok and reserves nothing again.
      expect(await reserve(ledger, [c], usd(0.3), id, T0 + 3)).toEqual({ ok: true });
      expect(await reservedOf(ledger, c, T0 + 3)).toEqual(usd(0));
    });

    it("settles to the actual amount: the reservation goes and the actual counts as spent", async () => {
      const { ledger } = await open();
      const c = cap();
      const id = callId();
      await reserve(ledger, [c], usd(0.8), id);
      expect((await reserve(ledger, [c], usd(0.3))).ok).toBe(false);
      await ledger.settle({ callId: id, caps: [c], actual: usd(0.25, 1234), now: T0 + 10 });
      expect(await ledger.usage([c], T0 + 10)).toEqual([
        {
          cap: c,
          spent: usd(0.25, 1234),
          reserved: usd(0),
          limit: { usd: 1 },
          resetsAt: at("2026-03-11T00:00:00Z"),
        },
      ]);
      expect(await reserve(ledger, [c], usd(0.75), callId(), T0 + 11)).toEqual({ ok: true });
    });

    it("releases a reservation without spending; a settle after the release still counts", async () => {
      const { ledger } = await open();
      const c = cap();
      const id = callId();
      await reserve(ledger, [c], usd(0.9), id);
      await ledger.release(id);
      await ledger.release(id);
      await ledger.release(callId());
      expect(await ledger.usage([c], T0)).toMatchObject([{ spent: usd(0), reserved: usd(0) }]);
      expect(await reserve(ledger, [c], usd(1))).toEqual({ ok: true });
      await ledger.settle({ callId: id, caps: [c], actual: usd(0.1), now: T0 });
      expect(await spentOf(ledger, c)).toEqual(usd(0.1));
    });

    it("frees a reservation when its lease runs out, with no settle and no background job", async () => {
      const { ledger } = await open();
      const c = cap();
      expect(
        await ledger.reserve({ callId: callId(), caps: [c], amount: usd(0.6), now: T0, ttlMs: 1000 }),
      ).toEqual({
        ok: true,
      });
      expect(await reservedOf(ledger, c, T0 + 999)).toEqual(usd(0.6));
      expect((await reserve(ledger, [c], usd(0.6), callId(), T0 + 999)).ok).toBe(false);
      expect(await reserve(ledger, [c], usd(0.6), callId(), T0 + 1000)).toEqual({ ok: true });
      expect(await reservedOf(ledger, c, T0 + 1000)).toEqual(usd(0.6));
    });

    it("counts a settle that comes after its reservation expired, in the period it was reserved in", async () => {
      const { ledger } = await open();
      const c = cap();
      const late = at("2026-03-10T23:59:59.500Z");
      const id = callId();
      await ledger.reserve({ callId: id, caps: [c], amount: usd(0.5), now: late, ttlMs: 100 });
      const next = at("2026-03-11T00:05:00Z");
      await ledger.settle({ callId: id, caps: [c], actual: usd(0.3), now: next, reservedAt: late });
      expect(await ledger.usage([c], late)).toMatchObject([{ spent: usd(0.3), reserved: usd(0) }]);
      expect(await spentOf(ledger, c, next)).toEqual(usd(0));
      // Without reservedAt the spend goes to the settle's own period: still never lost.
      const other = callId();
      await ledger.reserve({ callId: other, caps: [c], amount: usd(0.5), now: late, ttlMs: 100 });
      await ledger.settle({ callId: other, caps: [c], actual: usd(0.2), now: next });
      expect(await spentOf(ledger, c, next)).toEqual(usd(0.2));
    });

    it("settles a live reservation into the period it was reserved in, even after midnight", async () => {
      const { ledger } = await open();
      const c = cap();
      const id = callId();
      const late = at("2026-03-10T23:59:00Z");
      await ledger.reserve({ callId: id, caps: [c], amount: usd(0.5), now: late, ttlMs: 600_000 });
      await ledger.settle({ callId: id, caps: [c], actual: usd(0.4), now: at("2026-03-11T00:01:00Z") });
      expect(await spentOf(ledger, c, late)).toEqual(usd(0.4));
      expect(await spentOf(ledger, c, at("2026-03-11T00:02:00Z"))).toEqual(usd(0));
    });

    it("reserves past the cap when overridden, and the overrun counts against what comes after", async () => {
      const { ledger } = await open();
      const c = cap();
      await spend(ledger, [c], usd(0.9));
      const id = callId();
      expect(
        await ledger.reserve({
          callId: id,
          caps: [c],
          amount: usd(0.5),
          now: T0,
          ttlMs: TTL,
          override: true,
        }),
      ).toEqual({
        ok: true,
      });
      expect(await reservedOf(ledger, c)).toEqual(usd(0.5));
      await ledger.settle({ callId: id, caps: [c], actual: usd(0.5), now: T0 });
      expect(await reserve(ledger, [c], usd(0.01))).toMatchObject({ ok: false, spent: usd(1.4) });
    });

    it("refuses a negative or endless limit, a negative amount, a lease of 0 and an endless export (a caller's bug)", async () => {
      const { ledger } = await open();
      await expect(reserve(ledger, [cap({ usd: -1 })], usd(0.1))).rejects.toThrow(/≥ 0/);
      await expect(reserve(ledger, [cap({ tokens: Number.NaN })], usd(0.1))).rejects.toThrow(RangeError);
      await expect(reserve(ledger, [cap({ usd: Number.POSITIVE_INFINITY })], usd(0.1))).rejects.toThrow(
        RangeError,
      );
      await expect(reserve(ledger, [cap()], usd(-0.1))).rejects.toThrow(/≥ 0/);
      await expect(
        ledger.reserve({ callId: callId(), caps: [cap()], amount: usd(0.1), now: T0, ttlMs: 0 }),
      ).rejects.toThrow(/ttlMs/);
      await expect(ledger.exportUsage(0, Number.POSITIVE_INFINITY)).rejects.toThrow(/at most 1000 days/);
      expect(await reserve(ledger, [], usd(0.1))).toEqual({ ok: true });
      expect(await ledger.usage([], T0)).toEqual([]);
    });

    budgetLedgerPeriods(make);
    budgetLedgerUsageRows(make);
    budgetLedgerConcurrency(open);
    budgetLedgerAdmission(open);
    budgetLedgerAdmin(open);
  });
}
