import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import type { RedisClient } from "../../src/queue/redis/client.js";
import { LeaseLostError } from "../../src/queue/store/errors.js";
import { ACTIVITY_RESOLUTION_MS, RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { connectBackend, connectRedis, redisBackends, uniquePrefix } from "../support/redis.js";
import { assistant, conversation, user, warnCollector } from "./fixtures.js";
import { describeSessionStoreContract } from "./store-contract.js";

let redis: Redis;
beforeAll(() => {
  redis = connectRedis();
});
afterAll(async () => {
  await redis.quit();
});

/** A clock that moves 1 ms forward on every reading. */
function tickingClock(): () => number {
  let t = 1_700_000_000_000;
  return () => ++t;
}

// On one server and on the Redis Cluster, where a step touching two hash slots fails (CROSSSLOT).
for (const backend of redisBackends()) {
  let redis: RedisClient;
  beforeAll(() => {
    redis = connectBackend(backend);
  });
  afterAll(async () => {
    await redis.quit();
  });
  describeSessionStoreContract(backend, async () => {
    const prefix = uniquePrefix("sbt-sess");
    const logger = warnCollector();
    const now = tickingClock();
    const store = new RedisSessionStore({ redis, prefix, logger, now });
    return {
      store,
      warnings: logger.messages,
      holdLease: async (threadKey, token) => {
        const key = store.keys.lease(threadKey);
        await redis.set(key, token);
        return { key, token };
      },
      injectGarbage: async (threadKey, sessionId, line) => {
        await redis.rpush(store.keys.session(threadKey, sessionId), line);
      },
      reopen: async () => new RedisSessionStore({ redis, prefix, logger, now }),
      dispose: async () => {
        await store.close();
      },
    };
  });
}

describe("RedisSessionStore", () => {
  it("keeps a thread's last activity to within ACTIVITY_RESOLUTION_MS across appends", async () => {
    let t = 1_800_000_000_000;
    const store = new RedisSessionStore({ redis, prefix: uniquePrefix("sbt-sess"), now: () => t });
    const thread = "telegram:activity:0";
    const header = await store.createSession(thread);
    const activity = async () =>
      (await store.listThreads()).find((x) => x.threadKey === thread)?.lastActivityAt;
    const chain = new EntryChain(null);
    const say = (text: string) =>
      store.append(thread, header.id, [chain.add({ type: "message", message: user(text) })]);
    t += 10;
    await say("one");
    expect(await activity()).toBe(t);
    const first = t;
    t += ACTIVITY_RESOLUTION_MS - 1;
    await say("two");
    expect(await activity()).toBe(first);
    t += 1;
    await say("three");
    expect(await activity()).toBe(t);
  });

  it("stores a batch once when the same append arrives again (ioredis resends after Redis died before replying)", async () => {
    const store = new RedisSessionStore({ redis, prefix: uniquePrefix("sbt-sess") });
    const thread = "telegram:resend:0";
    const header = await store.createSession(thread);
    const chain = new EntryChain(null);
    chain.add({ type: "message", message: user("hello") });
    chain.add({ type: "message", message: assistant("hi", { usage: { input: 10, output: 5, cost: 0.5 } }) });
    const first = await store.append(thread, header.id, chain.entries);
    const again = await store.append(thread, header.id, chain.entries);
    expect(again.leafId).toBe(first.leafId);
    expect(again.entries.map((e) => e.id)).toEqual(first.entries.map((e) => e.id));
    const all = await store.readAll(thread, header.id);
    expect(all.entries).toHaveLength(2);
    const meta = await store.getThreadMeta(thread);
    expect(meta?.usage.input).toBe(10);
  });

  it("creates a session once when the create arrives again (ioredis resends after Redis died before replying)", async () => {
    // Every script runs twice and the caller sees the second reply: a resend of a command that the
    // node ran before it died, and whose reply never came.
    const resending = new Proxy(redis, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop, target);
        if (typeof v !== "function") return v;
        const f = (v as (...a: unknown[]) => Promise<unknown>).bind(target);
        if (prop !== "evalsha" && prop !== "eval") return f;
        return async (...a: unknown[]) => {
          await f(...a); // NOSCRIPT throws here, and the caller sends the script itself
          return f(...a);
        };
      },
    });
    const store = new RedisSessionStore({ redis: resending, prefix: uniquePrefix("sbt-sess") });
    const thread = "telegram:resend:1";
    const created = await store.startSession(thread, { model: "scripted/paced-1" });
    const branch = await store.readBranch(thread);
    expect(branch?.header.id).toBe(created.header.id);
    expect(branch?.entries.map((e) => e.type)).toEqual(["model_change"]);
    expect(branch?.leafId).toBe(created.leafId);
    expect((await store.getThreadMeta(thread))?.currentSessionId).toBe(created.header.id);
  });

  it("reads a branch of a 10,000-entry session by fetching only the entries after its compaction", async () => {
    const store = new RedisSessionStore({ redis, prefix: uniquePrefix("sbt-sess") });
    const thread = "web:big";
    const header = await store.createSession(thread);
    const chain = new EntryChain(null);
    for (let i = 0; i < 4990; i++) {
      chain.add({ type: "message", message: user(`question ${i}`) });
      chain.add({ type: "message", message: assistant(`answer ${i}`) });
    }
    const kept = chain.entries[9_950] as SessionEntry;
    chain.add({ type: "compaction", summary: "all of it", firstKeptEntryId: kept.id, tokensBefore: 150_000 });
    for (let i = 0; i < 19; i++) chain.add({ type: "message", message: user(`after ${i}`) });
    expect(chain.entries).toHaveLength(10_000);
    for (let i = 0; i < chain.entries.length; i += 2500)
      await store.append(thread, header.id, chain.entries.slice(i, i + 2500));

    store.stats.elementsFetched = 0;
    const branch = await store.readBranch(thread);
    // 30 kept + the compaction + 19 after it + the header + the answer before the kept range (the
    // model it names is still in force): 52 list elements, not 10,001.
    expect(branch?.entries).toHaveLength(50);
    expect(store.stats.elementsFetched).toBe(52);
    expect(branch?.inherited).toEqual({
      model: { provider: "anthropic", modelId: "claude-test" },
      thinkingLevel: "off",
    });
    const messages = buildSessionContext(branch?.entries ?? []).messages;
    expect(messages[0]).toMatchObject({ role: "compactionSummary", summary: "all of it" });
    expect(messages).toHaveLength(1 + 30 + 19);

    store.stats.elementsFetched = 0;
    await store.readAll(thread, header.id);
    expect(store.stats.elementsFetched).toBe(10_001);
  });

  it("keeps settings set before the kept range of a session indexed by an older version (no carriers)", async () => {
    const store = new RedisSessionStore({ redis, prefix: uniquePrefix("sbt-sess") });
    const thread = "web:legacy";
    const header = await store.createSession(thread, { model: "anthropic/claude-x", thinkingLevel: "high" });
    const chain = new EntryChain((await store.readBranch(thread))?.leafId ?? null);
    for (let i = 0; i < 3; i++) {
      chain.add({ type: "message", message: user(`q${i}`) });
      chain.add({ type: "message", message: assistant(`a${i}`) });
    }
    const kept = chain.entries[4] as SessionEntry;
    chain.add({ type: "compaction", summary: "s", firstKeptEntryId: kept.id, tokensBefore: 1 });
    await store.append(thread, header.id, chain.entries);
    // What an older version stored: `<list index>\t<parentId>\t<firstKeptEntryId>`, no carriers.
    const idx = store.keys.index(thread, header.id);
    const values = await redis.hgetall(idx);
    for (const [id, v] of Object.entries(values))
      await redis.hset(idx, id, v.split("\t").slice(0, 3).join("\t"));
    const after = new EntryChain(chain.leafId);
    after.add({ type: "message", message: user("new") });
    await store.append(thread, header.id, after.entries);

    const branch = await store.readBranch(thread);
    expect(branch?.entries[0]?.id).toBe(kept.id);
    expect(branch?.inherited).toEqual({
      thinkingLevel: "high",
      model: { provider: "anthropic", modelId: "claude-test" },
    });
    // The new entry's index value says its carriers are unknown, so reads fall back to the whole session.
    expect((await redis.hget(idx, after.entries[0]?.id as string))?.split("\t").slice(3)).toEqual(["?", "?"]);
  });

  it("keeps the thread's keys under one hash tag and the prefix", async () => {
    const prefix = uniquePrefix("sbt-sess");
    const store = new RedisSessionStore({ redis, prefix });
    const thread = "slack:T1:C2:1712.33";
    const header = await store.createSession(thread);
    await store.append(thread, header.id, conversation(1));
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.sort()).toEqual(
      [
        `${prefix}threads`,
        `${prefix}{${thread}}:meta`,
        `${prefix}{${thread}}:leaves`,
        `${prefix}{${thread}}:sessions`,
        `${prefix}{${thread}}:s:${header.id}`,
        `${prefix}{${thread}}:s:${header.id}:idx`,
      ].sort(),
    );
    expect(await redis.type(`${prefix}{${thread}}:s:${header.id}`)).toBe("list");
    expect(await redis.llen(`${prefix}{${thread}}:s:${header.id}`)).toBe(3);
  });

  it("fences on the lease key the queue runtime writes", async () => {
    const prefix = uniquePrefix("sbt-sess");
    const store = new RedisSessionStore({ redis, prefix });
    const thread = "telegram:1:0:5";
    const header = await store.createSession(thread);
    const fence = { key: `${prefix}{${thread}}:lease`, token: "tok-1" };
    // No lease at all (expired) is a lost lease too.
    await expect(store.append(thread, header.id, conversation(1), { fence })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await redis.set(fence.key, "tok-1", "PX", 10_000);
    await store.append(thread, header.id, conversation(1), { fence });
    expect(await redis.llen(store.keys.session(thread, header.id))).toBe(3);
  });

  it("works after Redis forgot its scripts", async () => {
    const store = new RedisSessionStore({ redis, prefix: uniquePrefix("sbt-sess") });
    const header = await store.createSession("web:flush");
    await redis.script("FLUSH");
    await store.append("web:flush", header.id, conversation(1));
    expect((await store.readBranch("web:flush"))?.entries).toHaveLength(2);
  });
});
