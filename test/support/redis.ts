/**
 * Redis for tests: the server from the global setup, and a key prefix unique to the caller so
 * that test files running in parallel never see each other's keys or queues.
 *
 * The Redis contract suites run against both backends: the single server and the Redis Cluster the
 * global setup starts (three primaries, three replicas). `redisBackends()` lists the backends a run
 * covers; `SB_TEST_REDIS=cluster` (or `redis`) narrows it to one (`npm run test:cluster`).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";
import { createRedisClient, isCluster, type RedisClient } from "../../src/queue/redis/client.js";

export function redisUrl(): string {
  return inject("redisUrl");
}

/** Seed nodes (`redis://127.0.0.1:<port>`) of the test cluster. */
function redisClusterSeeds(): string[] {
  const seeds = inject("redisCluster");
  if (seeds.length === 0) throw new Error("No test cluster in this run (SB_TEST_REDIS=redis).");
  return seeds;
}

/** A fresh prefix such as `sbt:3f2a9c1e:`; use it for every key and queue name a test creates. */
export function uniquePrefix(label = "sbt"): string {
  return `${label}:${randomUUID().slice(0, 8)}:`;
}

/** A connection usable by BullMQ workers too (`maxRetriesPerRequest: null`). Close it in `afterAll`. */
export function connectRedis(): Redis {
  return new Redis(redisUrl(), { maxRetriesPerRequest: null });
}

/** One server, or the Redis Cluster. */
export type RedisBackend = "redis" | "cluster";

/** The backends the Redis contract suites run against in this run (`SB_TEST_REDIS`, default both). */
export function redisBackends(): RedisBackend[] {
  const only = process.env.SB_TEST_REDIS ?? "both";
  if (only === "redis") return ["redis"];
  if (only === "cluster") return ["cluster"];
  if (only !== "both") throw new Error(`SB_TEST_REDIS is "${only}"; use redis, cluster or both.`);
  return ["redis", "cluster"];
}

/** A connection to `backend` (BullMQ-ready: `maxRetriesPerRequest: null`). Close it after the test. */
export function connectBackend(backend: RedisBackend): RedisClient {
  return backend === "redis"
    ? connectRedis()
    : createRedisClient({ cluster: redisClusterSeeds() }, { maxRetriesPerRequest: null });
}

/**
 * The environment that points a child process (CLI, worker) at `backend`; the other variable is set
 * empty (unset, to Switchboard), since a child may inherit the test runner's environment.
 */
export function backendEnv(backend: RedisBackend): Record<string, string> {
  return backend === "redis"
    ? { REDIS_URL: redisUrl(), REDIS_CLUSTER: "" }
    : { REDIS_URL: "", REDIS_CLUSTER: redisClusterSeeds().join(",") };
}

/**
 * Every key under `prefix`, on every primary of a cluster (KEYS on one node sees only its own slots).
 * For assertions and cleanup in tests only.
 */
async function keysUnder(redis: RedisClient, prefix: string): Promise<string[]> {
  const nodes = isCluster(redis) ? redis.nodes("master") : [redis];
  const all = await Promise.all(nodes.map((n) => n.keys(`${prefix}*`)));
  return all.flat();
}

/** Deletes every key under `prefix` (one DEL per key, so it works on a cluster). */
export async function dropKeys(redis: RedisClient, prefix: string): Promise<void> {
  for (const key of await keysUnder(redis, prefix)) await redis.del(key);
}
