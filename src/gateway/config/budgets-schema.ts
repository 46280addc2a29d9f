/**
 * The `budgets:` section: caps on what model calls spend, per user, channel, thread and the whole
 * deployment, per day and per month (docs/budgets.md), and the limits of single members.
 */
import { Type } from "@sinclair/typebox";
import { Obj, StringEnum } from "../../adapters/config-schema.js";

/** A limit in money, tokens or both (checked in budgets.ts: at least one). */
function limitProperties() {
  return {
    usd: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1e9, description: "Most US dollars in the period." }),
    ),
    tokens: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1e15, description: "Most tokens in the period." }),
    ),
  };
}

const limit = (description: string) =>
  Type.Optional(Type.Object(limitProperties(), { additionalProperties: false, description }));

/** A scope's limits per day and per month; each optional. */
const scopeLimits = (description: string) =>
  Type.Optional(
    Type.Object(
      {
        day: limit("Per calendar day in budgets.timeZone: usd, tokens or both."),
        month: limit("Per calendar month in budgets.timeZone: usd, tokens or both."),
      },
      { additionalProperties: false, description },
    ),
  );

const MemberLimitSchema = Type.Object(
  {
    scope: StringEnum(["user", "channel", "thread"] as const, {
      description: "Whose limit: user, channel or thread.",
    }),
    key: Type.String({
      minLength: 1,
      description:
        "The member: a user <platform>:<user id> (telegram:42), a channel <platform>:<channel id> (slack:C0456), a thread its thread key (/status shows it).",
    }),
    period: StringEnum(["day", "month"] as const, { description: "day or month." }),
    ...limitProperties(),
  },
  {
    additionalProperties: false,
    description: "One member's limit, replacing the scope's limit in that period for that member.",
  },
);

export const BudgetsSchema = Obj(
  {
    enabled: Type.Boolean({
      default: true,
      description:
        "Record every model call in the ledger (usage, /usage, switchboard usage) and enforce the caps set here.",
    }),
    timeZone: Type.String({
      default: "UTC",
      description: "The zone days and months are counted in (IANA: Europe/Berlin, America/New_York, UTC).",
    }),
    warnAt: Type.Number({
      default: 0.8,
      minimum: 0,
      exclusiveMaximum: 1,
      description: "Fraction of a cap at which a one-time warning is posted; 0 turns warnings off.",
    }),
    reservationTtlMs: Type.Integer({
      default: 600_000,
      minimum: 10_000,
      description:
        "Lease of a call's reservation (ms): a worker that dies mid-call leaves nothing reserved for longer.",
    }),
    approvalTimeoutMs: Type.Integer({
      default: 600_000,
      minimum: 0,
      description: "How long a run over a cap waits for an admin's ✅ (ms); 0: refuse without asking.",
    }),
    user: scopeLimits("Each person's limits (per person)."),
    channel: scopeLimits("Each channel's limits (per channel, all its threads)."),
    thread: scopeLimits("Each thread's limits (per conversation)."),
    deployment: scopeLimits("The whole deployment's limits (every call together)."),
    members: Type.Array(MemberLimitSchema, {
      default: [],
      description:
        "Limits of single users, channels or threads, replacing the scope's limit for them (same scope, key and period at most once).",
    }),
  },
  "Budgets: caps on what model calls spend (docs/budgets.md).",
);
