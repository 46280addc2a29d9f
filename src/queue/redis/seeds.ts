/**
 * Seed nodes of a Redis Cluster as people write them (`REDIS_CLUSTER`, `runtime.redisCluster`):
 * parsing and checking, without loading a Redis driver (the config uses it in every mode).
 */

/** A seed node list parsed: addresses, and the credentials and TLS shared by every node. */
export interface ClusterSeeds {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/**
 * Splits a seed list given as one string (`REDIS_CLUSTER`): entries separated by commas or spaces.
 * Each entry is `redis://[user:password@]host:port`, `rediss://…` (TLS) or `host:port`.
 */
export function splitSeedList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** Why one seed entry cannot be used, or undefined when it can. */
export function seedProblem(seed: string): string | undefined {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(seed) ? seed : `redis://${seed}`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `"${redactSeed(seed)}" is not a node address; write redis://host:port (rediss:// for TLS) or host:port`;
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") return `"${u.protocol}" is not redis: or rediss:`;
  if (!u.hostname) return "names no host; write redis://host:port";
  if (!u.port) return `"${u.hostname}" names no port; write ${u.hostname}:<port> (a cluster node's port)`;
  if (u.pathname !== "" && u.pathname !== "/")
    return "names a database; a cluster has only database 0, so drop the /<number>";
  return undefined;
}

export function redactSeed(seed: string): string {
  return seed.replace(/\/\/[^/@]*@/, "//***@");
}

/**
 * Parses seed entries (see `splitSeedList`). All of them must agree on TLS; the first credentials
 * given are used for every node (a cluster's nodes share them). Throws on an unusable entry.
 */
export function parseSeeds(seeds: readonly string[]): ClusterSeeds {
  if (seeds.length === 0) throw new Error("A Redis Cluster needs at least one seed node (host:port).");
  const out: ClusterSeeds = { nodes: [], tls: false };
  let scheme: string | undefined;
  for (const seed of seeds) {
    const problem = seedProblem(seed);
    if (problem) throw new Error(`Redis Cluster seed ${problem}.`);
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(seed) ? seed : `redis://${seed}`);
    if (scheme && scheme !== u.protocol)
      throw new Error("Redis Cluster seeds mix redis:// and rediss://; every node uses TLS or none does.");
    scheme = u.protocol;
    out.nodes.push({ host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port) });
    if (out.password === undefined && u.password) {
      out.password = decodeURIComponent(u.password);
      if (u.username) out.username = decodeURIComponent(u.username);
    }
  }
  out.tls = scheme === "rediss:";
  return out;
}
