/**
 * A throwaway Redis Cluster on loopback ports: redis-server in cluster mode (three primaries and
 * three replicas by default), joined with `redis-cli --cluster create`, the same commands
 * docs/deploy.md gives. The global test setup starts one per run; a fault scenario that kills a
 * primary starts its own. No persistence; everything lives in a temporary directory that `stop()`
 * removes.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";

const run = promisify(execFile);

export interface ClusterNodeProcess {
  port: number;
  child: ChildProcess;
  /** The redis-server arguments it was started with (a restart reuses them, and its nodes.conf). */
  args: string[];
}

export interface ClusterNodeInfo {
  id: string;
  port: number;
  role: "primary" | "replica";
  /** The primary's id, for a replica. */
  primaryId: string | undefined;
  failed: boolean;
  /** Whether it serves hash slots (a primary). */
  servesSlots: boolean;
}

export interface LocalCluster {
  /** `redis://127.0.0.1:<port>` of every node: the seed list (`REDIS_CLUSTER`). */
  seeds: string[];
  nodes: ClusterNodeProcess[];
  /** The nodes as the cluster sees them now (asked of a live node). */
  topology(): Promise<ClusterNodeInfo[]>;
  /** SIGKILLs the node on `port` (no cleanup, as a crash); resolves once it is gone. */
  kill(port: number): Promise<void>;
  /**
   * Starts a killed node again with its own nodes.conf: it rejoins, and a primary that was failed
   * over comes back as a replica of its successor.
   */
  restart(port: number): Promise<void>;
  /**
   * Resolves once every hash slot is served by a live primary again (after a failover), every node
   * agrees on who is what, and every primary that serves slots has `replicas` replicas in sync
   * (default 0: a failed-over shard may run without one).
   */
  waitUntilHealthy(timeoutMs?: number, o?: { replicas?: number }): Promise<void>;
  stop(): Promise<void>;
}

export interface LocalClusterOptions {
  primaries?: number;
  replicasPerPrimary?: number;
  /** `cluster-node-timeout`: how long a node may be unreachable before its replica takes over. */
  nodeTimeoutMs?: number;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A port nothing listens on now (the OS picks it). */
export function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A port whose cluster bus port (port + 10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = await anyFreePort();
    if (port > 55_000 || taken.has(port) || taken.has(port + 10_000)) continue;
    if (await isFree(port + 10_000)) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
  throw new Error("No free pair of ports (port and port + 10000) for a cluster node.");
}

async function ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({
    port,
    host: "127.0.0.1",
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
  });
  r.on("error", () => {});
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`The local Redis Cluster: timed out waiting for ${what}.`);
    await pause(50);
  }
}

function parseNodes(text: string): ClusterNodeInfo[] {
  return text
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line) => {
      const fields = line.split(" ");
      const [id = "", addr = "", flags = "", primary = "-"] = fields;
      const port = Number(/:(\d+)@/.exec(addr)?.[1] ?? 0);
      return {
        id,
        port,
        role: flags.includes("master") ? "primary" : "replica",
        primaryId: primary === "-" ? undefined : primary,
        failed: /\bfail\b/.test(flags.replace(/,/g, " ")),
        servesSlots: fields.length > 8,
      };
    });
}

function nodeArgs(port: number, nodeDir: string, nodeTimeoutMs: number): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    join(nodeDir, "nodes.conf"),
    "--cluster-node-timeout",
    String(nodeTimeoutMs),
    // A replica may always take over, however long it was cut off (the tests kill primaries).
    "--cluster-replica-validity-factor",
    "0",
    // Replicas sync at once instead of after the default 5 s pause.
    "--repl-diskless-sync-delay",
    "0",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    nodeDir,
  ];
}

/** Spawns redis-server and resolves once the process exists. */
async function launch(port: number, args: string[]): Promise<ChildProcess> {
  const child = spawn("redis-server", args, { stdio: "ignore" });
  await new Promise<void>((resolve, reject) => {
    child.once("error", (err) =>
      reject(
        new Error(
          `Could not start redis-server (${err.message}). Install it (Debian: apt-get install -y redis-server) or set REDIS_CLUSTER.`,
        ),
      ),
    );
    child.once("spawn", () => resolve());
  });
  await until(`node ${port} to answer`, 10_000, () => ask(port, async (r) => (await r.ping()) === "PONG"));
  return child;
}

