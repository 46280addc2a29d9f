/**
 * The schedule stores: the shared contract (schedule-store-contract.ts) on the embedded mode's file
 * store and on Redis (one server and the cluster), then what is particular to each: the file a
 * restarted process loads and the damaged file it refuses; Redis's keys, all in one hash slot.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileScheduleStore } from "../../../src/queue/schedules/file-store.js";
import { RedisScheduleStore } from "../../../src/queue/schedules/redis-store.js";
import type { ScheduleRecord } from "../../../src/queue/schedules/types.js";
import { ScheduleKeys } from "../../../src/redis-keys.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../../support/redis.js";
import { scheduleStoreContract } from "./schedule-store-contract.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-schedules-"));
  dirs.push(dir);
  return dir;
}

const WIDE = { perThread: 100, perUser: 100 };

function schedule(id: string, createdAt = 1_767_225_600_000): ScheduleRecord {
  return {
    id,
    origin: "chat",
    target: { platform: "telegram", threadKey: "telegram:42", channelId: "42", isDirect: true },
    owner: { id: "7" },
    spec: { kind: "cron", pattern: "0 9 * * *", tz: "UTC" },
    prompt: "Good morning?",
    description: "daily at 09:00",
    createdAt,
    paused: false,
    missed: 0,
    runs: 0,
  };
}

scheduleStoreContract("file", async () => {
  const store = new FileScheduleStore(join(tempDir(), "data", "schedules.json"));
  return { store, close: () => store.close() };
});

for (const backend of redisBackends()) {
  scheduleStoreContract(backend, async () => {
    const client = connectBackend(backend);
    const prefix = uniquePrefix("sbt-schedules");
    const store = new RedisScheduleStore(client, prefix);
    return {
      store,
      close: async () => {
        await store.close();
        await dropKeys(client, prefix);
        client.disconnect();
      },
    };
  });

  describe(`RedisScheduleStore on ${backend}`, () => {
    it("keeps every key under the {schedules} tag, and leaves only the record set and indexes in use", async () => {
      const client = connectBackend(backend);
      const prefix = uniquePrefix("sbt-schedules");
      const keys = new ScheduleKeys(prefix);
      const store = new RedisScheduleStore(client, prefix);
      try {
        const r = schedule("a");
        await store.create(r, WIDE);
        await store.put({ ...schedule("b"), origin: "config" });
        expect(await client.get(keys.record("a"))).toBe(JSON.stringify(r));
        expect(await client.hgetall(keys.thread("telegram:42"))).toEqual({ a: "chat", b: "config" });
        expect(await client.smembers(keys.user("telegram:7"))).toEqual(["a"]);
        expect((await client.smembers(keys.all)).sort()).toEqual(["a", "b"]);
        await store.remove("a");
        await store.remove("b");
        for (const key of [keys.all, keys.thread("telegram:42"), keys.user("telegram:7"), keys.record("a")])
          expect(await client.exists(key)).toBe(0);
      } finally {
        await dropKeys(client, prefix);
        client.disconnect();
      }
    });

    it("puts and removes the same schedule from many callers at once and ends with its indexes right", async () => {
      const client = connectBackend(backend);
      const prefix = uniquePrefix("sbt-schedules");
      const keys = new ScheduleKeys(prefix);
      const store = new RedisScheduleStore(client, prefix);
      try {
        const where = (i: number): ScheduleRecord => ({
          ...schedule("a"),
          target: { platform: "telegram", threadKey: `telegram:${i % 3}`, channelId: "1", isDirect: false },
          owner: { id: `${i % 4}` },
        });
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(where(i))));
        const final = await store.get("a");
        if (!final) throw new Error("put lost the record");
        for (let t = 0; t < 3; t++)
          expect(await client.hkeys(keys.thread(`telegram:${t}`))).toEqual(
            final.target.threadKey === `telegram:${t}` ? ["a"] : [],
          );
        for (let u = 0; u < 4; u++)
          expect(await client.smembers(keys.user(`telegram:${u}`))).toEqual(
            final.owner.id === `${u}` ? ["a"] : [],
          );
        const removed = await Promise.all([store.remove("a"), store.put(where(1)), store.remove("a")]);
        expect(removed.filter((r) => r === true).length).toBeGreaterThanOrEqual(1);
        const left = await store.get("a");
        const listed = (await Promise.all([0, 1, 2].map((t) => store.listByThread(`telegram:${t}`)))).flat();
        expect(listed).toEqual(left ? [left] : []);
      } finally {
        await dropKeys(client, prefix);
        client.disconnect();
      }
    });
  });
}

describe("FileScheduleStore", () => {
  it("creates its directory and starts empty without a file, writing none until a change", async () => {
    const path = join(tempDir(), "nested", "data", "schedules.json");
    const store = new FileScheduleStore(path);
    expect(await store.listAll()).toEqual([]);
    expect(existsSync(join(path, ".."))).toBe(true);
    expect(existsSync(path)).toBe(false);
    await store.close();
  });

  it("has each change in the file when the change resolves, and leaves no temporary file", async () => {
    const dir = tempDir();
    const path = join(dir, "schedules.json");
    const store = new FileScheduleStore(path);
    await store.create(schedule("a"), WIDE);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ version: 1, schedules: [schedule("a")] });
    await store.claimOccurrence("a", 100, { occurrence: 100, firedAt: 101, status: "queued" }, 0);
    expect(JSON.parse(readFileSync(path, "utf8")).schedules[0].lastOccurrence).toBe(100);
    await Promise.all([store.put(schedule("b")), store.put(schedule("c")), store.remove("a")]);
    expect(JSON.parse(readFileSync(path, "utf8")).schedules.map((r: ScheduleRecord) => r.id)).toEqual([
      "b",
      "c",
    ]);
    expect(readdirSync(dir)).toEqual(["schedules.json"]);
    await store.close();
  });

  it("gives a new instance on the same file everything the last one had", async () => {
    const path = join(tempDir(), "schedules.json");
    const store = new FileScheduleStore(path);
    await store.create(schedule("a", 3), WIDE);
    await store.create(schedule("b", 1), WIDE);
    await store.put({ ...schedule("c", 2), origin: "config" });
    await store.claimOccurrence("a", 100, { occurrence: 100, firedAt: 101, status: "queued", runId: "r" }, 2);
    await store.updateRun("a", 100, { status: "answered", delivery: "shown" });
    await store.setPaused("b", true, "thread gone");
    await store.remove("c");
    const before = await store.listAll();
    await store.close();

    const reopened = new FileScheduleStore(path);
    expect(await reopened.listAll()).toEqual(before);
    expect(await reopened.findByRun("telegram:42", "r")).toEqual(before.find((r) => r.id === "a"));
    expect(await reopened.create(schedule("d"), { perThread: 2, perUser: 100 })).toEqual({
      ok: false,
      reason: "thread",
      limit: 2,
    });
    await reopened.close();
  });

  it.each([
    ["not JSON", '{"version": 1, "schedules": ['],
    ["another shape", '{"jobs": []}'],
    ["a schedule without an id", '{"version": 1, "schedules": [{"prompt": "hi"}]}'],
  ])("refuses a damaged file (%s) with an error naming it and how to get going again", (_, text) => {
    const path = join(tempDir(), "schedules.json");
    writeFileSync(path, text);
    expect(() => new FileScheduleStore(path)).toThrow(path);
    expect(() => new FileScheduleStore(path)).toThrow(/damaged .*Move it aside/);
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});
