/**
 * Where Redis is, from the `runtime` slice: one server (`redisUrl`, `$REDIS_URL`), a Redis Cluster
 * (`redisCluster`, `$REDIS_CLUSTER`), or neither (the embedded runtime).
 */

import type { RedisTarget } from "../../queue/redis/client.js";
import { redactSeed, seedProblem, splitSeedList } from "../../queue/redis/seeds.js";
import { hasHashTag } from "../../redis-keys.js";
import { type ConfigIssue, joinPath } from "./errors.js";
import type { RuntimeConfig } from "./types.js";

/** The Redis the config names, or undefined for the embedded runtime. */
export function redisTargetOf(
  runtime: Pick<RuntimeConfig, "redisUrl" | "redisCluster">,
): RedisTarget | undefined {
  if (runtime.redisCluster && runtime.redisCluster.length > 0) return { cluster: runtime.redisCluster };
  if (runtime.redisUrl) return { url: runtime.redisUrl };
  return undefined;
}

/** `host:port` of a Redis URL, without credentials (for messages); the field name when it does not parse. */
function urlAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "6379"}`;
  } catch {
    return "runtime.redisUrl";
  }
}

/** The target for people, without credentials: `Redis at host:6379`, `Redis Cluster at a:7000, b:7001`. */
export function describeRedisTarget(target: RedisTarget): string {
  if ("url" in target) return `Redis at ${urlAddress(target.url)}`;
  const nodes = target.cluster.map((s) => redactSeed(s).replace(/^[a-z][a-z0-9+.-]*:\/\/(\*\*\*@)?/i, ""));
  return `Redis Cluster at ${nodes.join(", ")}`;
}

/**
 * `runtime.redisCluster` given as one string (`${REDIS_CLUSTER}`, or the variable itself): split into
 * its entries, in place, before validation.
 */
export function splitRedisCluster(tree: Record<string, unknown>): void {
  const runtime = tree.runtime;
  if (runtime === null || typeof runtime !== "object" || Array.isArray(runtime)) return;
  const r = runtime as Record<string, unknown>;
  if (typeof r.redisCluster === "string") r.redisCluster = splitSeedList(r.redisCluster);
}

/** Cross-field rules of the Redis settings: one target at most, usable seeds, a cluster-safe queue. */
export function redisIssues(
  runtime: Pick<RuntimeConfig, "redisUrl" | "redisCluster" | "keyPrefix" | "queuePrefix">,
  warnings: string[],
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seeds = runtime.redisCluster ?? [];
  if (runtime.redisUrl && seeds.length > 0) {
    issues.push({
      path: "runtime.redisCluster",
      message:
        "is set together with runtime.redisUrl; use one: redisUrl for one Redis server, redisCluster for a " +
        "Redis Cluster (check REDIS_URL and REDIS_CLUSTER in the environment)",
    });
  }
  seeds.forEach((seed, i) => {
    const problem = seedProblem(seed);
    if (problem) issues.push({ path: joinPath(["runtime", "redisCluster", i]), message: problem });
  });
  if (seeds.length === 0) return issues;
  if (runtime.queuePrefix !== undefined && !hasHashTag(runtime.queuePrefix)) {
    issues.push({
      path: "runtime.queuePrefix",
      message:
        `"${runtime.queuePrefix}" has no hash tag; on a Redis Cluster the runs queue needs one (BullMQ keeps ` +
        "every key of a queue in one slot): write e.g. {sb-runs}, or leave it unset",
    });
  }
  if (hasHashTag(runtime.keyPrefix)) {
    warnings.push(
      `runtime.keyPrefix "${runtime.keyPrefix}" contains a hash tag: on a Redis Cluster every key then lands in one ` +
        "slot, on one node, instead of each thread in a slot of its own",
    );
  }
  return issues;
}
