/**
 * The budget ledgers: the shared contract (budget-ledger-contract.ts) on the embedded mode's memory
 * ledger, with and without its file, then what is particular to it: the file a restarted process
 * loads and the damaged file it refuses.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryBudgetLedger } from "../../../src/queue/budgets/memory-ledger.js";
import { budgetLedgerContract } from "./budget-ledger-contract.js";
import { cap, reserveAt, spend, spentOf, T0, usd } from "./budget-ledger-support.js";

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

  it.each([
    ["not JSON", '{"version": 1, "spent": {'],
    ["another shape", '{"version": 1, "spent": []}'],
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
