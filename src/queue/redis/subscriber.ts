/**
 * One pub/sub subscription that survives a dropped connection and, on a cluster, the death of the
 * node it listens on. Classic `PUBLISH` on a Redis Cluster reaches subscribers on every node, so a
 * subscriber needs one connection to any live node. On a single server it is a duplicate of the
 * command connection, which ioredis reconnects and resubscribes by itself; on a cluster it is a
 * connection to one node that moves to another node when its node goes away (a failover).
 *
 * Messages published while a subscriber is away are lost; `resubscribed` tells the owner once the
 * subscription is live again, so it re-reads the durable state the messages were about.
 */
import { Redis, type RedisOptions } from "ioredis";
import { isCluster, type RedisClient } from "./client.js";

export interface SubscriberHandlers {
  /** A message on one of the channels. Must not throw. */
  message(channel: string, text: string): void;
  /** The subscription is live again after a drop: whatever was published meanwhile is lost. */
  resubscribed?(): void;
  /** Connection trouble (the subscriber keeps trying by itself). */
  error?(err: unknown): void;
}

/** Longest pause between attempts to find a live node for the subscription. */
const MAX_BACKOFF_MS = 2000;

export class RedisSubscriber {
  private connection: Redis | undefined;
  private closed = false;
  /** Resolves once the first subscription is live; rejects only if `close()` came first. */
  readonly ready: Promise<void>;
  /** Where in the node list to try next; random, so a cluster's subscribers spread over its nodes. */
  private nodeIndex = Math.floor(Math.random() * 1024);

  /**
   * Subscribes to `channels` over a connection of its own, made from `client`'s settings (its
   * name is `connectionName` when given). The caller keeps owning `client`.
   */
  constructor(
    private readonly client: RedisClient,
    private readonly channels: readonly string[],
    private readonly handlers: SubscriberHandlers,
    private readonly connectionName?: string,
  ) {
    this.ready = isCluster(client) ? this.connectToCluster(false) : this.connectToServer();
    this.ready.catch(() => {});
  }

  /** Unsubscribes and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    const c = this.connection;
    this.connection = undefined;
    if (c) await c.quit().catch(() => c.disconnect());
  }

  private attach(c: Redis): void {
    c.on("message", (channel: string, text: string) => this.handlers.message(channel, text));
    c.on("error", (err: unknown) => this.handlers.error?.(err));
  }

  /** One server: ioredis reconnects and resubscribes; a second SUBSCRIBE after it marks "live". */
  private async connectToServer(): Promise<void> {
    // A subscribed connection takes no other command; nothing to pipeline.
    const options: Partial<RedisOptions> = { enableAutoPipelining: false };
    if (this.connectionName) options.connectionName = this.connectionName;
    const c = (this.client as Redis).duplicate(options);
    this.connection = c;
    this.attach(c);
    let live = false;
    c.on("ready", () => {
      if (!live || this.closed) return;
      c.subscribe(...this.channels).then(
        () => this.handlers.resubscribed?.(),
        (err: unknown) => this.handlers.error?.(err),
      );
    });
    await c.subscribe(...this.channels);
    live = true;
  }

  /** The cluster's nodes as the client knows them now (after it is ready). */
  private async clusterNodes(): Promise<{ host: string; port: number }[]> {
    const cluster = this.client;
    if (!isCluster(cluster)) return [];
    if (cluster.status !== "ready") {
      await new Promise<void>((resolve) => {
        const done = () => {
          cluster.off("ready", done);
          cluster.off("end", done);
          resolve();
        };
        cluster.on("ready", done);
        cluster.on("end", done);
        if (cluster.status === "wait") cluster.connect().catch(() => {});
      });
    }
    return cluster
      .nodes("all")
      .map((n) => ({ host: n.options.host ?? "127.0.0.1", port: n.options.port ?? 6379 }));
  }

  /**
   * A cluster: subscribe on one node (taken in turn from the client's node list); when that
   * connection ends, do it again on the next live node, and report `resubscribed`.
   */
  private async connectToCluster(again: boolean): Promise<void> {
    const cluster = this.client;
    if (!isCluster(cluster)) return;
    for (let attempt = 0; !this.closed; attempt++) {
      const nodes = await this.clusterNodes();
      const node = nodes[this.nodeIndex++ % Math.max(1, nodes.length)];
      if (node) {
        const c = new Redis({
          ...cluster.options.redisOptions,
          host: node.host,
          port: node.port,
          connectionName: this.connectionName,
          // Never retry one node: a dead node is replaced by another one below.
          retryStrategy: () => null,
          maxRetriesPerRequest: 0,
          lazyConnect: true,
          enableAutoPipelining: false,
        });
        this.attach(c);
        try {
          await c.connect();
          await c.subscribe(...this.channels);
        } catch (err) {
          this.handlers.error?.(err);
          c.disconnect();
          await pause(Math.min(MAX_BACKOFF_MS, 50 * 2 ** attempt));
          continue;
        }
        if (this.closed) {
          c.disconnect();
          return;
        }
        this.connection = c;
        c.once("end", () => {
          if (this.closed || this.connection !== c) return;
          this.connection = undefined;
          void this.connectToCluster(true);
        });
        if (again) this.handlers.resubscribed?.();
        return;
      }
      await pause(Math.min(MAX_BACKOFF_MS, 50 * 2 ** attempt));
    }
    throw new Error("The subscriber was closed before it subscribed.");
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
