/**
 * Which caps a model call counts against: the deployment's budget policy (limits per scope and
 * period, and limits of single members) applied to who is calling. Pure: the gate asks it before
 * every call, `/usage` and `/budget` to show where someone stands.
 */
import type { BudgetCap, BudgetLimit, BudgetPeriod, BudgetScope } from "./types.js";

/** One member's own limit, replacing its scope's for that member (`budgets.members`). */
export interface MemberLimit extends BudgetLimit {
  scope: Exclude<BudgetScope, "deployment">;
  key: string;
  period: BudgetPeriod;
}

/** The deployment's caps: per scope, per period, and per member. */
export interface BudgetPolicy {
  limits: Partial<Record<BudgetScope, Partial<Record<BudgetPeriod, BudgetLimit>>>>;
  members: readonly MemberLimit[];
}

/** Who a call is made for: the names its spending is counted under. */
export interface BudgetParty {
  threadKey: string;
  /** `<platform>:<channel id>` (`channelKeyOf`). */
  channelKey: string;
  /** `<platform>:<user id>`; absent for calls no person asked for. */
  userKey?: string;
}

const SCOPES: readonly BudgetScope[] = ["thread", "user", "channel", "deployment"];
const PERIODS: readonly BudgetPeriod[] = ["day", "month"];

/**
 * The channel of a thread key as `<platform>:<channel id>`: `telegram:<chat>` (from
 * `telegram:<chat>:<topic>:<root>`), `slack:<channel>` (from `slack:<team>:<channel>:<ts>`),
 * `discord:<channel>` (from `discord:<guild|dm>:<channel>:<anchor>`); the web chat's conversation
 * and any platform it does not know keep the whole key (`web:<conversation>`).
 */
export function channelKeyOf(threadKey: string): string {
  const parts = threadKey.split(":");
  const at: Record<string, number> = { telegram: 1, slack: 2, discord: 2 };
  const i = at[parts[0] ?? ""];
  const id = i !== undefined ? parts[i] : undefined;
  return id ? `${parts[0]}:${id}` : threadKey;
}

/** `<platform>:<user id>`, the key of a user's caps. */
export function userKeyOf(platform: string, userId: string): string {
  return `${platform}:${userId}`;
}

/** The member of `scope` a party is (undefined: a call for no user has no user caps). */
export function memberOf(scope: BudgetScope, party: BudgetParty): string | undefined {
  switch (scope) {
    case "thread":
      return party.threadKey;
    case "user":
      return party.userKey;
    case "channel":
      return party.channelKey;
    case "deployment":
      return "";
  }
}

/** The limit of (scope, key, period): the member's own, else the scope's; undefined when none is set. */
export function limitOf(
  policy: BudgetPolicy,
  scope: BudgetScope,
  key: string,
  period: BudgetPeriod,
): BudgetLimit | undefined {
  const own = policy.members.find((m) => m.scope === scope && m.key === key && m.period === period);
  if (own) return pick(own);
  const limit = policy.limits[scope]?.[period];
  return limit ? pick(limit) : undefined;
}

function pick(l: BudgetLimit): BudgetLimit {
  return {
    ...(l.usd !== undefined ? { usd: l.usd } : {}),
    ...(l.tokens !== undefined ? { tokens: l.tokens } : {}),
  };
}

/**
 * Every cap a call of `party` counts against, narrowest first (thread, user, channel, deployment;
 * day before month), so a refusal names the cap closest to the caller. User, channel and
 * deployment caps are always there, counting only where no limit is set (they feed `/usage` and
 * the usage export); a thread's caps only where a thread limit applies (threads are many).
 */
export function capsFor(policy: BudgetPolicy, party: BudgetParty): BudgetCap[] {
  const caps: BudgetCap[] = [];
  for (const scope of SCOPES) {
    const key = memberOf(scope, party);
    if (key === undefined) continue;
    for (const period of PERIODS) {
      const limit = limitOf(policy, scope, key, period);
      if (scope === "thread" && !limit) continue;
      caps.push({ scope, key, period, ...limit });
    }
  }
  return caps;
}

/** Whether a cap limits anything (a cap without limits only counts). */
export function limits(cap: { usd?: number; tokens?: number }): boolean {
  return cap.usd !== undefined || cap.tokens !== undefined;
}
