/**
 * The checks of the `budgets:` section the schema cannot make: a time zone that exists, limits
 * that limit something, and members named at most once per scope and period.
 */
import { canonicalTimeZone } from "../../extensions/schedules/index.js";
import { type ConfigIssue, joinPath } from "./errors.js";
import type { ValidatedConfig } from "./schema.js";

type Budgets = ValidatedConfig["budgets"];

const SCOPES = ["user", "channel", "thread", "deployment"] as const;
const PERIODS = ["day", "month"] as const;

const NAMES_NOTHING = "name usd, tokens or both";

const limitsNothing = (l: { usd?: number; tokens?: number }) => l.usd === undefined && l.tokens === undefined;

export function budgetIssues(b: Budgets): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!canonicalTimeZone(b.timeZone))
    issues.push({
      path: "budgets.timeZone",
      message: `"${b.timeZone}" is not a time zone: use an IANA name such as Europe/Berlin, America/New_York or UTC`,
    });
  for (const scope of SCOPES)
    for (const period of PERIODS) {
      const l = b[scope]?.[period];
      if (l && limitsNothing(l))
        issues.push({ path: joinPath(["budgets", scope, period]), message: NAMES_NOTHING });
    }
  const firstOf = new Map<string, number>();
  b.members.forEach((m, i) => {
    const at = joinPath(["budgets", "members", i]);
    if (limitsNothing(m)) issues.push({ path: at, message: NAMES_NOTHING });
    const id = JSON.stringify([m.scope, m.key, m.period]);
    const first = firstOf.get(id);
    if (first !== undefined)
      issues.push({
        path: at,
        message: `repeats the ${m.period} limit of ${m.scope} "${m.key}" of budgets.members[${first}]`,
      });
    else firstOf.set(id, i);
  });
  return issues;
}
