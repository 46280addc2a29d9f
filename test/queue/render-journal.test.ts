/**
 * The render journal's primitives: fenced by the lease token on Redis (one script per write, in the
 * thread's hash slot) and in the embedded runtime's memory, whose files let a restarted process
 * find what the chat is still owed.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisRenderJournal } from "../../src/queue/redis/render-journal.js";
import { MemoryRenderJournal } from "../../src/queue/state/render-journal.js";
import { RuntimeKeys } from "../../src/redis-keys.js";
import { dropPrefix } from "../faults/support.js";
import { connectBackend, connectRedis, redisBackends, redisUrl, uniquePrefix } from "../support/redis.js";

const T = "telegram:42";
const snapshot = { v: 1, messages: [{ refs: ["7"], text: "Got it." }] };

describe("RedisRenderJournal", () => {
  const redis = connectRedis();
  const prefix = uniquePrefix("sbt-journal");
  const keys = new RuntimeKeys(prefix);
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  it("writes and clears only under the lease holder's token", async () => {
    const journal = new RedisRenderJournal(redis, keys);
    expect(await journal.put(T, "tok", "run-1", snapshot)).toBe(false);
    await redis.set(keys.lease(T), "tok", "PX", 10_000);
    expect(await journal.put(T, "other", "run-1", snapshot)).toBe(false);
    expect(await journal.put(T, "tok", "run-1", snapshot)).toBe(true);
    expect(await journal.owed(T)).toEqual([{ runId: "run-1", snapshot, posted: new Map() }]);
    expect(await journal.drop(T, "other", "run-1")).toBe(false);
    expect(await journal.owed(T)).toHaveLength(1);
    expect(await journal.drop(T, "tok", "run-1")).toBe(true);
    expect(await journal.owed(T)).toEqual([]);
  });

  it("keeps each posted id beside its run's snapshot, fenced, and drops them with the run", async () => {
    const journal = new RedisRenderJournal(redis, keys);
    await redis.set(keys.lease(T), "tok", "PX", 10_000);
    expect(await journal.posted(T, "other", "run-3", "k1", "telegram:42:8")).toBe(false);
    expect(await journal.put(T, "tok", "run-3", snapshot)).toBe(true);
    expect(await journal.posted(T, "tok", "run-3", "k1", "telegram:42:8")).toBe(true);
    expect(await journal.posted(T, "tok", "run-30", "k2", "telegram:42:9")).toBe(true);
    const owed = await journal.owed(T);
    expect(owed.find((r) => r.runId === "run-3")).toEqual({
      runId: "run-3",
      snapshot,
      posted: new Map([["k1", "telegram:42:8"]]),
    });
    expect(await journal.drop(T, "tok", "run-3")).toBe(true);
    // Only run-3's: another run whose id starts the same keeps its own.
    expect(await journal.owed(T)).toEqual([
      { runId: "run-30", snapshot: undefined, posted: new Map([["k2", "telegram:42:9"]]) },
    ]);
    expect(await journal.drop(T, "tok", "run-30")).toBe(true);
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

describe.each(redisBackends())("RedisRenderJournal's posted ids (%s)", (backend) => {
  it("are fenced, listed with their run and dropped with it, also when written past the pipeline", async () => {
    const client = connectBackend(backend);
    const prefix = uniquePrefix("sbt-journal-posted");
    const k = new RuntimeKeys(prefix);
    try {
      const journal = new RedisRenderJournal(client, k);
      await client.set(k.lease(T), "tok", "PX", 10_000);
      expect(await journal.posted(T, "other", "run-5", "k5", "telegram:42:5")).toBe(false);
      expect(await journal.put(T, "tok", "run-5", snapshot)).toBe(true);
      expect(await journal.posted(T, "tok", "run-5", "k5", "telegram:42:5")).toBe(true);
      expect(await journal.owed(T)).toEqual([
        { runId: "run-5", snapshot, posted: new Map([["k5", "telegram:42:5"]]) },
      ]);
      expect(await journal.drop(T, "tok", "run-5")).toBe(true);
      expect(await journal.owed(T)).toEqual([]);
    } finally {
      await dropPrefix(client, prefix);
      client.disconnect();
    }
  });
});

describe("MemoryRenderJournal", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("is fenced by the lease table and mirrored to files a restarted process loads", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sb-journal-"));
    dirs.push(dir);
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
