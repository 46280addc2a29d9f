/**
 * The render journal's primitives: the shared contract (render-journal-contract.ts) on the embedded
 * runtime's memory journal (with and without its files) and on Redis (one server and the cluster),
 * then what is particular to each: Redis's single hash per thread and its posted ids written past
 * auto-pipelining, the memory journal's files that a restarted process loads.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisRenderJournal } from "../../src/queue/redis/render-journal.js";
import { MemoryRenderJournal } from "../../src/queue/state/render-journal.js";
import { RuntimeKeys } from "../../src/redis-keys.js";
import {
  connectBackend,
  connectRedis,
  dropKeys,
  redisBackends,
  redisUrl,
  uniquePrefix,
} from "../support/redis.js";
import { renderJournalContract } from "./render-journal-contract.js";

const T = "telegram:42";
const snapshot = { v: 1, messages: [{ refs: ["7"], text: "Got it." }] };

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-journal-"));
  dirs.push(dir);
  return dir;
}

for (const files of [false, true]) {
  renderJournalContract(files ? "memory, mirrored to files" : "memory", async () => {
    const holders = new Map<string, string>();
    const journal = new MemoryRenderJournal({
      holds: (t, token) => holders.get(t) === token,
      ...(files ? { dir: tempDir() } : {}),
    });
    return {
      journal,
      hold: async (t, token) => {
        holders.set(t, token);
      },
      close: async () => {},
    };
  });
}

for (const backend of redisBackends()) {
  renderJournalContract(backend, async () => {
    const client = connectBackend(backend);
    const prefix = uniquePrefix("sbt-journal");
    const keys = new RuntimeKeys(prefix);
    return {
      journal: new RedisRenderJournal(client, keys),
      hold: async (t, token) => {
        await client.set(keys.lease(t), token, "PX", 60_000);
      },
      close: async () => {
        await dropKeys(client, prefix);
        client.disconnect();
      },
    };
  });
}

describe("RedisRenderJournal", () => {
  const redis = connectRedis();
  const prefix = uniquePrefix("sbt-journal");
  const keys = new RuntimeKeys(prefix);
  afterAll(async () => {
    await dropKeys(redis, prefix);
    await redis.quit();
  });

  it("keeps a thread's records in one hash, gone once nothing is owed", async () => {
    const journal = new RedisRenderJournal(redis, keys);
    await redis.set(keys.lease(T), "tok", "PX", 10_000);
    expect(await journal.put(T, "tok", "run-1", snapshot)).toBe(true);
    expect(await journal.posted(T, "tok", "run-1", "k1", "telegram:42:8")).toBe(true);
    expect(await redis.hlen(keys.renderJournal(T))).toBe(2);
    expect(await journal.drop(T, "tok", "run-1")).toBe(true);
    expect(await redis.exists(keys.renderJournal(T))).toBe(0);
  });

  it("writes a posted id to the socket before returning, even with auto-pipelining (which defers commands)", async () => {
    const piped = new Redis(redisUrl(), { maxRetriesPerRequest: null, enableAutoPipelining: true });
    try {
      await piped.ping();
      const journal = new RedisRenderJournal(piped, keys);
      await redis.set(keys.lease(T), "tok", "PX", 10_000);
      expect(await journal.put(T, "tok", "run-4", snapshot)).toBe(true);
      const socket = (
        piped as unknown as { stream: { write: (chunk: unknown, ...rest: unknown[]) => boolean } }
      ).stream;
      const sent: string[] = [];
      const write = socket.write.bind(socket);
      socket.write = (chunk: unknown, ...rest: unknown[]) => {
        sent.push(String(chunk));
        return write(chunk, ...rest);
      };
      const posted = journal.posted(T, "tok", "run-4", "k9", "telegram:42:99");
      // Same tick: on the wire already (a `put` would still wait for the next loop turn).
      expect(sent.some((c) => c.includes("telegram:42:99"))).toBe(true);
      const put = journal.put(T, "tok", "run-4", { ...snapshot, late: true });
      expect(sent.some((c) => c.includes("late"))).toBe(false);
      expect(await posted).toBe(true);
      expect(await put).toBe(true);
      expect(await journal.drop(T, "tok", "run-4")).toBe(true);
    } finally {
      piped.disconnect();
    }
  });

  it("lists a damaged record without a snapshot, so that its holder drops it", async () => {
    const journal = new RedisRenderJournal(redis, keys);
    await redis.hset(keys.renderJournal(T), "run-2", "{not json");
    expect(await journal.owed(T)).toEqual([{ runId: "run-2", snapshot: undefined, posted: new Map() }]);
  });
});

describe("MemoryRenderJournal", () => {
  it("is fenced by the lease table and mirrored to files a restarted process loads", async () => {
    const dir = tempDir();
    let holder = "tok";
    const journal = new MemoryRenderJournal({ holds: (_t, token) => token === holder, dir });
    expect(await journal.put(T, "other", "run-1", snapshot)).toBe(false);
    expect(await journal.put(T, "tok", "run-1", snapshot)).toBe(true);
    expect(await journal.posted(T, "tok", "run-1", "k1", "telegram:42:8")).toBe(true);
    const restarted = new MemoryRenderJournal({ holds: () => true, dir });
    expect(await restarted.load()).toEqual([T]);
    expect(await restarted.owed(T)).toEqual([
      { runId: "run-1", snapshot, posted: new Map([["k1", "telegram:42:8"]]) },
    ]);
    holder = "next";
    expect(await journal.drop(T, "tok", "run-1")).toBe(false);
    expect(await journal.drop(T, "next", "run-1")).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });
});
