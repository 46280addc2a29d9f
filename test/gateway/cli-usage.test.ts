/**
 * `switchboard usage` as a person runs it: a child process with a config file, reading the ledger
 * the deployment's processes wrote (the embedded mode's `<dataDir>/budgets.json`, or Redis under
 * the key prefix), printing the usage rows as CSV or JSON; a bad argument is a usage error (exit 2)
 * and an unreachable Redis a clear failure (exit 1).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryBudgetLedger } from "../../src/queue/budgets/memory-ledger.js";
import { RedisBudgetLedger } from "../../src/queue/budgets/redis-ledger.js";
import type { BudgetCap, BudgetLedger } from "../../src/queue/budgets/types.js";
import { switchboard } from "../e2e/support/cli-run.js";
import { at, callId, usd } from "../queue/budgets/budget-ledger-support.js";
import { backendEnv, connectBackend, dropKeys, redisBackends, uniquePrefix } from "../support/redis.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-cli-usage-"));
  dirs.push(dir);
  return dir;
}

const ZONE = "Europe/Berlin";
const alice: BudgetCap = { scope: "user", key: "telegram:42", period: "day", usd: 5 };
// A key and a model with a comma and a quote: CSV quotes them (RFC 4180).
const odd: BudgetCap = { scope: "channel", key: 'web:a,"b"', period: "month", tokens: 1_000_000 };
const everyone: BudgetCap = { scope: "deployment", key: "", period: "month", usd: 300 };

/** Three settled calls: two on 2 November in Berlin (one at 00:30 local, 23:30 UTC the day before), one on the 3rd. */
async function record(ledger: BudgetLedger): Promise<void> {
  const calls = [
    {
      caps: [alice, everyone],
      actual: usd(0.1234567, 1000),
      now: at("2026-11-01T23:30:00Z"),
      model: "claude",
    },
    { caps: [alice, odd, everyone], actual: usd(0.5, 2500), now: at("2026-11-02T12:00:00Z"), model: 'm,"x"' },
    { caps: [alice, everyone], actual: usd(1, 10), now: at("2026-11-03T09:00:00Z"), model: "claude" },
  ];
  for (const c of calls) await ledger.settle({ callId: callId(), ...c });
}

const CSV_2_NOV = [
  "day,scope,key,model,usd,tokens,calls",
  '2026-11-02,channel,"web:a,""b""","m,""x""",0.5,2500,1',
  "2026-11-02,deployment,,claude,0.123457,1000,1",
  '2026-11-02,deployment,,"m,""x""",0.5,2500,1',
  "2026-11-02,user,telegram:42,claude,0.123457,1000,1",
  '2026-11-02,user,telegram:42,"m,""x""",0.5,2500,1',
];

function configDir(runtime: string): string {
  const cwd = tempDir();
  writeFileSync(join(cwd, "switchboard.yaml"), `runtime:\n${runtime}budgets:\n  timeZone: ${ZONE}\n`);
  return cwd;
}

describe("switchboard usage, embedded mode", () => {
  const cwd = configDir("  dataDir: ./data\n");

  it("prints the rows of <dataDir>/budgets.json as CSV, days read in budgets.timeZone", async () => {
    const ledger = new MemoryBudgetLedger({ timeZone: ZONE, path: join(cwd, "data", "budgets.json") });
    await record(ledger);
    await ledger.close();

    // 2 November in Berlin starts at 23:00 UTC on the 1st: the call at 23:30 UTC is in it.
    const r = await switchboard(
      ["usage", "--since", "2026-11-02", "--until", "2026-11-03", "--format", "csv"],
      {
        cwd,
      },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${CSV_2_NOV.join("\n")}\n`);

    // 1 November in Berlin ends where the 2nd starts: no row of it.
    const before = await switchboard(["usage", "--since", "2026-11-01", "--until", "2026-11-02"], { cwd });
    expect(before.code).toBe(0);
    expect(before.stdout).toBe("day,scope,key,model,usd,tokens,calls\n");
  });

  it("prints them as one JSON array, from an instant to now by default", async () => {
    const r = await switchboard(["usage", "--since", "2026-11-02T23:30:00Z", "--format", "json"], { cwd });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { day: "2026-11-03", scope: "deployment", key: "", model: "claude", usd: 1, tokens: 10, calls: 1 },
      { day: "2026-11-03", scope: "user", key: "telegram:42", model: "claude", usd: 1, tokens: 10, calls: 1 },
    ]);
  });

  it("prints only the header where nothing was ever recorded, and creates nothing", async () => {
    const empty = configDir("  dataDir: ./data\n");
    const r = await switchboard(["usage", "--since", "7d"], { cwd: empty });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("day,scope,key,model,usd,tokens,calls\n");
    expect(existsSync(join(empty, "data"))).toBe(false);
  });

  it("refuses what it cannot read with a usage error (exit 2) naming the option", async () => {
    const bad = await switchboard(["usage", "--since", "last tuesday"], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since: "last tuesday" is not a date \(2026-11-01\)/);
    expect(bad.stdout).toBe("");

    const cases: [string[], RegExp][] = [
      [["usage"], /--since is required/],
      [["usage", "--since", "2026-02-30"], /--since: "2026-02-30" is no date in the calendar/],
      [["usage", "--since", "2026-11-01T09:00"], /--since: "2026-11-01T09:00" names no zone/],
      [["usage", "--since", "7d", "--until", "soon"], /--until: "soon" is not/],
      [["usage", "--since", "7d", "--format", "xml"], /--format must be one of csv, json \(got "xml"\)/],
      [["usage", "--since", "2026-11-03", "--until", "2026-11-02"], /--until .* must come after --since/],
      [["usage", "--since", "2020-01-01", "--until", "2026-01-01"], /at most 1000 days/],
    ];
    const runs = await Promise.all(cases.map(([args]) => switchboard(args, { cwd })));
    cases.forEach(([args, message], i) => {
      const r = runs[i];
      expect({ args, code: r?.code }).toEqual({ args, code: 2 });
      expect(r?.stderr).toMatch(message);
    });
  });
});

for (const backend of redisBackends()) {
  describe(`switchboard usage, Redis mode (${backend})`, () => {
    it("prints the rows kept under the config's key prefix", async () => {
      const prefix = uniquePrefix("sbt-usage");
      const redis = connectBackend(backend);
      try {
        await record(new RedisBudgetLedger(redis, { timeZone: ZONE, prefix }));
        // Another prefix's spending is another deployment's.
        await record(new RedisBudgetLedger(redis, { timeZone: ZONE, prefix: uniquePrefix("sbt-usage") }));
        const cwd = configDir(`  keyPrefix: "${prefix}"\n`);
        const r = await switchboard(["usage", "--since", "2026-11-02", "--until", "2026-11-03"], {
          cwd,
          env: backendEnv(backend),
        });
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(`${CSV_2_NOV.join("\n")}\n`);
      } finally {
        await dropKeys(redis, prefix);
        redis.disconnect();
      }
    });
  });
}

describe("switchboard usage, Redis unreachable", () => {
  it("says where Redis was expected and exits 1", async () => {
    const cwd = configDir("  redisUrl: redis://127.0.0.1:1\n");
    const r = await switchboard(["usage", "--since", "7d"], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^switchboard usage: Redis at 127\.0\.0\.1:1 is not reachable .*Start Redis/);
    expect(r.stdout).toBe("");
  });
});
