/** The Redis store: the contract, its key layout (one hash tag per conversation), and the feed's resync. */
import { afterAll, describe, expect, it } from "vitest";
import { RedisWebChatStore } from "../../../src/queue/store/web-redis-store.js";
import { connectBackend, connectRedis, dropKeys, redisBackends, uniquePrefix } from "../../support/redis.js";
import { until } from "../support/drive.js";
import { runWebStoreContract } from "./store-contract.js";

const redis = connectRedis();
afterAll(async () => {
  await redis.quit();
});

// On one server and on the Redis Cluster, where a step touching two hash slots fails (CROSSSLOT).
for (const backend of redisBackends()) {
  const client = connectBackend(backend);
  afterAll(async () => {
    await client.quit();
  });
  runWebStoreContract(backend, async () => {
    const prefix = uniquePrefix("sbweb");
    const clock = { now: 1_700_000_000_000 };
    return {
      shared: true,
      durable: true,
      clock,
      open: (limits) => new RedisWebChatStore({ ...limits, redis: client, prefix, now: () => clock.now }),
      cleanup: () => dropKeys(client, prefix),
    };
  });
}

describe("web chat Redis store", () => {
  const bot = { id: "web:bot", name: "Switchboard", isBot: true };

  it("keeps one conversation's keys in one hash slot, the thread's ({web:<id>})", async () => {
    const prefix = uniquePrefix("sbweb");
    const store = new RedisWebChatStore({ redis, prefix });
    const c = await store.create();
    const m = await store.add(c.id, { from: bot, text: "hi", format: "markdown" });
    await store.react(c.id, m.id, "👀", "bot", true);
    await store.rememberClient(c.id, "k", { messageId: m.id, delivered: true });
    await store.typing(c.id, 1000);
    const keys = (await redis.keys(`${prefix}*`)).sort();
    const tag = `{web:${c.id}}`;
    expect(keys).toEqual(
      [
        `${prefix}${tag}:chat`,
        `${prefix}${tag}:chat:clients`,
        `${prefix}${tag}:chat:msgs`,
        `${prefix}${tag}:chat:order`,
        `${prefix}web:conversations`,
        `${prefix}web:typing`,
      ].sort(),
    );
    await store.close();
    await redis.del(...keys);
  });

  it("tells its listeners to read the state again when the feed's connection came back", async () => {
    const prefix = uniquePrefix("sbweb");
    const reader = new RedisWebChatStore({ redis, prefix });
    const writer = new RedisWebChatStore({ redis, prefix });
    const events: string[] = [];
    await reader.subscribe((e) => events.push(e.type));
    // The reader's subscriber names itself after the prefix, so only it is cut off.
    const ids = String(await redis.client("LIST"))
      .split("\n")
      .filter((l) => l.includes(` name=${prefix}web-feed `))
      .map((l) => /\bid=(\d+)/.exec(l)?.[1])
      .filter((x): x is string => Boolean(x));
    expect(ids).toHaveLength(1);
    for (const id of ids) await redis.client("KILL", "ID", id);
    await until(() => events.includes("resync"), 30_000, "the resync after the reconnect");
    const c = await writer.create();
    await until(() => events.includes("conversation"), 30_000, "changes flowing again");
    expect(c.id).toMatch(/^c/);
    await reader.close();
    await writer.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  });
});
