/**
 * Redis connections: one server (`redis://host:6379`) or a Redis Cluster (its seed nodes). Every part
 * of Switchboard that talks to Redis takes a `RedisClient`, so the same code runs on both: each
 * atomic step touches the keys of one hash slot (a thread's `{<thread key>}`, or one key), the runs
 * queue has a hash-tagged prefix of its own on a cluster, and pub/sub uses classic channels, which a
 * cluster delivers to subscribers on every node.
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import { parseSeeds } from "./seeds.js";

/** A connection to one Redis server or to a Redis Cluster (ioredis `Redis` or `Cluster`). */
export type RedisClient = Redis | Cluster;

/** Where Redis is: one server by URL, or a cluster by its seed nodes (any few of its nodes). */
export type RedisTarget = { url: string } | { cluster: readonly string[] };

/** Connection settings that apply to a server and to every node of a cluster alike. */
export interface RedisClientOptions {
  /** ioredis's retry limit per command; `null` (BullMQ's requirement) retries until Redis answers. */
  maxRetriesPerRequest?: number | null;
  connectionName?: string;
  connectTimeout?: number;
  /** A socket that never connected is destroyed after this (ioredis's default is 2 s). */
  disconnectTimeout?: number;
  /** Connect on the first command instead of at once. */
  lazyConnect?: boolean;
  /** `false`: give up after the first failed connection (probes); default: reconnect forever. */
  reconnect?: boolean;
  /**
   * ioredis auto-pipelining on a single server (default on): the commands issued within one
   * event-loop tick leave in one socket write and are answered in one read, instead of one write
   * and one read each. Off for a connection that blocks (a BullMQ worker's `BZPOPMIN`) or
   * subscribes, where a command queued behind a blocking one would wait for it. Ignored for a
   * cluster, whose connections never auto-pipeline (see `createRedisClient`).
   */
  autoPipelining?: boolean;
}

/**
 * How long a cluster command waits for a failover: a command for a primary that died is retried
 * (on the slot's new primary once the cluster has promoted a replica) every `RETRY_DELAY_MS`, up to
 * `MAX_REDIRECTIONS` tries, about 10 s in all, before it fails. A cluster whose
 * `cluster-node-timeout` is longer fails commands meanwhile; the callers retry (platforms redeliver,
 * the sweeper wakes threads again).
 */
const RETRY_DELAY_MS = 200;
const MAX_REDIRECTIONS = 50;

/** Whether `client` talks to a Redis Cluster. */
export function isCluster(client: RedisClient): client is Cluster {
  // ioredis marks its clients (`instanceof` would miss a second copy of the package).
  return client.isCluster === true;
}

function nodeOptions(o: RedisClientOptions): RedisOptions {
  const r: RedisOptions = {};
  if (o.maxRetriesPerRequest !== undefined) r.maxRetriesPerRequest = o.maxRetriesPerRequest;
  if (o.connectionName !== undefined) r.connectionName = o.connectionName;
  if (o.connectTimeout !== undefined) r.connectTimeout = o.connectTimeout;
  if (o.disconnectTimeout !== undefined) r.disconnectTimeout = o.disconnectTimeout;
  return r;
}

/**
 * Opens a connection to `target`. A cluster client finds every node from the seeds, follows slot
 * moves and failovers by itself, and waits for a failover as described at `RETRY_DELAY_MS`.
 *
 * A cluster client never auto-pipelines: ioredis 6 batches a node's commands of one tick into one
 * pipeline, and when the batch spans slots a failover or a slot move answers each slot's commands
 * with a MOVED of its own, which ioredis does not retry for a pipeline (it retries only one common
 * error), so the MOVED reached our callers (ioredis issue #2075). A session append failed that way
 * after its reply was shown, and the next holder answered the message again. One command at a
 * time, ioredis follows every MOVED itself.
 */
export function createRedisClient(target: RedisTarget, o: RedisClientOptions = {}): RedisClient {
  if ("url" in target) {
    const options: RedisOptions = { ...nodeOptions(o), enableAutoPipelining: o.autoPipelining ?? true };
    if (o.lazyConnect) options.lazyConnect = true;
    if (o.reconnect === false) options.retryStrategy = () => null;
    return new Redis(target.url, options);
  }
  const seeds = parseSeeds(target.cluster);
  const redisOptions: RedisOptions = { ...nodeOptions(o), enableAutoPipelining: false };
  if (seeds.password !== undefined) redisOptions.password = seeds.password;
  if (seeds.username !== undefined) redisOptions.username = seeds.username;
  if (seeds.tls) redisOptions.tls = {};
  const options: ClusterOptions = {
    redisOptions,
    retryDelayOnFailover: RETRY_DELAY_MS,
    retryDelayOnClusterDown: RETRY_DELAY_MS,
    retryDelayOnTryAgain: RETRY_DELAY_MS,
    maxRedirections: MAX_REDIRECTIONS,
    enableAutoPipelining: false,
  };
  if (o.lazyConnect) options.lazyConnect = true;
  if (o.reconnect === false) options.clusterRetryStrategy = () => null;
  return new Cluster(seeds.nodes, options);
}

/**
 * A second connection to the same server or cluster, with the same settings except the given ones
 * (a subscriber, BullMQ's connections).
 */
export function duplicateClient(
  client: RedisClient,
  o: Pick<RedisClientOptions, "connectionName" | "maxRetriesPerRequest" | "autoPipelining"> = {},
): RedisClient {
  if (isCluster(client)) {
    const redisOptions = { ...client.options.redisOptions, ...nodeOptions(o) };
    return client.duplicate(undefined, { ...client.options, redisOptions, enableAutoPipelining: false });
  }
  const options: RedisOptions = nodeOptions(o);
  if (o.autoPipelining !== undefined) options.enableAutoPipelining = o.autoPipelining;
  return client.duplicate(options);
}
