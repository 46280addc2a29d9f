/**
 * The embedded mode's budgets file (`<dataDir>/budgets.json` as the runtime will name it): the
 * spent counters, the limits `setLimit` stored and the usage rows, in whole micro-dollars and
 * tokens, and the ids `claimOnce` holds (so a restart does not repeat a notice). Reservations and
 * settled call ids are not in it: they belong to calls of the process that owns the file, which a
 * restart ended. Read once at start (`readBudgetsFile`; a file written before limits and claims
 * were kept loads with none), replaced whole at each change (`writeBudgetsFile`: a temporary file,
 * fsynced, then renamed over it, so a crash leaves the old file or the new one).
 */
import { readStateFile, replaceStateFile } from "../store/state-file.js";
import type { Units } from "./plan.js";

/** Spent of one cap period (`<scope>:<key>:<period>:<start>`), and when it may go (ms). */
export type SpentEntry = Units & { dropAt: number };

/** One usage row's sums. */
export type UsageSums = Units & { calls: number };

/** One day's usage rows by row name (`usageFields`), and when the day may go (ms). */
export interface UsageDay {
  dropAt: number;
  rows: Record<string, UsageSums>;
}

/** The limits `setLimit` stored for one cap period (absent dimensions: none), and when they may go (ms). */
export type LimitEntry = Partial<Units> & { dropAt: number };

/** What the file holds. */
export interface BudgetsState {
  spent: Record<string, SpentEntry>;
  /** By period id, as `spent`. */
  limits: Record<string, LimitEntry>;
  usage: Record<string, UsageDay>;
  /** Claimed ids → until when they are held (ms). */
  claims: Record<string, number>;
}

interface BudgetsFile extends BudgetsState {
  version: 1;
}

/**
 * The state in the file at `path`; empty when it does not exist. Throws an Error naming the file
 * and what to do when it is not a budgets file: loading a damaged file as empty would overwrite it
 * at the next settle and lose the month's spending and the usage history.
 */
export function readBudgetsFile(path: string): BudgetsState {
  const parsed = readStateFile(path, (why) => damaged(path, why));
  if (parsed === undefined) return emptyBudgetsState();
  const file = parsed as Partial<BudgetsFile> | null;
  const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
  const optional = (v: unknown) => v === undefined || isObject(v);
  if (
    !isObject(file) ||
    file?.version !== 1 ||
    !isObject(file.spent) ||
    !isObject(file.usage) ||
    !optional(file.limits) ||
    !optional(file.claims)
  )
    throw damaged(
      path,
      'not {"version": 1, "spent": {...}, "usage": {...}, "limits"?: {...}, "claims"?: {...}}',
    );
  return {
    spent: file.spent as Record<string, SpentEntry>,
    limits: (file.limits ?? {}) as Record<string, LimitEntry>,
    usage: file.usage as Record<string, UsageDay>,
    claims: (file.claims ?? {}) as Record<string, number>,
  };
}

/** The state of a ledger that has counted nothing yet. */
export function emptyBudgetsState(): BudgetsState {
  return { spent: {}, limits: {}, usage: {}, claims: {} };
}

function damaged(path: string, why: string): Error {
  return new Error(
    `The budgets file ${path} is damaged (${why}). Move it aside (rename it, say to ${path}.damaged) ` +
      "to start counting from zero (this month's spending and the usage history are lost), or repair it and restart.",
  );
}

/** Replaces the file at `path` with `state` as it is at the call, atomically; resolves once in place. */
export async function writeBudgetsFile(path: string, state: BudgetsState): Promise<void> {
  const file: BudgetsFile = { version: 1, ...state };
  await replaceStateFile(path, `${JSON.stringify(file)}\n`);
}
