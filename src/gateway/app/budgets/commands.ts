/**
 * `/usage` and `/budget`. `/usage` (anyone) shows where the asker stands: their, the channel's and
 * the deployment's spending today and this month against the caps, and this month by model.
 * `/budget` shows the caps in effect here; admins raise one for the rest of its period
 * (`/budget raise channel month $100`, `/budget raise user <@U1> day 500k tokens`) or reset its
 * spending to zero (`/budget reset user me day`). docs/budgets.md is the user's guide.
 */

import type { Clock } from "../../../agent/clock.js";
import { formatUsd } from "../../../agent/llm/usage.js";
import type { ExtensionCommandContext, ExtensionFactory } from "../../../extensions/types.js";
import { periodWindow } from "../../../queue/budgets/periods.js";
import {
  type BudgetParty,
  type BudgetPolicy,
  capsFor,
  channelKeyOf,
  limitOf,
  limits,
  memberOf,
  userKeyOf,
} from "../../../queue/budgets/policy.js";
import type {
  BudgetCap,
  BudgetLedger,
  BudgetPeriod,
  BudgetScope,
  CapUsage,
} from "../../../queue/budgets/types.js";
import { capName, resetsAt, spentOf, tokenCount } from "./texts.js";

export interface BudgetCommandsOptions {
  ledger: BudgetLedger;
  policy: BudgetPolicy;
  timeZone: string;
  isAdmin(platform: string, userId: string): boolean;
  clock: Clock;
}

const BUDGET_USAGE = [
  "Usage:",
  "• /budget: the caps here and where they stand",
  "• /budget raise <user|channel|thread|deployment> [member] <day|month> <$N | N tokens>: for the rest of the period (admins)",
  "• /budget reset <user|channel|thread|deployment> [member] <day|month>: spending back to zero (admins)",
  "Members: a user as me, an @mention or a user id; channel and thread mean this one.",
].join("\n");

/** Who `/usage` and `/budget` are about: the thread they are typed in and the person typing. */
function partyOf(ctx: ExtensionCommandContext): BudgetParty {
  const { threadKey, platform } = ctx.thread;
  return { threadKey, channelKey: channelKeyOf(threadKey), userKey: userKeyOf(platform, ctx.user.id) };
}

/** "• your daily budget: $0.42 of $2.00 (resets …)" or, for a counting-only cap, what it spent. */
function capLine(u: CapUsage, now: number, timeZone: string, asker: "you" | "them" = "you"): string {
  const name = capName(u.cap, asker);
  const spent = limits(u.limit)
    ? spentOf(u.spent, u.limit)
    : `${formatUsd(u.spent.usd)}, ${tokenCount(u.spent.tokens)} (no cap)`;
  const reserved = u.reserved.usd > 0 ? `, ${formatUsd(u.reserved.usd)} in calls under way` : "";
  return `• ${name[0]?.toUpperCase()}${name.slice(1)}: ${spent}${reserved}; resets ${resetsAt(u.resetsAt, now, timeZone)}`;
}

