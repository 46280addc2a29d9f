/**
 * Switchboard's layout on a Redis Cluster (the test cluster: three primaries, three replicas):
 * threads spread over every primary, the runs queue keeps its keys in one slot of its own, a step
 * that touches two slots is refused (so the contract suites run on the cluster catch one), and a
 * subscriber whose node goes away moves to another node and says so.
 */
import { EventEmitter, once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { RedisConnectionLease } from "../../src/gateway/connection-lease.js";
import { RedisNoticeMemory } from "../../src/gateway/redis-notice-memory.js";
import { RedisRateLimiter } from "../../src/gateway/redis-rate-limiter.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { isCluster, type RedisClient } from "../../src/queue/redis/client.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSubscriber } from "../../src/queue/redis/subscriber.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { RedisWebAuthStore } from "../../src/queue/store/web-auth-redis.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../support/redis.js";
import { inbound } from "./support/harness.js";

const onCluster = redisBackends().includes("cluster");

describe.runIf(onCluster)("on a Redis Cluster", () => {
  const clients: RedisClient[] = [];
  const connect = () => {
    const c = connectBackend("cluster");
    clients.push(c);
    return c;
  };
  afterAll(async () => {
    for (const c of clients) c.disconnect();
  });

  /** Which primary (by port) holds `key` now. */
  async function primaryOf(redis: RedisClient, key: string): Promise<number> {
    await redis.ping(); // CLUSTER commands skip the queue that waits for the client to be ready
    const slot = Number(await redis.cluster("KEYSLOT", key));
    const range = (await redis.cluster("SLOTS")).find(([from, to]) => slot >= from && slot <= to);
    return Number(range?.[2]?.[1]);
  }

  it("spreads threads over every primary and keeps the runs queue in one slot of its own", async () => {
    const redis = connect();
    const prefix = uniquePrefix("sbt-spread");
    const runtime = new RedisRuntime({
      redis,
      prefix,
      store: new RedisSessionStore({ redis, prefix }),
      sinks: new RecordingSinks().factory,
    });
    for (let i = 0; i < 30; i++) {
      const threadKey = `telegram:spread:${i}`;
      expect(await runtime.deliver(inbound(threadKey, `hello ${i}`))).toMatchObject({ status: "queued" });
    }
    if (!isCluster(redis)) throw new Error("not a cluster client");
    const primaries = redis.nodes("master");
    expect(primaries).toHaveLength(3);
    const threadKeysPerNode = await Promise.all(
      primaries.map((n) => n.keys(`${prefix}{telegram:spread:*}:inbox`)),
    );
    // 30 threads over 3 primaries: every primary holds some (each a third of the slots).
    for (const keys of threadKeysPerNode) expect(keys.length).toBeGreaterThan(0);
    expect(threadKeysPerNode.flat()).toHaveLength(30);

    const queueKeys = (
      await Promise.all(primaries.map((n) => n.keys(`{${prefix.slice(0, -1)}-runs}:*`)))
    ).map((keys) => keys.length);
    // Every key of the queue (its job hashes, lists, ids) on one primary: the hash tag's slot.
    expect(queueKeys.filter((n) => n > 0)).toHaveLength(1);
    expect(Math.max(...queueKeys)).toBeGreaterThan(30);
    await runtime.stop();
    await dropKeys(redis, prefix);
    await dropKeys(redis, `{${prefix.slice(0, -1)}-runs}`);
  });

  it("refuses a step over two hash slots, so a cross-slot script or MULTI fails the suites", async () => {
    const redis = connect();
    const prefix = uniquePrefix("sbt-slots");
    const a = `${prefix}{telegram:a}:x`;
    const b = `${prefix}{telegram:b}:x`;
    expect(await primaryOf(redis, a)).not.toBe(0);
    // Refused by the server (CROSSSLOT), or already by the auto-pipelining client, which checks
    // that a command's keys share a slot before it sends it.
    await expect(
      redis.eval("redis.call('SET', KEYS[1], 1) redis.call('SET', KEYS[2], 1)", 2, a, b),
    ).rejects.toThrow(/CROSSSLOT|keys in a pipeline command should belong to the same slot/);
    await expect(redis.multi().set(a, "1").set(b, "1").exec()).rejects.toThrow();
    // One thread's keys share its tag: fine.
    const a2 = `${prefix}{telegram:a}:y`;
    await redis.eval("redis.call('SET', KEYS[1], 1) redis.call('SET', KEYS[2], 1)", 2, a, a2);
    await dropKeys(redis, prefix);
  });

  it("runs the keys outside a thread (connection leases, rate limits, web sign-ins, notices) as single-key commands", async () => {
    const redis = connect();
    const prefix = uniquePrefix("sbt-single");
    const a = new RedisConnectionLease({
      redis,
      name: "telegram:polling:1",
      prefix,
      holderId: "a",
      ttlMs: 60_000,
    });
    const b = new RedisConnectionLease({
      redis,
      name: "telegram:polling:1",
      prefix,
      holderId: "b",
      ttlMs: 60_000,
    });
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await a.renew()).toBe(true);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
    const limiter = new RedisRateLimiter({ redis, prefix, clock: new ManualClock(1_700_000_000_000) });
    const rule = { limit: 2, windowMs: 1000 };
    expect([await limiter.acquire("chat", rule), await limiter.acquire("chat", rule)]).toEqual([0, 0]);
    expect(await limiter.acquire("chat", rule)).toBe(500);
    await limiter.penalize("chat", 5000);
    const auth = new RedisWebAuthStore(redis, prefix);
    await auth.addSignIn("digest", 60_000);
    expect(await auth.redeemSignIn("digest")).toBe(true);
    expect(await auth.redeemSignIn("digest")).toBe(false);
    const notices = new RedisNoticeMemory(redis, prefix);
    expect([
      await notices.claim("telegram:1:0:1", 60_000),
      await notices.claim("telegram:1:0:1", 60_000),
    ]).toEqual([true, false]);
    await dropKeys(redis, prefix);
  });

  it("refuses a runs queue prefix without a hash tag, saying what to write", () => {
    const redis = connect();
    expect(
      () =>
        new RedisRuntime({
          redis,
          prefix: "sbt:",
          queuePrefix: "sbt-runs",
          store: new RedisSessionStore({ redis }),
          sinks: new RecordingSinks().factory,
        }),
    ).toThrow(/has no hash tag.*\{sb-runs\}/);
  });

  it("moves a subscriber whose connection ends to another node and reports the gap", async () => {
    const redis = connect();
    const channel = `${uniquePrefix("sbt-sub")}chan`;
    const name = `sbt-sub-${Math.random().toString(36).slice(2, 8)}`;
    const got: string[] = [];
    let gaps = 0;
    // Each wait resolves on the subscriber's own callback: no polling, no deadline of ours.
    const heard = new EventEmitter();
    const sub = new RedisSubscriber(
      redis,
      [channel],
      {
        message: (_c, text) => {
          got.push(text);
          heard.emit("message");
        },
        resubscribed: () => {
          gaps++;
          heard.emit("gap");
        },
      },
      name,
    );
    await sub.ready;
    const one = once(heard, "message");
    await redis.publish(channel, "one");
    await one;
    if (!isCluster(redis)) throw new Error("not a cluster client");
    // Cut the subscriber's connection wherever it is (as when its node dies).
    const nodes = redis.nodes("all");
    const found: { node: (typeof nodes)[number]; id: string }[] = [];
    for (const node of nodes) {
      const list = String(await node.client("LIST"));
      for (const line of list.split("\n").filter((l) => l.includes(` name=${name} `))) {
        const id = /\bid=(\d+)/.exec(line)?.[1];
        if (id) found.push({ node, id });
      }
    }
    expect(found).toHaveLength(1);
    const [only] = found;
    const gap = once(heard, "gap");
    expect(Number(await only?.node.call("CLIENT", "KILL", "ID", only.id))).toBe(1);
    await gap;
    expect(gaps).toBe(1);
    const two = once(heard, "message");
    await redis.publish(channel, "two");
    await two;
    expect(got).toEqual(["one", "two"]);
    await sub.close();
  });
});
