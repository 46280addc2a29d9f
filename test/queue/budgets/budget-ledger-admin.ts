/**
 * The BudgetLedger contract's admin steps (budget-ledger-contract.ts runs them): `setLimit` raises
 * or lowers a cap for its current period, whatever the requests carry, from any process;
 * `resetSpent` starts a period's spending again at zero; `claimOnce` lets one notice through once
 * per id until its time is up, also across processes.
 */
import { describe, expect, it } from "vitest";
import type { BudgetCap } from "../../../src/queue/budgets/types.js";
import {
  at,
  type BudgetLedgerSubject,
  callId,
  cap,
  reserveAt,
  reservedOf,
  spend,
  spentOf,
  T0,
  usd,
} from "./budget-ledger-support.js";

const NEXT_DAY = at("2026-03-11T08:00:00Z");

export function budgetLedgerAdmin(open: () => Promise<BudgetLedgerSubject>): void {
  describe("setLimit", () => {
    it("raises a cap for the rest of its period, whatever limit the requests carry, from another process", async () => {
      const subject = await open();
      const { ledger } = subject;
      const c = cap();
      await spend(ledger, [c], usd(0.9));
      expect((await reserveAt(ledger, [c], usd(0.5))).ok).toBe(false);
      await (await subject.peer()).setLimit({ ...c, usd: 2 }, T0 + 1);
      expect(await reserveAt(ledger, [c], usd(1.1))).toEqual({ ok: true });
      expect(await reserveAt(ledger, [c], usd(0.01))).toMatchObject({
        ok: false,
        cap: c,
        spent: usd(0.9),
        reserved: usd(1.1),
        limit: { usd: 2 },
      });
      expect(await ledger.usage([c], T0)).toMatchObject([{ limit: { usd: 2 } }]);
      // The next day starts with the cap's own limit; the raised day keeps its own.
      expect(await ledger.usage([c], NEXT_DAY)).toMatchObject([{ spent: usd(0), limit: { usd: 1 } }]);
      expect((await reserveAt(ledger, [c], usd(1.1), NEXT_DAY)).ok).toBe(false);
      expect(await ledger.usage([c], T0)).toMatchObject([{ limit: { usd: 2 } }]);
    });

    it("lowers a cap, also to zero", async () => {
      const { ledger } = await open();
      const c = cap();
      await spend(ledger, [c], usd(0.3));
      await ledger.setLimit({ ...c, usd: 0.4 }, T0);
      expect(await reserveAt(ledger, [c], usd(0.2))).toMatchObject({ ok: false, limit: { usd: 0.4 } });
      expect(await reserveAt(ledger, [c], usd(0.1))).toEqual({ ok: true });
      await ledger.setLimit({ ...c, usd: 0 }, T0);
      expect(
        await ledger.reserve({
          callId: callId(),
          caps: [c],
          amount: usd(0),
          now: T0,
          ttlMs: 1,
          admit: "under",
        }),
      ).toMatchObject({ ok: false, limit: { usd: 0 } });
    });

    it("replaces only the dimensions it names, keeping what an earlier setLimit stored", async () => {
      const { ledger } = await open();
      const c = cap({ usd: 1, tokens: 100 });
      await ledger.setLimit({ ...c, usd: undefined, tokens: 1000 }, T0);
      expect(await ledger.usage([c], T0)).toMatchObject([{ limit: { usd: 1, tokens: 1000 } }]);
      await ledger.setLimit({ scope: c.scope, key: c.key, period: c.period, usd: 3 }, T0);
      expect(await ledger.usage([c], T0)).toMatchObject([{ limit: { usd: 3, tokens: 1000 } }]);
      expect(await reserveAt(ledger, [c], usd(3, 1000))).toEqual({ ok: true });
      expect(await reserveAt(ledger, [c], usd(0, 1))).toMatchObject({
        ok: false,
        limit: { usd: 3, tokens: 1000 },
      });
      // A request's cap without a tokens limit still meets the stored one.
      const usdOnly: BudgetCap = { scope: c.scope, key: c.key, period: c.period, usd: 1 };
      expect(await ledger.usage([usdOnly], T0)).toMatchObject([{ limit: { usd: 3, tokens: 1000 } }]);
    });

    it("limits a cap that only counts, and only that scope, key and period", async () => {
      const { ledger } = await open();
      const counting: BudgetCap = { scope: "user", key: "telegram:7", period: "day" };
      await ledger.setLimit({ ...counting, usd: 0.5 }, T0);
      expect(await reserveAt(ledger, [counting], usd(0.6))).toMatchObject({ ok: false, limit: { usd: 0.5 } });
      const month: BudgetCap = { ...counting, period: "month" };
      const other: BudgetCap = { ...counting, key: "telegram:8" };
      const channel: BudgetCap = { ...counting, scope: "channel" };
      expect(await ledger.usage([month, other, channel], T0)).toMatchObject([
        { limit: {} },
        { limit: {} },
        { limit: {} },
      ]);
      expect(await reserveAt(ledger, [month, other, channel], usd(10))).toEqual({ ok: true });
    });

    it("refuses a cap that names no limit, or a negative or endless one (a caller's bug)", async () => {
      const { ledger } = await open();
      const { usd: _, ...nothing } = cap();
      await expect(ledger.setLimit(nothing, T0)).rejects.toThrow(RangeError);
      await expect(ledger.setLimit(cap({ usd: -1 }), T0)).rejects.toThrow(RangeError);
      await expect(ledger.setLimit(cap({ tokens: Number.NaN }), T0)).rejects.toThrow(RangeError);
      expect(await ledger.usage([nothing], T0)).toMatchObject([{ limit: {} }]);
    });
  });

  describe("resetSpent", () => {
    it("starts the period's spending at zero, keeping live reservations, stored limits and usage rows", async () => {
      const { ledger } = await open();
      const c = cap({ scope: "channel" });
      await spend(ledger, [c], usd(0.1), at("2026-03-09T12:00:00Z"));
      await spend(ledger, [c], usd(0.7, 30));
      await ledger.setLimit({ ...c, tokens: 50 }, T0);
      expect(await reserveAt(ledger, [c], usd(0.2, 10))).toEqual({ ok: true });
      await ledger.resetSpent({ ...c, usd: undefined }, T0 + 5);
      expect(await ledger.usage([c], T0 + 5)).toMatchObject([
        { spent: usd(0), reserved: usd(0.2, 10), limit: { usd: 1, tokens: 50 } },
      ]);
      expect(await spentOf(ledger, c, at("2026-03-09T12:00:00Z"))).toEqual(usd(0.1));
      expect(await ledger.exportUsage(T0, T0 + 1)).toMatchObject([{ key: c.key, usd: 0.7, tokens: 30 }]);
      expect(await reserveAt(ledger, [c], usd(0.8, 40))).toEqual({ ok: true });
      await spend(ledger, [c], usd(0, 0));
      expect(await spentOf(ledger, c)).toEqual(usd(0));
      await ledger.resetSpent(cap(), T0);
      expect(await reservedOf(ledger, c)).toEqual(usd(1, 50));
    });
  });

  describe("claimOnce", () => {
    it("is true for the first claim of an id and false until its time is up, then true once again", async () => {
      const { ledger } = await open();
      const id = `warn80:user:telegram:{42}:day:${T0} ünï`;
      expect(await ledger.claimOnce(id, T0, T0 + 1000)).toBe(true);
      expect(await ledger.claimOnce(id, T0, T0 + 5000)).toBe(false);
      expect(await ledger.claimOnce(id, T0 + 999, T0 + 5000)).toBe(false);
      expect(await ledger.claimOnce(`${id}:other`, T0, T0 + 1000)).toBe(true);
      expect(await ledger.claimOnce("", T0, T0 + 1000)).toBe(true);
      expect(await ledger.claimOnce("", T0, T0 + 1000)).toBe(false);
      expect(await ledger.claimOnce(id, T0 + 1000, T0 + 2000)).toBe(true);
      expect(await ledger.claimOnce(id, T0 + 1500, T0 + 9000)).toBe(false);
      await expect(ledger.claimOnce(id, T0, Number.NaN)).rejects.toThrow(RangeError);
    });

    it("lets exactly one of many simultaneous claims from several processes through", async () => {
      const subject = await open();
      const ledgers = [subject.ledger, ...(await Promise.all([1, 2, 3].map(() => subject.peer())))];
      const id = `notice:${T0}:${Math.random()}`;
      const won = await Promise.all(
        Array.from({ length: 20 }, (_, i) => ledgers[i % 4]?.claimOnce(id, T0, T0 + 60_000)),
      );
      expect(won.filter(Boolean)).toHaveLength(1);
    });
  });
}