/** `/usage` and `/budget` on `o.ledger`. */
export function createBudgetCommands(o: BudgetCommandsOptions): ExtensionFactory {
  return (api) => {
    api.registerCommand("usage", {
      description: "What you, this channel and the deployment spent today and this month",
      async handler(_args, ctx) {
        try {
          await ctx.reply(await usageText(ctx));
        } catch (e) {
          ctx.logger.warn({ err: e }, "/usage failed");
          await ctx.reply("Could not read the usage just now; try again in a moment.");
        }
      },
    });

    api.registerCommand("budget", {
      description: "The budget caps here; admins raise or reset one",
      usage: "[raise|reset] …",
      async handler(args, ctx) {
        const words = args.trim().split(/\s+/).filter(Boolean);
        try {
          if (words.length === 0) return await ctx.reply(await capsText(ctx));
          const verb = words[0]?.toLowerCase();
          if (verb !== "raise" && verb !== "reset") return await ctx.reply(BUDGET_USAGE);
          if (!o.isAdmin(ctx.thread.platform, ctx.user.id))
            return await ctx.reply(
              `Only admins of ${ctx.thread.platform} can change budgets (channels.${ctx.thread.platform}.admins); nothing changed.`,
            );
          const parsed = parseTarget(words.slice(1), ctx, verb === "raise", o.policy);
          if (typeof parsed === "string") return await ctx.reply(`${parsed}\n${BUDGET_USAGE}`);
          await ctx.reply(verb === "raise" ? await raise(parsed) : await reset(parsed));
        } catch (e) {
          ctx.logger.warn({ err: e }, "/budget failed");
          await ctx.reply(
            "Could not change the budget just now; it may not have changed. Try again in a moment.",
          );
        }
      },
    });
  };

  async function usageText(ctx: ExtensionCommandContext): Promise<string> {
    const now = o.clock.now();
    const party = partyOf(ctx);
    const caps = capsFor(o.policy, party).filter((c) => c.scope !== "thread" || limits(c));
    const usage = await o.ledger.usage(caps, now);
    const lines = ["Spending:", ...usage.map((u) => capLine(u, now, o.timeZone))];
    const month = periodWindow("month", now, o.timeZone);
    const rows = (await o.ledger.exportUsage(month.start, now + 1)).filter(
      (r) => r.scope === "user" && r.key === party.userKey,
    );
    const byModel = new Map<string, { usd: number; calls: number }>();
    for (const r of rows) {
      const m = byModel.get(r.model) ?? { usd: 0, calls: 0 };
      byModel.set(r.model, { usd: m.usd + r.usd, calls: m.calls + r.calls });
    }
    if (byModel.size > 0) {
      const parts = [...byModel.entries()]
        .sort((a, b) => b[1].usd - a[1].usd)
        .map(
          ([model, m]) =>
            `${model || "unknown"} ${formatUsd(m.usd)} (${m.calls} call${m.calls === 1 ? "" : "s"})`,
        );
      lines.push(`Your calls this month by model: ${parts.join(" · ")}`);
    } else lines.push("You have made no model calls this month.");
    return lines.join("\n");
  }

  async function capsText(ctx: ExtensionCommandContext): Promise<string> {
    const now = o.clock.now();
    // The ledger's limits: the config's and an admin's `/budget raise` for this period.
    const usage = (await o.ledger.usage(capsFor(o.policy, partyOf(ctx)), now)).filter((u) => limits(u.limit));
    if (usage.length === 0)
      return "No budget caps apply here: spending is counted (/usage) but not limited. Operators set caps under budgets: in the config.";
    return ["Budget caps here:", ...usage.map((u) => capLine(u, now, o.timeZone))].join("\n");
  }

  async function raise(t: Target): Promise<string> {
    const now = o.clock.now();
    const cap: BudgetCap = { scope: t.scope, key: t.key, period: t.period, ...t.amount };
    await o.ledger.setLimit(cap, now);
    const [u] = await o.ledger.usage(
      [{ scope: t.scope, key: t.key, period: t.period, ...limitOf(o.policy, t.scope, t.key, t.period) }],
      now,
    );
    const end = periodWindow(t.period, now, o.timeZone).end;
    const stands = u ? ` Now ${spentOf(u.spent, u.limit)}.` : "";
    return `Set ${describe(t)} to ${amountText(t.amount)} until it resets ${resetsAt(end, now, o.timeZone)}; the config's limit applies again after that.${stands}`;
  }

  async function reset(t: Target): Promise<string> {
    const now = o.clock.now();
    await o.ledger.resetSpent({ scope: t.scope, key: t.key, period: t.period }, now);
    return `Reset ${describe(t)}: its spending this ${t.period} starts again at zero.`;
  }

  function describe(t: Target): string {
    const who = t.scope === "user" ? ` of ${t.key}` : "";
    return `${capName(t, "them").replace(/^their /, "the ")}${who}`;
  }
}

