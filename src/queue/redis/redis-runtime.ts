/**
 * The Redis runtime: any number of gateway and worker processes share threads through Redis and a
 * BullMQ queue ("runs"). A gateway process uses `deliver`/`control`/`status`; a worker process
 * also calls `start()` to take wake jobs. docs/runtime.md describes the protocol.
 */
import { type Job, Queue, Worker } from "bullmq";
import { hasHashTag, RuntimeKeys } from "../../redis-keys.js";
import { DEFAULT_LEASE_TTL_MS, RuntimeBase, type RuntimeOptions } from "../runtime-base.js";
import type { ThreadState } from "../state/types.js";
import { DEFAULT_CONCURRENCY, type WorkerCore } from "../worker/worker-core.js";
import { createRedisClient, duplicateClient, isCluster, type RedisClient } from "./client.js";
import { RedisControlBus } from "./redis-control-bus.js";
import { RedisEventClaimStore } from "./redis-event-claims.js";
import { RedisThreadState } from "./redis-thread-state.js";
import { RedisWaker, type WakeJobData } from "./redis-waker.js";
import { RedisRenderJournal } from "./render-journal.js";

export interface RedisRuntimeOptions extends RuntimeOptions {
  /**
   * A connection to one server or a cluster (the caller closes it), or a URL (the runtime opens and
   * closes its own connection).
   */
  redis: RedisClient | string;
  /** Key prefix. Default `DEFAULT_KEY_PREFIX`. */
  prefix?: string;
  /**
   * BullMQ's prefix for the runs queue. Default: the key prefix without its colon (`sb`) on one
   * server, `{sb-runs}` on a cluster (BullMQ needs every key of a queue in one hash slot).
   */
  queuePrefix?: string;
  /** BullMQ queue name. Default `runs`. */
  queueName?: string;
  /** BullMQ job lock duration; a dead worker's job is recovered after about this. Default: the lease TTL. */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval. Default: half the lock duration. */
  stalledIntervalMs?: number;
  /** Stalls a job survives before BullMQ fails it (the sweeper still re-wakes its thread). Default 3. */
  maxStalledCount?: number;
  /** Dedupe window of event ids. Default 24 h. */
  dedupeTtlMs?: number;
  /**
   * Replicas that must confirm each inbox append (`WAIT`) before a delivery resolves; fewer within
   * `waitReplicasTimeoutMs` (default 500) refuse the delivery, so the platform redelivers. Default 0.
   */
  waitReplicas?: number;
  waitReplicasTimeoutMs?: number;
}

/** Length (approximate) of BullMQ's events stream, which nothing reads. */
const EVENTS_MAX_LEN = 100;

export class RedisRuntime extends RuntimeBase {
  private readonly redis: RedisClient;
  private readonly ownsRedis: boolean;
  private readonly keys: RuntimeKeys;
  private readonly queue: Queue<WakeJobData>;
  private readonly queueConnection: RedisClient;
  private readonly bus: RedisControlBus;
  private readonly state: ThreadState;
  private readonly waker: RedisWaker;
  private core: WorkerCore | undefined;
  private worker: Worker<WakeJobData> | undefined;
  private workerConnection: RedisClient | undefined;

  constructor(protected override readonly o: RedisRuntimeOptions) {
    super(o);
    this.ownsRedis = typeof o.redis === "string";
    this.redis =
      typeof o.redis === "string"
        ? createRedisClient({ url: o.redis }, { maxRetriesPerRequest: null })
        : o.redis;
    const cluster = isCluster(this.redis);
    if (cluster && o.queuePrefix !== undefined && !hasHashTag(o.queuePrefix)) {
      throw new Error(
        `The runs queue's prefix "${o.queuePrefix}" has no hash tag, so BullMQ cannot run on a Redis Cluster ` +
          "(its scripts need every key of the queue in one slot). Use a prefix like {sb-runs}, or leave it unset.",
      );
    }
    this.keys = new RuntimeKeys(o.prefix, { queuePrefix: o.queuePrefix, cluster });
    // BullMQ on a connection of its own, without auto-pipelining (its worker duplicates it for the
    // blocking BZPOPMIN). The events stream is written by every job step and read by no one here
    // (no QueueEvents): kept short.
    this.queueConnection = duplicateClient(this.redis, { maxRetriesPerRequest: null, autoPipelining: false });
    this.queue = new Queue<WakeJobData>(o.queueName ?? "runs", {
      connection: this.queueConnection,
      prefix: this.keys.bullPrefix,
      streams: { events: { maxLen: EVENTS_MAX_LEN } },
    });
    this.queue.on("error", (e) => this.onError(e, "the wake queue"));
    this.bus = new RedisControlBus(this.redis, this.keys.controlChannel);
    this.state = this.createState(this.redis, this.keys);
    this.waker = new RedisWaker(this.redis, this.queue, this.keys, this.clock);
    const claims = new RedisEventClaimStore(this.redis, this.keys, {
      dedupeTtlMs: o.dedupeTtlMs,
      clock: this.clock,
    });
    this.wire({
      state: this.state,
      claims,
      store: o.store,
      bus: this.bus,
      waker: this.waker,
      rewake: (t) => this.waker.wake(t),
    });
  }

