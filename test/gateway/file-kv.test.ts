/**
 * The embedded mode's key-value store on a file, beyond the shared contract (key-value-store.test.ts):
 * expiry to the millisecond across a restart, compaction, a line cut by a crash, the entry cap.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileKeyValueStore } from "../../src/gateway/file-kv.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function file(): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-kv-"));
  dirs.push(dir);
  return join(dir, "nested", "message-threads.jsonl");
}

describe("FileKeyValueStore", () => {
  it("forgets entries once their time is up, in memory and across a restart", async () => {
    let now = 1_000_000;
    const path = file();
    const a = new FileKeyValueStore(path, { now: () => now });
    await a.set("k", "v", 1000);
    now += 999;
    expect(await a.get("k")).toBe("v");
    now += 1;
    expect(await a.get("k")).toBeUndefined();
    expect(await new FileKeyValueStore(path, { now: () => now }).get("k")).toBeUndefined();
  });

  it("rewrites the file when most of its lines are stale, keeping every live key", async () => {
    const path = file();
    const a = new FileKeyValueStore(path);
    for (let i = 0; i < 3000; i++) await a.set(`k${i % 10}`, `v${i}`, 60_000);
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean).length;
    expect(lines).toBeLessThan(1100);
    const b = new FileKeyValueStore(path);
    for (let i = 0; i < 10; i++) expect(await b.get(`k${i}`)).toBe(`v${2990 + i}`);
  });

  it("skips a line cut short by a crash and keeps appending after it", async () => {
    const path = file();
    const a = new FileKeyValueStore(path);
    await a.set("whole", "1", 60_000);
    appendFileSync(path, '["cut","2",9');
    const b = new FileKeyValueStore(path);
    expect(await b.get("whole")).toBe("1");
    expect(await b.get("cut")).toBeUndefined();
    await b.set("after", "3", 60_000);
    expect(await new FileKeyValueStore(path).get("after")).toBe("3");
  });

  it("keeps at most maxEntries keys, dropping the least recently written", async () => {
    const a = new FileKeyValueStore(file(), { maxEntries: 2 });
    await a.set("a", "1", 60_000);
    await a.set("b", "2", 60_000);
    await a.set("a", "3", 60_000);
    await a.set("c", "4", 60_000);
    expect([await a.get("a"), await a.get("b"), await a.get("c")]).toEqual(["3", undefined, "4"]);
  });
});
