/**
 * The BudgetLedger contract's periods and usage rows (budget-ledger-contract.ts runs them): a new
 * day or month starts at zero at the ledger's zone's midnight, DST days included; the usage rows go
 * by the zone's day.
 */
import { describe, expect, it } from "vitest";
import type { Amount, BudgetCap } from "../../../src/queue/budgets/types.js";
import { subjectPerTest } from "../../support/contract-subject.js";
import {
  at,
  callId,
  cap,
  type MakeLedger,
  reserveAt,
  spend,
  spentOf,
  T0,
  TTL,
  usd,
} from "./budget-ledger-support.js";

/** Days and months in a zone: a new period starts at zero at the zone's midnight, DST days included. */
export function budgetLedgerPeriods(make: MakeLedger): void {
  describe("periods in the ledger's time zone", () => {
    const berlin = subjectPerTest(() => make("Europe/Berlin"));
    const newYork = subjectPerTest(() => make("America/New_York"));

    it("ends Berlin's 23-hour spring day at 22:00 UTC, and starts the next at zero", async () => {
      const { ledger } = await berlin();
      const c = cap();
      const lastMs = at("2026-03-29T21:59:59.999Z");
      await spend(ledger, [c], usd(0.9), lastMs);
      expect(await reserveAt(ledger, [c], usd(0.2), lastMs)).toMatchObject({
        ok: false,
        resetsAt: at("2026-03-29T22:00:00Z"),
      });
      expect(await ledger.usage([c], at("2026-03-28T23:00:00Z"))).toMatchObject([{ spent: usd(0.9) }]);
      expect(await ledger.usage([c], at("2026-03-29T22:00:00Z"))).toEqual([
        { cap: c, spent: usd(0), reserved: usd(0), limit: { usd: 1 }, resetsAt: at("2026-03-30T22:00:00Z") },
      ]);
    });

    it("keeps Berlin's 25-hour autumn day one period", async () => {
      const { ledger } = await berlin();
      const c = cap();
      await spend(ledger, [c], usd(0.3), at("2026-10-24T22:00:00Z"));
      await spend(ledger, [c], usd(0.3), at("2026-10-25T22:59:59Z"));
      expect(await ledger.usage([c], at("2026-10-25T12:00:00Z"))).toMatchObject([
        { spent: usd(0.6), resetsAt: at("2026-10-25T23:00:00Z") },
      ]);
      expect(await spentOf(ledger, c, at("2026-10-24T21:59:59Z"))).toEqual(usd(0));
      expect(await spentOf(ledger, c, at("2026-10-25T23:00:00Z"))).toEqual(usd(0));
    });

    it("counts New York's days at its own midnight across both DST changes", async () => {
      const { ledger } = await newYork();
      const c = cap();
      // 2026-03-08 has 23 hours (EST to EDT), 2026-11-01 has 25 (EDT to EST).
      await spend(ledger, [c], usd(0.1), at("2026-03-08T05:00:00Z"));
      expect(await ledger.usage([c], at("2026-03-09T03:59:59Z"))).toMatchObject([
        { spent: usd(0.1), resetsAt: at("2026-03-09T04:00:00Z") },
      ]);
      await spend(ledger, [c], usd(0.2), at("2026-11-02T04:30:00Z"));
      expect(await ledger.usage([c], at("2026-11-01T04:00:00Z"))).toMatchObject([
        { spent: usd(0.2), resetsAt: at("2026-11-02T05:00:00Z") },
      ]);
      expect(await spentOf(ledger, c, at("2026-11-02T05:00:00Z"))).toEqual(usd(0));
    });

    it("starts a month at zero on the first at local midnight (Berlin, New York)", async () => {
      const { ledger } = await berlin();
      const c = cap({ period: "month", usd: 30 });
      await spend(ledger, [c], usd(2), at("2026-01-31T22:59:59Z"));
      expect(await ledger.usage([c], at("2026-01-01T00:00:00Z"))).toMatchObject([
        { spent: usd(2), resetsAt: at("2026-01-31T23:00:00Z") },
      ]);
      expect(await ledger.usage([c], at("2026-01-31T23:00:00Z"))).toMatchObject([
        { spent: usd(0), resetsAt: at("2026-02-28T23:00:00Z") },
      ]);
      const ny = (await newYork()).ledger;
      const m = cap({ period: "month", usd: 30 });
      await spend(ny, [m], usd(3), at("2026-04-01T03:59:59Z"));
      expect(await ny.usage([m], at("2026-03-01T05:00:00Z"))).toMatchObject([
        { spent: usd(3), resetsAt: at("2026-04-01T04:00:00Z") },
      ]);
      expect(await spentOf(ny, m, at("2026-04-01T04:00:00Z"))).toEqual(usd(0));
    });
  });
}