  /** The coordination primitives; a subclass may wrap them (tests drive race windows this way). */
  protected createState(redis: RedisClient, keys: RuntimeKeys): ThreadState {
    return new RedisThreadState(redis, keys, {
      dedupeTtlMs: this.o.dedupeTtlMs,
      clock: this.clock,
      waitReplicas: this.o.waitReplicas,
      waitTimeoutMs: this.o.waitReplicasTimeoutMs,
    });
  }

  /** Starts taking wake jobs (a worker process). Resolves once the control subscription is live. */
  async start(): Promise<void> {
    if (this.worker) return;
    const o = this.o;
    if (!o.agentFactory) {
      throw new Error(
        "RedisRuntime.start() needs `agentFactory`: a process that runs workers must build agents.",
      );
    }
    const leaseTtlMs = o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    const core = this.createCore(
      {
        state: this.state,
        store: o.store,
        bus: this.bus,
        waker: this.waker,
        agentFactory: o.agentFactory,
        fenceKey: (t) => this.keys.lease(t),
        rewake: (t) => this.waker.wake(t),
      },
      o.finishOwed ? new RedisRenderJournal(this.redis, this.keys) : undefined,
    );
    this.core = core;
    await this.bus.whenSubscribed();
    const lockDuration = o.lockDurationMs ?? leaseTtlMs;
    this.workerConnection = duplicateClient(this.redis, {
      maxRetriesPerRequest: null,
      autoPipelining: false,
    });
    const worker = new Worker<WakeJobData>(
      o.queueName ?? "runs",
      async (job: Job<WakeJobData>) => {
        const thread = job.data?.thread;
        if (typeof thread !== "string" || thread === "") return;
        await core.process(thread, { rerun: job.attemptsStarted > 1 || job.stalledCounter > 0 });
      },
      {
        connection: this.workerConnection,
        prefix: this.keys.bullPrefix,
        concurrency: o.concurrency ?? DEFAULT_CONCURRENCY,
        lockDuration,
        stalledInterval: o.stalledIntervalMs ?? Math.max(100, Math.floor(lockDuration / 2)),
        maxStalledCount: o.maxStalledCount ?? 3,
        autorun: false,
      },
    );
    worker.on("error", (e) => this.onError(e, "the BullMQ worker"));
    worker.on("failed", (job, e) => this.onError(e, `wake job ${job?.id ?? "?"}`));
    this.worker = worker;
    void worker.run().catch((e: unknown) => this.onError(e, "running the BullMQ worker"));
    await worker.waitUntilReady();
    this.startSweeping((every) => this.sweepOnce(every));
  }

  /** One safety-net sweep (one process at a time); tests call it directly. */
  async sweepOnce(lockMs = 5000): Promise<string[]> {
    const got = await this.redis.set(this.keys.sweepLock, "1", "PX", Math.max(50, lockMs - 10), "NX");
    if (got !== "OK") return [];
    const minAge = 2 * (this.o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS);
    return this.waker.sweep(minAge);
  }

  /**
   * The stop order never uses a closed connection: the sweeper stops (a sweep in progress
   * finishes), then the holders hand over and the BullMQ worker finishes its jobs (their re-wakes
   * included), and only then are the connections closed.
   */
  protected async doStop(graceMs: number): Promise<void> {
    await this.stopSweep();
    const worker = this.worker;
    const closing: Promise<unknown>[] = [];
    if (this.core) closing.push(this.core.shutdown(graceMs));
    if (worker) closing.push(worker.close());
    await Promise.all(closing);
    await this.workerConnection?.quit().catch(() => this.workerConnection?.disconnect());
    await this.queue.close();
    await this.queueConnection.quit().catch(() => this.queueConnection.disconnect());
    await this.bus.close();
    if (this.ownsRedis) await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
