/**
 * Makes a real Redis available to every test: `REDIS_URL` when set, otherwise a throwaway
 * `redis-server` on a free loopback port, stopped when the run ends. Tests read the URL with
 * `inject("redisUrl")`.
 *
 * And a Redis Cluster for the suites that run against both backends (test/support/redis.ts):
 * `SB_TEST_REDIS_CLUSTER` (seed nodes, comma-separated; `.ci/run` starts one) when set, otherwise a
 * throwaway cluster of three primaries and three replicas on loopback ports, started once per run.
 * (Not `REDIS_CLUSTER`: child processes inherit the environment, and a process given both
 * `REDIS_URL` and `REDIS_CLUSTER` refuses its config.) Tests read its seeds with
 * `inject("redisCluster")`. `SB_TEST_REDIS=redis` runs those suites on the single server only (and
 * starts no cluster), `SB_TEST_REDIS=cluster` on the cluster only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import type { TestProject } from "vitest/node";
import { anyFreePort, type LocalCluster, startLocalCluster } from "./support/redis-cluster.js";

declare module "vitest" {
  interface ProvidedContext {
    redisUrl: string;
    /** Seed nodes of the test cluster; empty when `SB_TEST_REDIS=redis`. */
    redisCluster: string[];
  }
}

/** Whether a cluster at `seeds` serves every slot. */
async function clusterOk(seeds: string[]): Promise<boolean> {
  const nodes = seeds.map((s) => {
    const u = new URL(s.includes("://") ? s : `redis://${s}`);
    return { host: u.hostname, port: Number(u.port) };
  });
  const c = new Cluster(nodes, { lazyConnect: true, clusterRetryStrategy: () => null });
  c.on("error", () => {});
  try {
    await c.connect();
    return /cluster_state:ok/.test(String(await c.cluster("INFO")));
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

let cluster: LocalCluster | undefined;

/** The cluster's seeds: `SB_TEST_REDIS_CLUSTER`, or a throwaway cluster started here. */
async function provideCluster(): Promise<string[]> {
  if ((process.env.SB_TEST_REDIS ?? "both") === "redis") return [];
  const given = process.env.SB_TEST_REDIS_CLUSTER;
  if (given) {
    const seeds = given.split(/[\s,]+/).filter(Boolean);
    if (!(await clusterOk(seeds)))
      throw new Error(
        `SB_TEST_REDIS_CLUSTER=${given} is not a healthy Redis Cluster. Fix it or unset SB_TEST_REDIS_CLUSTER.`,
      );
    return seeds;
  }
  cluster = await startLocalCluster();
  return cluster.seeds;
}

async function ping(url: string): Promise<boolean> {
  const r = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
  });
  r.on("error", () => {});
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

let child: ChildProcess | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  // The cluster starts while the single server does (about 2 s, the cluster being the longer).
  const seeds = provideCluster();
  seeds.catch(() => {});
  try {
    project.provide("redisUrl", await provideServer());
    // Not exported as REDIS_CLUSTER (see above): tests pass it on where they mean it (backendEnv).
    project.provide("redisCluster", await seeds);
  } catch (err) {
    // No teardown follows a failed setup: stop whatever started.
    await seeds.catch(() => {});
    await teardown();
    throw err;
  }
}

async function provideServer(): Promise<string> {
  let url = process.env.REDIS_URL;
  if (url) {
    if (!(await ping(url)))
      throw new Error(`REDIS_URL=${url} does not answer PING. Start Redis there or unset REDIS_URL.`);
  } else {
    const port = await anyFreePort();
    dir = mkdtempSync(join(tmpdir(), "sb-test-redis-"));
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: "ignore" },
    );
    const spawned = child;
    const failed = new Promise<Error>((resolve) => spawned.once("error", resolve));
    url = `redis://127.0.0.1:${port}`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const err = await Promise.race([failed, ping(url).then((ok) => (ok ? null : undefined))]);
      if (err === null) break;
      if (err instanceof Error) {
        throw new Error(
          `Could not start redis-server (${err.message}). Install it (Debian: apt-get install -y redis-server) or set REDIS_URL.`,
        );
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port} within 10 s.`);
      await new Promise((r) => setTimeout(r, 50));
    }
    process.env.REDIS_URL = url;
  }
  return url;
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  child?.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
}
