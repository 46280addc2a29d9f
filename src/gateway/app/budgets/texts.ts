/**
 * What people read about budgets: amounts, cap names, when a cap resets, the 80 % warning, the
 * message of a call over a cap and the admin's request to allow one more run. Short on purpose
 * (chat lines, and the refusal is also the failed call's error message).
 */
import { formatUsd } from "../../../agent/llm/usage.js";
import { formatInstant } from "../../../extensions/schedules/index.js";
import type {
  Amount,
  BudgetCap,
  BudgetLimit,
  BudgetPeriod,
  BudgetScope,
} from "../../../queue/budgets/types.js";

/** `950 tokens`, `12.5k tokens`, `1.2M tokens`. */
export function tokenCount(n: number): string {
  if (n >= 1e6) return `${trim(n / 1e6)}M tokens`;
  if (n >= 1e3) return `${trim(n / 1e3)}k tokens`;
  return `${n} tokens`;
}

function trim(x: number): string {
  return x >= 100 ? x.toFixed(0) : x.toFixed(1).replace(/\.0$/, "");
}

const ADJECTIVE: Record<BudgetPeriod, string> = { day: "daily", month: "monthly" };

/** "your daily budget", "this channel's monthly budget", "the deployment's daily budget". */
export function capName(cap: Pick<BudgetCap, "scope" | "period">, asker: "you" | "them" = "you"): string {
  const whose: Record<BudgetScope, string> = {
    user: asker === "you" ? "your" : "their",
    channel: "this channel's",
    thread: "this thread's",
    deployment: "the deployment's",
  };
  return `${whose[cap.scope]} ${ADJECTIVE[cap.period]} budget`;
}

/** "$1.62 of $2.00" on the dimensions `limit` limits (both joined by "and"). */
export function spentOf(spent: Amount, limit: BudgetLimit): string {
  const parts: string[] = [];
  if (limit.usd !== undefined) parts.push(`${formatUsd(spent.usd)} of ${formatUsd(limit.usd)}`);
  if (limit.tokens !== undefined) parts.push(`${tokenCount(spent.tokens)} of ${tokenCount(limit.tokens)}`);
  return parts.length > 0 ? parts.join(" and ") : formatUsd(spent.usd);
}

/** The highest share of its limit `spent` has reached (0 when nothing is limited). */
export function shareUsed(spent: Amount, limit: BudgetLimit): number {
  let share = 0;
  if (limit.usd !== undefined) share = Math.max(share, limit.usd > 0 ? spent.usd / limit.usd : 1);
  if (limit.tokens !== undefined) share = Math.max(share, limit.tokens > 0 ? spent.tokens / limit.tokens : 1);
  return share;
}

/** "at Tue 2026-12-08 00:00 UTC (in 3 h 12 min)". */
export function resetsAt(at: number, now: number, timeZone: string): string {
  return `at ${formatInstant(at, timeZone)} (in ${duration(at - now)})`;
}

/** "3 h 12 min", "45 min", "2 days 4 h". */
function duration(ms: number): string {
  const min = Math.max(1, Math.ceil(ms / 60_000));
  const days = Math.floor(min / 1440);
  const hours = Math.floor((min % 1440) / 60);
  const mins = min % 60;
  if (days > 0) return `${days} day${days === 1 ? "" : "s"}${hours > 0 ? ` ${hours} h` : ""}`;
  if (hours > 0) return `${hours} h${mins > 0 ? ` ${mins} min` : ""}`;
  return `${mins} min`;
}

/** Everything a refusal names: the cap, its spending and limit, when it resets. */
export interface CapState {
  cap: BudgetCap;
  spent: Amount;
  limit: BudgetLimit;
  resetsAt: number;
}

/** Who can lift a cap, for the refusal's last sentence. */
function whoCanRaise(cap: BudgetCap, hasAdmins: boolean): string {
  return hasAdmins
    ? "An admin can raise it with /budget or allow one more run."
    : `An operator can raise budgets.${cap.scope === "deployment" ? "deployment" : cap.scope}.${cap.period} in the config.`;
}

/** The failed call's message: which cap, how far, when it resets, who can raise it. */
export function refusalText(s: CapState, now: number, timeZone: string, hasAdmins: boolean): string {
  const name = capName(s.cap);
  return (
    `💸 Not run: ${name} is used up (${spentOf(s.spent, s.limit)}). ` +
    `It resets ${resetsAt(s.resetsAt, now, timeZone)}. ${whoCanRaise(s.cap, hasAdmins)} ` +
    "Your message is kept in the conversation."
  );
}

/** The one-time warning when a cap passes its warning share. */
export function warningText(s: CapState, now: number, timeZone: string): string {
  const pct = Math.floor(shareUsed(s.spent, s.limit) * 100);
  const name = capName(s.cap);
  return `⚠️ ${pct} % of ${name} is used (${spentOf(s.spent, s.limit)}). It resets ${resetsAt(s.resetsAt, now, timeZone)}.`;
}

/** The request an admin answers with ✅ or ❌ (or `/approve <id>`). */
export function askText(
  s: CapState,
  id: string,
  asker: string | undefined,
  now: number,
  timeZone: string,
): string {
  const by = asker ? ` (asked by ${asker})` : "";
  return (
    `💸 ${capName(s.cap, "them")[0]?.toUpperCase()}${capName(s.cap, "them").slice(1)} is used up${by}: ` +
    `${spentOf(s.spent, s.limit)}, resets ${resetsAt(s.resetsAt, now, timeZone)}.\n` +
    `Admins: react ✅ to allow this one run or ❌ to refuse it (\`/approve ${id}\`, \`/deny ${id}\`).`
  );
}

/** The request once decided. */
export function askDecidedText(
  ask: string,
  outcome: "approved" | "denied" | "expired" | "cancelled",
  by?: string,
): string {
  const head = ask.split("\n")[0] ?? ask;
  const tail =
    outcome === "approved"
      ? `✅ One more run allowed${by ? ` by ${by}` : ""}.`
      : outcome === "denied"
        ? `❌ Refused${by ? ` by ${by}` : ""}.`
        : outcome === "expired"
          ? "⌛ No admin answered in time; not run."
          : "⏹️ Cancelled: the run stopped before an admin decided; not run.";
  return `${head}\n${tail}`;
}