interface Target {
  scope: BudgetScope;
  key: string;
  period: BudgetPeriod;
  amount: { usd?: number; tokens?: number };
}

const SCOPES = new Set<BudgetScope>(["user", "channel", "thread", "deployment"]);
/** The largest limits `/budget raise` sets (the ledgers count in whole micro-dollars and tokens). */
const MAX_USD = 1_000_000_000;
const MAX_TOKENS = 1e15;

/** `<scope> [member] <period> [amount…]` → a target, or what is wrong with it. */
function parseTarget(
  words: string[],
  ctx: ExtensionCommandContext,
  wantsAmount: boolean,
  policy: BudgetPolicy,
): Target | string {
  const scope = words[0]?.toLowerCase() as BudgetScope | undefined;
  if (!scope || !SCOPES.has(scope)) return `Name a scope: user, channel, thread or deployment.`;
  let rest = words.slice(1);
  let key: string;
  if (scope === "user") {
    const member = rest[0];
    if (!member || member === "day" || member === "month")
      return "Name the user: me, an @mention or a user id.";
    const platform = ctx.thread.platform;
    const id =
      member.toLowerCase() === "me"
        ? ctx.user.id
        : member.replace(/^<@!?([^>|]+)(?:\|[^>]*)?>$/, "$1").replace(new RegExp(`^${platform}:`), "");
    // A Telegram @username is not an id: the bot cannot look one up from a command.
    if (id.startsWith("@"))
      return `Name the user by their ${platform} user id (as channels.${platform}.admins lists them), not ${id}.`;
    key = userKeyOf(platform, id);
    rest = rest.slice(1);
  } else {
    const party = partyOf(ctx);
    key = memberOf(scope, party) ?? "";
  }
  const period = rest[0]?.toLowerCase();
  if (period !== "day" && period !== "month") return "Name the period: day or month.";
  // Threads are counted only where the config caps them: a raise elsewhere would bind nothing.
  if (scope === "thread" && !limitOf(policy, "thread", key, period))
    return `This thread has no ${period} cap to change: the config sets no budgets.thread.${period}.`;
  if (!wantsAmount) return rest.length > 1 ? "reset takes no amount." : { scope, key, period, amount: {} };
  const amount = parseAmount(rest.slice(1).join(" "));
  return typeof amount === "string" ? amount : { scope, key, period, amount };
}

/** `$5`, `5 usd`, `500k tokens`, `1.5M tokens`, `20000 tokens` → an amount, or what is wrong. */
function parseAmount(text: string): { usd: number } | { tokens: number } | string {
  const t = text.trim().toLowerCase();
  const usd = /^\$\s*(\d+(?:\.\d+)?)$|^(\d+(?:\.\d+)?)\s*(?:usd|\$|dollars?)$/.exec(t);
  if (usd) {
    const n = Number(usd[1] ?? usd[2]);
    return n <= MAX_USD
      ? { usd: n }
      : "At most $1,000,000,000 can be set here; set larger limits in the config, or none.";
  }
  const tokens = /^(\d+(?:\.\d+)?)\s*([km]?)\s*(?:tokens?)?$/.exec(t);
  if (tokens && (tokens[2] || /tokens?$/.test(t))) {
    const n = Number(tokens[1]) * (tokens[2] === "k" ? 1e3 : tokens[2] === "m" ? 1e6 : 1);
    return n <= MAX_TOKENS
      ? { tokens: Math.round(n) }
      : "At most 1000000000M tokens can be set here; set larger limits in the config, or none.";
  }
  return t === ""
    ? "Name the new limit: $5 for money, 500k tokens for tokens."
    : `"${text.trim()}" is no limit: say $5 for money or 500k tokens for tokens.`;
}

function amountText(a: { usd?: number; tokens?: number }): string {
  return a.usd !== undefined ? formatUsd(a.usd) : tokenCount(a.tokens ?? 0);
}
