/**
 * The budget gate's metrics, on a process's registry: per cap (its scope and period, summed over
 * members so user and thread keys never become labels) the USD reserved before calls and settled
 * after them, the calls refused and the runs an admin let past a cap; and the deployment's own
 * spending and live reservations this day and month, read from the ledger at each scrape.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { CapUsage } from "../../queue/budgets/types.js";
import type { BudgetMetrics } from "../app/budgets/gate.js";

/** The budget metrics on `registry`; `deployment` reads the deployment caps' usage at a scrape. */
export function createBudgetMetrics(
  registry: Registry,
  deployment?: () => Promise<CapUsage[]>,
): BudgetMetrics {
  const registers = [registry];
  const labelNames = ["scope", "period"] as const;
  const reserved = new Counter({
    name: "switchboard_budget_reserved_usd_total",
    help: "USD reserved for model calls before they were made (their worst case), per cap scope and period.",
    labelNames,
    registers,
  });
  const settled = new Counter({
    name: "switchboard_budget_spent_usd_total",
    help: "USD model calls actually cost, as settled against caps, per cap scope and period.",
    labelNames,
    registers,
  });
  const refused = new Counter({
    name: "switchboard_budget_refusals_total",
    help: "Model calls not made because a budget cap was reached, by the cap that refused them.",
    labelNames,
    registers,
  });
  const overrides = new Counter({
    name: "switchboard_budget_overrides_total",
    help: "Runs an admin allowed past a reached budget cap.",
    registers,
  });
  if (deployment) {
    let last: CapUsage[] = [];
    // One ledger read per scrape serves both gauges (the second collect reuses it).
    let pending: Promise<CapUsage[]> | undefined;
    const read = () => {
      pending ??= deployment()
        .then((u) => (last = u))
        .catch(() => last)
        .finally(() => setTimeout(() => (pending = undefined), 0));
      return pending;
    };
    for (const [name, help, pick] of [
      [
        "switchboard_budget_deployment_spent_usd",
        "The deployment's spending in the current period (USD).",
        (u: CapUsage) => u.spent.usd,
      ],
      [
        "switchboard_budget_deployment_reserved_usd",
        "The deployment's live reservations in the current period (USD).",
        (u: CapUsage) => u.reserved.usd,
      ],
    ] as const) {
      new Gauge({
        name,
        help,
        labelNames: ["period"] as const,
        registers,
        async collect() {
          for (const u of await read()) this.set({ period: u.cap.period }, pick(u));
        },
      });
    }
  }
  return {
    budgetReserved: (cap, usd) => reserved.inc({ scope: cap.scope, period: cap.period }, Math.max(0, usd)),
    budgetSettled: (cap, usd) => settled.inc({ scope: cap.scope, period: cap.period }, Math.max(0, usd)),
    budgetRefused: (cap) => refused.inc({ scope: cap.scope, period: cap.period }),
    budgetOverride: () => overrides.inc(),
  };
}
