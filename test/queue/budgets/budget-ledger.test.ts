/**
 * The budget ledgers: the shared contract (budget-ledger-contract.ts) on the embedded mode's memory
 * ledger, with and without its file, and on Redis (one server and the cluster), then what is
 * particular to each: the file a restarted process loads and the damaged file it refuses; Redis's
 * keys, all in one hash slot, with whole micro-dollars in them and nothing left behind.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryBudgetLedger } from "../../../src/queue/budgets/memory-ledger.js";
import { RedisBudgetLedger } from "../../../src/queue/budgets/redis-ledger.js";
import type { RedisClient } from "../../../src/queue/redis/client.js";
import { BudgetKeys } from "../../../src/redis-keys.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../../support/redis.js";
import { budgetLedgerContract } from "./budget-ledger-contract.js";
import { at, callId, cap, reserveAt, spend, spentOf, T0, usd } from "./budget-ledger-support.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-budgets-"));
  dirs.push(dir);
  return dir;
}

budgetLedgerContract("memory", async (timeZone) => {
  const ledger = new MemoryBudgetLedger({ timeZone });
  return { ledger, peer: async () => ledger, close: () => ledger.close() };
});

budgetLedgerContract("memory with a file", async (timeZone) => {
  const ledger = new MemoryBudgetLedger({ timeZone, path: join(tempDir(), "data", "budgets.json") });
  return { ledger, peer: async () => ledger, close: () => ledger.close() };
});

for (const backend of redisBackends()) {
  budgetLedgerContract(backend, async (timeZone) => {
    const prefix = uniquePrefix("sbt-budgets");
    const main = connectBackend(backend);
    const peers: RedisClient[] = [];
    return {
      ledger: new RedisBudgetLedger(main, { timeZone, prefix }),
      // Each peer has a connection of its own, as another process would.
      peer: async () => {
        const client = connectBackend(backend);
        peers.push(client);
        return new RedisBudgetLedger(client, { timeZone, prefix });
      },
      close: async () => {
        await dropKeys(main, prefix);
        for (const c of [main, ...peers]) c.disconnect();
      },
    };
  });

  describe(`RedisBudgetLedger on ${backend}`, () => {
    it("keeps every key under {budgets}, money in whole micro-dollars, and drops what it no longer needs", async () => {
      const client = connectBackend(backend);
      const prefix = uniquePrefix("sbt-budgets");
      const keys = new BudgetKeys(prefix);
      const ledger = new RedisBudgetLedger(client, { timeZone: "UTC", prefix });
      try {
        const c = cap({ scope: "channel" });
        const id = callId();
        await ledger.reserve({ callId: id, caps: [c], amount: usd(0.3, 9), now: T0, ttlMs: 1000 });
        const field = `${c.scope}:${c.key}:day:${at("2026-03-10T00:00:00Z")}`;
        expect(await client.hgetall(keys.reserved)).toEqual({
          [`usd:${field}`]: "300000",
          [`tokens:${field}`]: "9",
        });
        expect(await client.zscore(keys.expiries, id)).toBe(String(T0 + 1000));
        await ledger.settle({ callId: id, caps: [c], actual: usd(0.1234567, 4), now: T0, model: "m" });
        expect(await client.hgetall(keys.spent)).toEqual({
          [`usd:${field}`]: "123457",
          [`tokens:${field}`]: "4",
        });
        expect(await client.hlen(keys.reserved)).toBe(0);
        expect(await client.hlen(keys.reservations)).toBe(0);
        expect(await client.pttl(keys.usage("2026-03-10"))).toBeGreaterThan(399 * 86_400_000);
        expect(await client.hgetall(keys.usage("2026-03-10"))).toEqual({
          [`usd:["channel","${c.key}","m"]`]: "123457",
          [`tokens:["channel","${c.key}","m"]`]: "4",
          [`calls:["channel","${c.key}","m"]`]: "1",
        });
        await ledger.setLimit({ ...c, usd: 2.5, tokens: 70 }, T0);
        expect(await client.hgetall(keys.limits)).toEqual({
          [`usd:${field}`]: "2500000",
          [`tokens:${field}`]: "70",
        });
        expect(await ledger.claimOnce("warned", T0, T0 + 5000)).toBe(true);
        expect(await client.zscore(keys.claims, "warned")).toBe(String(T0 + 5000));
        await ledger.resetSpent(c, T0);
        expect(await client.hlen(keys.spent)).toBe(0);
        // A worker that died: its reservation goes at the next step after its lease.
        await ledger.reserve({ callId: callId(), caps: [c], amount: usd(0.3), now: T0, ttlMs: 1000 });
        await ledger.usage([c], T0 + 1000);
        expect(await client.hlen(keys.reservations)).toBe(0);
        expect(await client.zcard(keys.expiries)).toBe(0);
        // Settled call ids after a day, the period's counters and limits 35 days after the period,
        // claims at the next claim after their time.
        await ledger.usage([c], at("2026-04-15T00:00:00Z"));
        expect(await client.zcard(keys.settled)).toBe(0);
        expect(await client.hlen(keys.spent)).toBe(0);
        expect(await client.hlen(keys.limits)).toBe(0);
        expect(await client.zcard(keys.periods)).toBe(0);
        expect(await ledger.claimOnce("next", T0 + 5000, T0 + 6000)).toBe(true);
        expect(await client.zrange(keys.claims, "0", "-1")).toEqual(["next"]);
        const all = [
          keys.spent,
          keys.reserved,
          keys.reservations,
          keys.expiries,
          keys.settled,
          keys.periods,
          keys.limits,
          keys.claims,
        ];
        // One hash slot: the prefix has no braces, so `{budgets}` is every key's hash tag.
        for (const key of [...all, keys.usage("2026-03-10")])
          expect(key).toMatch(/^[^{}]*\{budgets\}:[^{}]*$/);
      } finally {
        await dropKeys(client, prefix);
        client.disconnect();
      }
    });
  });
}

describe("MemoryBudgetLedger's file", () => {
  it("creates its directory, and writes no file until something is spent, and no reservation ever", async () => {
    const dir = tempDir();
    const path = join(dir, "nested", "budgets.json");
    const ledger = new MemoryBudgetLedger({ timeZone: "UTC", path });
    expect(existsSync(join(dir, "nested"))).toBe(true);
    await reserveAt(ledger, [cap()], usd(0.5));
    expect(existsSync(path)).toBe(false);
    await spend(ledger, [cap()], usd(0.5));
    expect(JSON.parse(readFileSync(path, "utf8")).version).toBe(1);
    expect(readdirSync(join(dir, "nested"))).toEqual(["budgets.json"]);
    await ledger.close();
  });

  it("gives a new ledger on the same file the spending and usage rows, but not the last one's reservations", async () => {
    const path = join(tempDir(), "budgets.json");
    const first = new MemoryBudgetLedger({ timeZone: "Europe/Berlin", path });
    const c = cap();
    await spend(first, [c], usd(0.25, 7));
    await reserveAt(first, [c], usd(0.5));
    await first.close();
    const reopened = new MemoryBudgetLedger({ timeZone: "Europe/Berlin", path });
    expect(await reopened.usage([c], T0)).toMatchObject([{ spent: usd(0.25, 7), reserved: usd(0) }]);
    expect(await reopened.exportUsage(T0, T0 + 1)).toEqual([
      { day: "2026-03-10", scope: "user", key: c.key, model: "", usd: 0.25, tokens: 7, calls: 1 },
    ]);
    await spend(reopened, [c], usd(0.75));
    expect(await spentOf(reopened, c)).toEqual(usd(1, 7));
    await reopened.close();
  });

  it("keeps stored limits and claims across a restart, and sweeps them when their time is up", async () => {
    const path = join(tempDir(), "budgets.json");
    const first = new MemoryBudgetLedger({ timeZone: "UTC", path });
    const c = cap();
    await first.setLimit({ ...c, usd: 3 }, T0);
    expect(await first.claimOnce("warned", T0, T0 + 1000)).toBe(true);
    await first.close();
    const file = JSON.parse(readFileSync(path, "utf8"));
    expect(Object.values(file.limits)).toEqual([{ usd: 3_000_000, dropAt: at("2026-04-15T00:00:00Z") }]);
    expect(file.claims).toEqual({ warned: T0 + 1000 });
    const second = new MemoryBudgetLedger({ timeZone: "UTC", path });
    expect(await second.usage([c], T0)).toMatchObject([{ limit: { usd: 3 } }]);
    expect(await second.claimOnce("warned", T0 + 1, T0 + 1000)).toBe(false);
    expect(await second.claimOnce("later", T0 + 1000, T0 + 2000)).toBe(true);
    await second.usage([c], at("2026-04-15T00:00:00Z"));
    await second.resetSpent(c, at("2026-04-15T00:00:00Z"));
    await second.setLimit({ ...c, usd: undefined, tokens: 5 }, at("2026-04-15T00:00:00Z"));
    await second.close();
    const swept = JSON.parse(readFileSync(path, "utf8"));
    expect(Object.values(swept.limits)).toEqual([{ tokens: 5, dropAt: at("2026-05-21T00:00:00Z") }]);
    expect(swept.claims).toEqual({});
  });

  it("loads a file written before limits and claims were kept", async () => {
    const path = join(tempDir(), "budgets.json");
    const c = cap();
    const field = `user:${c.key}:day:${at("2026-03-10T00:00:00Z")}`;
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        spent: { [field]: { usd: 400_000, tokens: 3, dropAt: T0 + 1e10 } },
        usage: {},
      }),
    );
    const ledger = new MemoryBudgetLedger({ timeZone: "UTC", path });
    expect(await ledger.usage([c], T0)).toMatchObject([{ spent: usd(0.4, 3), limit: { usd: 1 } }]);
    expect(await ledger.claimOnce("a", T0, T0 + 1)).toBe(true);
    await ledger.close();
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ limits: {}, claims: { a: T0 + 1 } });
  });

  it.each([
    ["not JSON", '{"version": 1, "spent": {'],
    ["another shape", '{"version": 1, "spent": []}'],
    ["limits of another shape", '{"version": 1, "spent": {}, "usage": {}, "limits": []}'],
  ])("refuses a damaged file (%s) with an error naming it and how to get going again", (_, text) => {
    const path = join(tempDir(), "budgets.json");
    writeFileSync(path, text);
    expect(() => new MemoryBudgetLedger({ timeZone: "UTC", path })).toThrow(path);
    expect(() => new MemoryBudgetLedger({ timeZone: "UTC", path })).toThrow(/damaged .*Move it aside/);
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("the ledgers' time zone", () => {
  it("is checked when a ledger is made", () => {
    expect(() => new MemoryBudgetLedger({ timeZone: "Mars/Olympus_Mons" })).toThrow(
      /Unknown time zone "Mars/,
    );
  });
});
