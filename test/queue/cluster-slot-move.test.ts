/**
 * A Redis Cluster moves a slot (a failover promotes a replica, an operator reshards) while a process
 * sends commands for two slots of one node in the same tick. Each command must follow the move by
 * itself: ioredis 6's auto-pipelining batched such commands and, when their MOVED replies differed,
 * handed the MOVED to the caller (ioredis issue #2075), which is why `createRedisClient` never
 * auto-pipelines on a cluster. A cluster of its own (three primaries, no replicas), so the shared
 * test cluster's slots stay where they are.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisClient, type RedisClient } from "../../src/queue/redis/client.js";
import { type LocalCluster, startLocalCluster } from "../support/redis-cluster.js";

describe("a cluster connection while a slot moves", () => {
  let cluster: LocalCluster | undefined;
  let client: RedisClient | undefined;
  beforeAll(async () => {
    cluster = await startLocalCluster({ primaries: 3, replicasPerPrimary: 0 });
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it("follows the move for every command of the tick, and fails none with MOVED", async () => {
    if (!cluster) throw new Error("no cluster");
    const redis = createRedisClient({ cluster: cluster.seeds }, { maxRetriesPerRequest: null });
    client = redis;
    await redis.ping(); // CLUSTER commands skip the queue that waits for the client to be ready
    const slots = await redis.cluster("SLOTS");
    const portOf = async (key: string) => {
      const slot = Number(await redis.cluster("KEYSLOT", key));
      const range = slots.find(([from, to]) => slot >= from && slot <= to);
      return { slot, port: Number(range?.[2]?.[1]) };
    };
    // Two keys in different slots of the same primary.
    const stay = "{slot-move-a}";
    const here = await portOf(stay);
    let moving = "";
    for (let i = 0; !moving; i++) {
      const at = await portOf(`{slot-move-b${i}}`);
      if (at.port === here.port && at.slot !== here.slot) moving = `{slot-move-b${i}}`;
    }
    const from = await portOf(moving);
    // The client learns where both live.
    expect(await redis.get(stay)).toBeNull();
    expect(await redis.get(moving)).toBeNull();

    // The (empty) slot of `moving` goes to another primary; every node is told.
    const top = await cluster.topology();
    const target = top.find((n) => n.role === "primary" && n.port !== from.port);
    if (!target) throw new Error("no other primary");
    const nodes = top.map((n) => new Redis(n.port, "127.0.0.1", { lazyConnect: true }));
    try {
      for (const node of nodes) await node.call("CLUSTER", "SETSLOT", from.slot, "NODE", target.id);
    } finally {
      for (const node of nodes) node.disconnect();
    }

    // Both in one tick: the moved one is answered MOVED by its old node and must follow it.
    const [a, b] = await Promise.allSettled([redis.incr(stay), redis.incr(moving)]);
    expect(a).toEqual({ status: "fulfilled", value: 1 });
    expect(b).toEqual({ status: "fulfilled", value: 1 });
    const direct = new Redis(target.port, "127.0.0.1");
    try {
      expect(await direct.get(moving)).toBe("1");
    } finally {
      direct.disconnect();
    }
  });
});