/** The usage rows: per day in the zone, per user, channel and deployment, per model. */
export function budgetLedgerUsageRows(make: MakeLedger): void {
  describe("usage rows", () => {
    const berlin = subjectPerTest(() => make("Europe/Berlin"));

    it("adds each settled call to its user's, channel's and the deployment's row for its model and day", async () => {
      const { ledger } = await berlin();
      const user = cap();
      const channel = cap({ scope: "channel", usd: 10 });
      const thread = cap({ scope: "thread", usd: 10 });
      const deployment = cap({ scope: "deployment", period: "month", usd: 100 });
      const caps = [user, channel, thread, deployment];
      const settle = async (actual: Amount, model: string | undefined, now: number) => {
        const id = callId();
        await ledger.reserve({ callId: id, caps, amount: usd(1), now, ttlMs: TTL });
        await ledger.settle({ callId: id, caps, actual, now, ...(model ? { model } : {}) });
        await ledger.settle({ callId: id, caps, actual, now });
      };
      await settle(usd(0.25, 100), "gpt-x", at("2026-03-10T10:00:00Z"));
      await settle(usd(0.5, 200), "gpt-x", at("2026-03-10T22:59:00Z"));
      await settle(usd(0.125, 50), "claude-y", at("2026-03-10T21:00:00Z"));
      // 23:30 UTC is already the 11th in Berlin.
      await settle(usd(0.375, 10), undefined, at("2026-03-10T23:30:00Z"));
      const rows = await ledger.exportUsage(at("2026-03-01T00:00:00Z"), at("2026-04-01T00:00:00Z"));
      const row = (
        day: string,
        c: BudgetCap,
        model: string,
        usdSum: number,
        tokens: number,
        calls: number,
      ) => ({
        day,
        scope: c.scope,
        key: c.key,
        model,
        usd: usdSum,
        tokens,
        calls,
      });
      const expected = [
        row("2026-03-10", channel, "claude-y", 0.125, 50, 1),
        row("2026-03-10", channel, "gpt-x", 0.75, 300, 2),
        row("2026-03-10", deployment, "claude-y", 0.125, 50, 1),
        row("2026-03-10", deployment, "gpt-x", 0.75, 300, 2),
        row("2026-03-10", user, "claude-y", 0.125, 50, 1),
        row("2026-03-10", user, "gpt-x", 0.75, 300, 2),
        row("2026-03-11", channel, "", 0.375, 10, 1),
        row("2026-03-11", deployment, "", 0.375, 10, 1),
        row("2026-03-11", user, "", 0.375, 10, 1),
      ];
      expect(rows).toEqual(expected);
      // Days overlapping [since, until): the 11th starts at 23:00 UTC on the 10th.
      expect(await ledger.exportUsage(at("2026-03-10T23:00:00Z"), at("2026-03-10T23:00:01Z"))).toEqual(
        expected.slice(6),
      );
      expect(await ledger.exportUsage(at("2026-03-09T23:00:00Z"), at("2026-03-10T23:00:00Z"))).toEqual(
        expected.slice(0, 6),
      );
      expect(await ledger.exportUsage(at("2026-03-12T00:00:00Z"), at("2026-03-20T00:00:00Z"))).toEqual([]);
      expect(await ledger.exportUsage(T0, T0)).toEqual([]);
    });
  });
}
