/**
 * `switchboard check`'s Redis probe: PING (one server) or CLUSTER INFO (a cluster: every slot
 * served), and, when inbox appends wait for replicas (`runtime.waitReplicas`), whether every primary
 * has that many: a primary with fewer would refuse every delivery to its threads.
 */
import { errorMessage } from "../../agent/errors.js";
import type { RedisClient, RedisTarget } from "../../queue/redis/client.js";
import type { CheckProbe } from "../cli/types.js";
import { describeRedisTarget } from "../config/redis-target.js";
import { redisAddress } from "../config/resolve.js";

/** Primaries that serve slots, each with its number of connected replicas (from CLUSTER NODES). */
function replicasPerPrimary(nodes: string): Map<string, number> {
  const lines = nodes
    .trim()
    .split("\n")
    .map((l) => l.split(" "));
  const out = new Map<string, number>();
  for (const f of lines) if ((f[2] ?? "").includes("master") && f.length > 8) out.set(f[0] ?? "", 0);
  for (const f of lines) {
    const primary = f[3] ?? "-";
    if (
      (f[2] ?? "").includes("slave") &&
      !(f[2] ?? "").includes("fail") &&
      out.has(primary) &&
      f[7] === "connected"
    )
      out.set(primary, (out.get(primary) ?? 0) + 1);
  }
  return out;
}

async function replicaShortfall(
  client: RedisClient,
  cluster: boolean,
  wanted: number,
): Promise<string | undefined> {
  if (wanted <= 0) return undefined;
  if (!cluster) {
    const n = Number(/connected_slaves:(\d+)/.exec(String(await client.info("replication")))?.[1] ?? 0);
    return n < wanted
      ? `runtime.waitReplicas is ${wanted} but the server has ${n} connected replicas`
      : undefined;
  }
  const counts = replicasPerPrimary(String(await client.cluster("NODES")));
  const short = [...counts.values()].filter((n) => n < wanted).length;
  return short > 0
    ? `runtime.waitReplicas is ${wanted} but ${short} of ${counts.size} primaries have fewer connected replicas`
    : undefined;
}

/** Probes `target` over a connection opened for the check and closed after it (so `check` can exit). */
export function redisProbe(target: RedisTarget, waitReplicas = 0): CheckProbe {
  return {
    name: "redis",
    async check() {
      const { createRedisClient, isCluster } = await import("../../queue/redis/client.js");
      const client = createRedisClient(target, {
        lazyConnect: true,
        reconnect: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 2000,
        disconnectTimeout: 100, // else a refused socket holds `check` open for 2 s
      });
      let cause: string | undefined;
      client.on("error", (err: Error) => {
        cause ??= err.message;
      });
      try {
        await client.connect();
        const started = performance.now();
        const cluster = isCluster(client);
        let detail: string;
        if (cluster) {
          const info = String(await client.cluster("INFO"));
          const state = /cluster_state:(\w+)/.exec(info)?.[1] ?? "unknown";
          if (state !== "ok") {
            return {
              ok: false,
              detail: `cluster_state is ${state} at ${describeRedisTarget(target)}: some hash slots have no live primary`,
            };
          }
          detail = `cluster_state ok, ${client.nodes("master").length} primaries, in ${Math.round(performance.now() - started)} ms`;
        } else {
          const pong = await client.ping();
          if (pong !== "PONG") return { ok: false, detail: pong };
          detail = `${pong} in ${Math.round(performance.now() - started)} ms`;
        }
        const short = await replicaShortfall(client, cluster, waitReplicas);
        if (short) return { ok: false, detail: `${short}: deliveries to their threads would be refused` };
        return { ok: true, detail };
      } catch (err) {
        const why = cause ?? errorMessage(err);
        const detail =
          "url" in target
            ? `not reachable at ${redisAddress(target.url)} (${why}). Start Redis, or fix runtime.redisUrl / REDIS_URL`
            : `${describeRedisTarget(target)} not reachable (${why}). Start the cluster, or fix runtime.redisCluster / REDIS_CLUSTER`;
        return {
          ok: false,
          detail,
          // A server that answers and refuses the password is a config error, not an outage.
          ...(/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(why) ? { refused: true } : {}),
        };
      } finally {
        client.disconnect();
      }
    },
  };
}
