/**
 * src/redis-keys.ts is the one place that spells a Redis key and the default prefix (`sb:`), so a
 * key's name is found, and kept byte for byte, in one file. Comments may show an example key.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ApprovalKeys,
  accessNoticeKey,
  BudgetKeys,
  connectionLeaseKey,
  DEFAULT_KEY_PREFIX,
  defaultQueuePrefix,
  discordMessageKey,
  discordThreadKey,
  mcpToolListKey,
  RuntimeKeys,
  rateLimitKey,
  ScheduleKeys,
  SessionKeys,
  slackBotThreadKey,
  telegramMessageKey,
  WebChatKeys,
} from "../../src/redis-keys.js";

const src = join(import.meta.dirname, "..", "..", "src");
const REGISTRY = "redis-keys.ts";

/** Every .ts and .lua file under src/, relative to it. */
function sources(): string[] {
  return readdirSync(src, { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".ts") || p.endsWith(".lua"))
    .map((p) => relative(src, join(src, p)));
}

/** A line of a doc comment or a line comment (TypeScript or Lua). */
const isComment = (line: string) => /^\s*(\*|\/\/|\/\*|--)/.test(line);

describe("the key registry", () => {
  it("is the only file in src/ that spells the default prefix outside comments", () => {
    const found: string[] = [];
    for (const file of sources()) {
      if (file === REGISTRY) continue;
      readFileSync(join(src, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/\bsb:/.test(line) && !isComment(line)) found.push(`src/${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(
      found,
      "A Redis key or the default prefix is spelled outside src/redis-keys.ts. Add a builder for the key " +
        "there (beside the others of its owner) and call it; use DEFAULT_KEY_PREFIX for the default.",
    ).toEqual([]);
  });

  it("names every key as before, so data already in Redis is found", () => {
    const p = DEFAULT_KEY_PREFIX;
    const runtime = new RuntimeKeys();
    expect(runtime.thread("t")).toEqual({
      inbox: "sb:{t}:inbox",
      inflight: "sb:{t}:inflight",
      lease: "sb:{t}:lease",
      wake: "sb:{t}:wake",
      seq: "sb:{t}:seq",
      control: "sb:{t}:control",
    });
    expect([
      runtime.renderJournal("t"),
      runtime.dedupe("e"),
      runtime.appended("t", "e"),
      runtime.pending,
      runtime.sweepLock,
      runtime.controlChannel,
      runtime.bullPrefix,
      new RuntimeKeys(p, { cluster: true }).bullPrefix,
      defaultQueuePrefix("x:", false),
    ]).toEqual([
      "sb:{t}:render",
      "sb:dedupe:e",
      "sb:{t}:appended:e",
      "sb:pending",
      "sb:sweep-lock",
      "sb:control",
      "sb",
      "{sb-runs}",
      "x",
    ]);
    const sessions = new SessionKeys();
    expect([
      sessions.meta("t"),
      sessions.session("t", "s"),
      sessions.index("t", "s"),
      sessions.leaves("t"),
      sessions.sessions("t"),
      sessions.lease("t"),
      sessions.threads(),
    ]).toEqual([
      "sb:{t}:meta",
      "sb:{t}:s:s",
      "sb:{t}:s:s:idx",
      "sb:{t}:leaves",
      "sb:{t}:sessions",
      "sb:{t}:lease",
      "sb:threads",
    ]);
    const web = new WebChatKeys();
    expect([
      web.chat("web:c"),
      web.messages("web:c"),
      web.order("web:c"),
      web.clients("web:c"),
      web.file("web:c", "f"),
      web.conversations,
      web.typing,
      web.events,
      web.feed,
      web.signIn("d"),
      web.session("d"),
    ]).toEqual([
      "sb:{web:c}:chat",
      "sb:{web:c}:chat:msgs",
      "sb:{web:c}:chat:order",
      "sb:{web:c}:chat:clients",
      "sb:{web:c}:file:f",
      "sb:web:conversations",
      "sb:web:typing",
      "sb:web:events",
      "sb:web-feed",
      "sb:web:signin:d",
      "sb:web:session:d",
    ]);
    const approvals = new ApprovalKeys();
    expect([
      approvals.channel,
      approvals.request("t", "i"),
      approvals.pending("t"),
      approvals.grants("t"),
      approvals.threadOf("i"),
      approvals.byMessage("m"),
    ]).toEqual([
      "sb:approvals",
      "sb:{t}:approval:i",
      "sb:{t}:approvals",
      "sb:{t}:approval-grants",
      "sb:approval-id:i",
      "sb:approval-msg:m",
    ]);
    const schedules = new ScheduleKeys();
    expect([
      schedules.record("i"),
      schedules.thread("t"),
      schedules.user("telegram:u"),
      schedules.all,
    ]).toEqual([
      "sb:{schedules}:rec:i",
      "sb:{schedules}:thread:t",
      "sb:{schedules}:user:telegram:u",
      "sb:{schedules}:all",
    ]);
    const budgets = new BudgetKeys();
    expect([
      budgets.spent,
      budgets.reserved,
      budgets.reservations,
      budgets.expiries,
      budgets.settled,
      budgets.periods,
      budgets.limits,
      budgets.claims,
      budgets.usage("2026-03-29"),
    ]).toEqual([
      "sb:{budgets}:spent",
      "sb:{budgets}:reserved",
      "sb:{budgets}:res",
      "sb:{budgets}:res-expiry",
      "sb:{budgets}:settled",
      "sb:{budgets}:periods",
      "sb:{budgets}:limits",
      "sb:{budgets}:claims",
      "sb:{budgets}:usage:2026-03-29",
    ]);
    expect([
      rateLimitKey(p, "c"),
      connectionLeaseKey(p, "n"),
      accessNoticeKey(p, "t"),
      mcpToolListKey(p, "s", "w"),
      discordThreadKey(p, "t", "n"),
      discordMessageKey(p, "c", "m"),
      telegramMessageKey(p, 1, 2),
      slackBotThreadKey(p, "t"),
    ]).toEqual([
      "sb:ratelimit:c",
      "sb:{connection:n}:lease",
      "sb:{t}:access-notice",
      "sb:mcp:tools:v1:s:w",
      "sb:{t}:n",
      "sb:discord:msg:c:m",
      "sb:telegram:msg:1:2",
      "sb:{t}:slack-bot-thread",
    ]);
  });
});