/** Starts the cluster and resolves once every slot is served and every replica is in sync. */
export async function startLocalCluster(o: LocalClusterOptions = {}): Promise<LocalCluster> {
  const primaries = o.primaries ?? 3;
  const replicas = o.replicasPerPrimary ?? 1;
  const nodeTimeoutMs = o.nodeTimeoutMs ?? 2000;
  const dir = mkdtempSync(join(tmpdir(), "sb-test-cluster-"));
  const taken = new Set<number>();
  const nodes: ClusterNodeProcess[] = [];
  const stop = async () => {
    await Promise.all(
      nodes.map(
        (n) =>
          new Promise<void>((resolve) => {
            if (n.child.exitCode !== null || n.child.signalCode !== null) return resolve();
            n.child.once("exit", () => resolve());
            n.child.kill("SIGKILL");
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const port = await clusterPort(taken);
      const nodeDir = join(dir, String(port));
      mkdirSync(nodeDir);
      const child = await launch(port, nodeArgs(port, nodeDir, nodeTimeoutMs));
      nodes.push({ port, child, args: nodeArgs(port, nodeDir, nodeTimeoutMs) });
    }
    for (const n of nodes)
      await until(`node ${n.port} to answer`, 10_000, () =>
        ask(n.port, async (r) => (await r.ping()) === "PONG"),
      );
    await run("redis-cli", [
      "--cluster",
      "create",
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ]);
    const cluster = makeHandle(nodes, stop);
    await cluster.waitUntilHealthy(20_000);
    return cluster;
  } catch (err) {
    await stop();
    throw err;
  }
}

function makeHandle(nodes: ClusterNodeProcess[], stop: () => Promise<void>): LocalCluster {
  const alive = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const topology = async (): Promise<ClusterNodeInfo[]> => {
    for (const n of alive()) {
      try {
        return parseNodes(String(await ask(n.port, (r) => r.cluster("NODES"))));
      } catch {
        // that node is going away; ask the next one
      }
    }
    throw new Error("No node of the local Redis Cluster answers.");
  };
  return {
    seeds: nodes.map((n) => `redis://127.0.0.1:${n.port}`),
    nodes,
    topology,
    async kill(port) {
      const n = nodes.find((x) => x.port === port);
      if (!n || n.child.exitCode !== null || n.child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => n.child.once("exit", () => resolve()));
      n.child.kill("SIGKILL");
      await gone;
    },
    async restart(port) {
      const n = nodes.find((x) => x.port === port);
      if (!n) throw new Error(`No node on port ${port} in this cluster.`);
      if (n.child.exitCode === null && n.child.signalCode === null) return;
      n.child = await launch(port, n.args);
    },
    async waitUntilHealthy(timeoutMs = 20_000, o = {}) {
      const wanted = o.replicas ?? 0;
      await until("every slot served, every replica in sync, every node agreeing", timeoutMs, async () => {
        const roles = new Map<number, "primary" | "replica">();
        // What the primary itself counts as online replicas: WAIT is answered from that view, which
        // lags the replica's own "link up" while the primary streams it the first sync.
        const onlineReplicas = new Map<number, number>();
        for (const n of alive()) {
          const info = String(await ask(n.port, (r) => r.cluster("INFO")));
          if (!info.includes("cluster_state:ok")) return false;
          const repl = String(await ask(n.port, (r) => r.info("replication")));
          if (repl.includes("role:slave") && !repl.includes("master_link_status:up")) return false;
          roles.set(n.port, repl.includes("role:slave") ? "replica" : "primary");
          onlineReplicas.set(n.port, (repl.match(/state=online/g) ?? []).length);
        }
        // Gossip has reached every node: each one's view of every live node matches that node's own
        // role, and none of them is still marked failed.
        for (const n of alive()) {
          const view = parseNodes(String(await ask(n.port, (r) => r.cluster("NODES"))));
          for (const [port, role] of roles) {
            const seen = view.find((v) => v.port === port);
            if (!seen || seen.role !== role || seen.failed) return false;
          }
          for (const p of view.filter((v) => v.role === "primary" && v.servesSlots && roles.has(v.port))) {
            const inSync = view.filter((v) => v.primaryId === p.id && roles.get(v.port) === "replica");
            if (inSync.length < wanted || (onlineReplicas.get(p.port) ?? 0) < wanted) return false;
          }
        }
        return true;
      });
    },
    stop,
  };
}
