/**
 * The `budgets:` section: its defaults, a full section as written, and what a mistake in it gets
 * (each problem named by its field, one sentence on how to fix it); `switchboard check` as a child
 * process refuses a bad section the same way (exit 2).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatIssue, parseConfigText } from "../../src/gateway/config/index.js";
import { switchboard } from "../e2e/support/cli-run.js";

const dir = mkdtempSync(join(tmpdir(), "sb-config-budgets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const load = (yaml: string) => parseConfigText(yaml, { env: {}, baseDir: dir });

function budgets(yaml: string) {
  const r = load(yaml);
  if (!r.ok) throw new Error(r.issues.map((i) => formatIssue(i)).join("\n"));
  return r.config.budgets;
}

function issues(yaml: string): string[] {
  const r = load(yaml);
  if (r.ok) throw new Error("expected the config to be rejected");
  return r.issues.map((i) => formatIssue({ ...i, line: undefined }));
}

describe("budgets", () => {
  it("is always there, with defaults: on, UTC, warnings at 80 %, no caps", () => {
    expect(budgets("")).toEqual({
      enabled: true,
      timeZone: "UTC",
      warnAt: 0.8,
      reservationTtlMs: 600_000,
      approvalTimeoutMs: 600_000,
      members: [],
    });
  });

  it("takes every scope's day and month limits and members' limits, and a time zone in any case as its IANA name", () => {
    const b = budgets(
      [
        "budgets:",
        "  timeZone: europe/berlin",
        "  warnAt: 0",
        "  reservationTtlMs: 10000",
        "  approvalTimeoutMs: 0",
        "  user: { day: { usd: 2, tokens: 500000 }, month: { usd: 20 } }",
        "  channel: { month: { usd: 50 } }",
        "  thread: { day: { tokens: 200000 } }",
        "  deployment: { month: { usd: 300 } }",
        "  members:",
        '    - { scope: user, key: "slack:U123", period: month, usd: 100 }',
        '    - { scope: user, key: "slack:U123", period: day, tokens: 0 }',
        '    - { scope: channel, key: "telegram:-100", period: month, usd: 0.5 }',
      ].join("\n"),
    );
    expect(b).toEqual({
      enabled: true,
      timeZone: "Europe/Berlin",
      warnAt: 0,
      reservationTtlMs: 10_000,
      approvalTimeoutMs: 0,
      user: { day: { usd: 2, tokens: 500_000 }, month: { usd: 20 } },
      channel: { month: { usd: 50 } },
      thread: { day: { tokens: 200_000 } },
      deployment: { month: { usd: 300 } },
      members: [
        { scope: "user", key: "slack:U123", period: "month", usd: 100 },
        { scope: "user", key: "slack:U123", period: "day", tokens: 0 },
        { scope: "channel", key: "telegram:-100", period: "month", usd: 0.5 },
      ],
    });
  });

  it("names each mistake by its field: a zone, a limit of nothing, a deployment member, a repeated member, out-of-range numbers", () => {
    const out = issues(
      [
        "budgets:",
        "  timeZone: Mars/Olympus",
        "  warnAt: 1",
        "  reservationTtlMs: 5000",
        "  approvalTimeoutMs: -1",
        "  user: { day: {} }",
        "  deployment: { month: { usd: -1, tokens: 1.5 } }",
        "  thread: { week: { usd: 1 } }",
        "  members:",
        '    - { scope: deployment, key: "x", period: day, usd: 1 }',
        '    - { scope: user, key: "", period: day, usd: 1 }',
        '    - { scope: user, key: "telegram:42", period: month }',
        '    - { scope: user, key: "telegram:42", period: day, usd: 1 }',
        '    - { scope: user, key: "telegram:42", period: day, tokens: 5 }',
      ].join("\n"),
    );
    expect(out).toEqual(
      expect.arrayContaining([
        'budgets.timeZone: "Mars/Olympus" is not a time zone: use an IANA name such as Europe/Berlin, America/New_York or UTC',
        "budgets.warnAt: must be < 1 (got 1)",
        "budgets.reservationTtlMs: must be >= 10000 (got 5000)",
        "budgets.approvalTimeoutMs: must be >= 0 (got -1)",
        "budgets.user.day: name usd, tokens or both",
        "budgets.deployment.month.usd: must be >= 0 (got -1)",
        "budgets.deployment.month.tokens: must be a whole number (got 1.5)",
        expect.stringMatching(/^budgets\.thread\.week: unknown field/),
        'budgets.members[0].scope: must be one of "user", "channel", "thread" (got "deployment")',
        "budgets.members[1].key: must not be empty",
        "budgets.members[2]: name usd, tokens or both",
        'budgets.members[4]: repeats the day limit of user "telegram:42" of budgets.members[3]',
      ]),
    );
  });

  it("`switchboard check` refuses a bad budgets section, naming the field and its line (exit 2, a config problem)", async () => {
    const cwd = mkdtempSync(join(dir, "check-"));
    writeFileSync(join(cwd, "switchboard.yaml"), "budgets:\n  timeZone: UTC\n  channel:\n    month: {}\n");
    const r = await switchboard(["check", "--offline", "--port", "0"], { cwd });
    expect(r.stdout + r.stderr).toMatch(/✗ budgets\.channel\.month \(line 4\): name usd, tokens or both/);
    expect(r.code).toBe(2);
  });
});
