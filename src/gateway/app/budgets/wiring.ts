/**
 * Budgets, as one step of `createGateway`: the ledger of the config's mode (a file in `dataDir`,
 * or Redis), the gate every model call of this process passes, `/usage` and `/budget`, and the
 * budget metrics. Off (`budgets.enabled: false`): no ledger, no gate, no commands.
 */
import { type Clock, systemClock } from "../../../agent/clock.js";
import type { ApprovalStore } from "../../../extensions/approval/types.js";
import type { ExtensionFactory } from "../../../extensions/types.js";
import { type BudgetPolicy, capsFor } from "../../../queue/budgets/policy.js";
import type { BudgetLedger } from "../../../queue/budgets/types.js";
import type { BudgetsConfig, SwitchboardConfig } from "../../config/types.js";
import { createBudgetMetrics } from "../../http/budget-metrics.js";
import type { SwitchboardMetrics } from "../../http/metrics.js";
import type { Logger } from "../../log.js";
import { openBudgetLedger } from "../budget-ledger.js";
import type { SharedRedis } from "../shared-redis.js";
import { createBudgetCommands } from "./commands.js";
import { BudgetGate } from "./gate.js";

export interface BudgetWiring {
  /** Undefined when budgets are off. */
  gate: BudgetGate | undefined;
  /** `/usage` and `/budget`; undefined when budgets are off. */
  extension: ExtensionFactory | undefined;
}

/** The caps of the config's `budgets` section. */
function budgetPolicy(b: BudgetsConfig): BudgetPolicy {
  return {
    limits: {
      ...(b.user ? { user: b.user } : {}),
      ...(b.channel ? { channel: b.channel } : {}),
      ...(b.thread ? { thread: b.thread } : {}),
      ...(b.deployment ? { deployment: b.deployment } : {}),
    },
    members: b.members,
  };
}

export async function wireBudgets(o: {
  config: SwitchboardConfig;
  shared: SharedRedis | undefined;
  approvals: ApprovalStore;
  isAdmin(platform: string, userId: string): boolean;
  hasAdmins(platform: string): boolean;
  metrics: SwitchboardMetrics;
  logger: Logger;
  /** Receives the ledger's close, after the runtime's (runs that end meanwhile still settle). */
  closers: (() => Promise<unknown>)[];
  clock?: Clock;
}): Promise<BudgetWiring> {
  const cfg = o.config.budgets;
  if (!cfg.enabled) return { gate: undefined, extension: undefined };
  const ledger: BudgetLedger = await openBudgetLedger(o.config, o.shared);
  o.closers.push(() => ledger.close());
  const clock = o.clock ?? systemClock;
  const policy = budgetPolicy(cfg);
  // The deployment's caps (day and month) as every call counts against them, for the gauges.
  const deploymentCaps = capsFor(policy, { threadKey: "", channelKey: "" }).filter(
    (c) => c.scope === "deployment",
  );
  const gate = new BudgetGate({
    ledger,
    policy,
    timeZone: cfg.timeZone,
    warnAt: cfg.warnAt,
    reservationTtlMs: cfg.reservationTtlMs,
    approvalTimeoutMs: cfg.approvalTimeoutMs,
    approvals: o.approvals,
    hasAdmins: o.hasAdmins,
    clock,
    metrics: createBudgetMetrics(o.metrics.registry, () => ledger.usage(deploymentCaps, clock.now())),
    logger: o.logger.child({ component: "budgets" }),
  });
  const extension = createBudgetCommands({
    ledger,
    policy,
    timeZone: cfg.timeZone,
    isAdmin: o.isAdmin,
    clock,
  });
  return { gate, extension };
}
