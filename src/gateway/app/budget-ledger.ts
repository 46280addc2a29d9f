/**
 * The deployment's budget ledger (docs/budgets.md): in the embedded mode the memory ledger with its
 * file under `dataDir`, in Redis mode the Redis ledger on the shared connection, under the key
 * prefix. Both count days and months in `budgets.timeZone`.
 */
import { join } from "node:path";
import { MemoryBudgetLedger } from "../../queue/budgets/memory-ledger.js";
import type { BudgetLedger } from "../../queue/budgets/types.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { SharedRedis } from "./shared-redis.js";

/** The file the embedded mode keeps spending in: `<runtime.dataDir>/budgets.json`. */
export function budgetsFileOf(config: SwitchboardConfig): string {
  return join(config.runtime.dataDir, "budgets.json");
}

/**
 * The ledger of `config`'s mode: `shared` Redis (undefined: embedded). Throws when the embedded
 * mode's file is damaged (the error names it) or the zone is unknown (the config check refuses
 * that first). Its `close` leaves the shared connection open.
 */
export async function openBudgetLedger(
  config: SwitchboardConfig,
  shared: SharedRedis | undefined,
): Promise<BudgetLedger> {
  const { timeZone } = config.budgets;
  if (!shared) return new MemoryBudgetLedger({ timeZone, path: budgetsFileOf(config) });
  return new shared.kit.RedisBudgetLedger(shared.redis, { timeZone, prefix: config.runtime.keyPrefix });
}
