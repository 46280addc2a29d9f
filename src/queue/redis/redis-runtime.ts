/**
 * The Redis runtime: any number of gateway and worker processes share threads through Redis and a
 * BullMQ queue ("runs"). A gateway process uses `deliver`/`control`/`status`; a worker process
 * also calls `start()` to take wake jobs. docs/runtime.md describes the protocol.
 */
import { type Job, Queue, Worker } from "bullmq";
import type { InboundMessage } from "../../adapters/types.js";
import { type Clock, systemClock } from "../../agent/clock.js";
import { findModel } from "../../agent/llm/models.js";
import { Dispatcher, defaultOnError } from "../dispatcher.js";
import { EventClaims } from "../event-claims.js";
import { hasHashTag, RuntimeKeys } from "../keys.js";
import type { DropPolicy, ThreadState } from "../state/types.js";
import type { SessionStore } from "../store/types.js";
import type {
  AgentFactory,
  ControlCommand,
  ControlResult,
  DeliverResult,
  DeliveryMode,
  EventOutcome,
  InboundFormatter,
  ModelResolver,
  OwedRenderFinisher,
  RunSinkFactory,
  Runtime,
  ThreadStatus,
} from "../types.js";
import { DEFAULT_COLLECT_WINDOW_MS } from "../types.js";
import type { CompactionConfig } from "../worker/holder-env.js";
import { plainInboundFormatter } from "../worker/item-messages.js";
import type { LeaseEvent } from "../worker/tenure.js";
import { DEFAULT_CONCURRENCY, WorkerCore } from "../worker/worker-core.js";
import { createRedisClient, duplicateClient, isCluster, type RedisClient } from "./client.js";
import { RedisControlBus } from "./redis-control-bus.js";
import { RedisThreadState } from "./redis-thread-state.js";
import { RedisWaker, type WakeJobData } from "./redis-waker.js";
import { RedisRenderJournal } from "./render-journal.js";

/** Options shared by both runtimes. */
export interface RuntimeOptions {
  store: SessionStore;
  sinks: RunSinkFactory;
  /** Builds thread agents; required in a process that runs workers. */
  agentFactory?: AgentFactory;
  /** Lease TTL; renewed every fifth of it, lost ⅔ of it after the last confirmed renewal (`holdLease`). Default 15 s. */
  leaseTtlMs?: number;
  /** Collect-mode debounce window. Default 500 ms. */
  collectDebounceMs?: number;
  /** How often a holder re-reads control state besides pub/sub notices. Default 1 s. */
  controlPollMs?: number;
  /** Most queued messages per thread. Default `DEFAULT_INBOX_CAP`. */
  inboxCap?: number;
  dropPolicy?: DropPolicy;
  /** Mode when `deliver` gets none. Default `steer`. */
  defaultMode?: DeliveryMode;
  /**
   * The delivery mode of a thread's channel (e.g. from the channel config by the thread key's
   * platform): used when `deliver` gets no mode, and reported by `status().mode`. Default: none
   * (`defaultMode` everywhere).
   */
  modeOf?: (threadKey: string) => DeliveryMode | undefined;
  format?: InboundFormatter;
  /** Default `findModel` of the model catalogue. */
  resolveModel?: ModelResolver;
  /** Automatic compaction after runs; omit to leave sessions uncompacted. */
  compaction?: CompactionConfig;
  /** Drop a thread's cached agent after this long idle. Default 10 min. */
  agentIdleMs?: number;
  /** Parallel threads per process. Default `DEFAULT_CONCURRENCY` (64): runs mostly wait on the model. */
  concurrency?: number;
  /** Interval of the safety-net sweep for lost wakes. Default 5 s. */
  sweepIntervalMs?: number;
  onError?: (error: unknown, context: string) => void;
  /**
   * Finishes what a dead run owed the chat (the render journal, docs/runtime.md): given, every run's
   * sink gets a `RenderLog` and the next holder of a thread finishes what its predecessor's runs
   * still owed. Omitted: nothing is recorded (what the chat shows is not part of the durable state).
   */
  finishOwed?: OwedRenderFinisher;
  /** Every lease event of this process's tenures (acquired, renewed, releasing, …), in order. */
  onLease?: (event: LeaseEvent) => void;
  /**
   * The time every part of the runtime reads and waits on: lease renewals, the stale-lease watch,
   * the collect window, control polls, hand-over grace, sweeps, idle eviction, item times. Default:
   * the system clock. (A Redis lease still expires on Redis's own clock.)
   */
  clock?: Clock;
  /** Names this process in event-claim owners (logs, diagnostics). Default: a random id. */
  instanceId?: string;
  /**
   * How long an event claim lasts without renewal: after a gateway dies, its platform's redelivery
   * is handled once this passed. Default 15 s.
   */
  eventClaimTtlMs?: number;
}

export interface RedisRuntimeOptions extends RuntimeOptions {
  /**
   * A connection to one server or a cluster (the caller closes it), or a URL (the runtime opens and
   * closes its own connection).
   */
  redis: RedisClient | string;
  /** Key prefix. Default `sb:`. */
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

export class RedisRuntime implements Runtime {
  private readonly redis: RedisClient;
  private readonly ownsRedis: boolean;
  private readonly keys: RuntimeKeys;
  private readonly queue: Queue<WakeJobData>;
  private readonly queueConnection: RedisClient;
  private readonly bus: RedisControlBus;
  private readonly state: ThreadState;
  private readonly waker: RedisWaker;
  private readonly dispatcher: Dispatcher;
  private readonly claims: EventClaims;
  private readonly onError: (error: unknown, context: string) => void;
  private core: WorkerCore | undefined;
  private worker: Worker<WakeJobData> | undefined;
  private workerConnection: RedisClient | undefined;
  private readonly clock: Clock;
  private readonly stopSweeping = new AbortController();
  private sweeping: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;

  constructor(private readonly o: RedisRuntimeOptions) {
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
    this.onError = o.onError ?? defaultOnError;
    this.clock = o.clock ?? systemClock;
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
    this.claims = new EventClaims({
      state: this.state,
      clock: this.clock,
      ...(o.instanceId !== undefined ? { instanceId: o.instanceId } : {}),
      ...(o.eventClaimTtlMs !== undefined ? { ttlMs: o.eventClaimTtlMs } : {}),
      onError: this.onError,
    });
    this.dispatcher = new Dispatcher({
      state: this.state,
      claims: this.claims,
      waker: this.waker,
      bus: this.bus,
      store: o.store,
      sinks: o.sinks,
      inboxCap: o.inboxCap,
      dropPolicy: o.dropPolicy,
      defaultMode: o.defaultMode,
      modeOf: o.modeOf,
      onError: this.onError,
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

  deliver(inbound: InboundMessage, mode?: DeliveryMode): Promise<DeliverResult> {
    return this.dispatcher.deliver(inbound, mode);
  }

  handleEvent<T>(eventId: string, handle: () => Promise<T>): Promise<EventOutcome<T>> {
    return this.claims.once(eventId, handle);
  }

  control(threadKey: string, command: ControlCommand): Promise<ControlResult> {
    return this.dispatcher.control(threadKey, command);
  }

  status(threadKey: string): Promise<ThreadStatus> {
    return this.dispatcher.status(threadKey);
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
    const leaseTtlMs = o.leaseTtlMs ?? 15_000;
    const core = new WorkerCore({
      state: this.state,
      store: o.store,
      factory: o.agentFactory,
      sinks: o.sinks,
      format: o.format ?? plainInboundFormatter,
      resolveModel: o.resolveModel ?? findModel,
      fenceKey: (t) => this.keys.lease(t),
      leaseTtlMs,
      collectDebounceMs: o.collectDebounceMs ?? DEFAULT_COLLECT_WINDOW_MS,
      controlPollMs: o.controlPollMs ?? 1000,
      compaction: o.compaction,
      onError: this.onError,
      onLease: o.onLease,
      clock: this.clock,
      bus: this.bus,
      rewake: (t) => this.waker.wake(t),
      agentIdleMs: o.agentIdleMs,
      ...(o.finishOwed
        ? { journal: new RedisRenderJournal(this.redis, this.keys), finishOwed: o.finishOwed }
        : {}),
    });
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
    this.sweeping = this.sweepLoop(o.sweepIntervalMs ?? 5000);
  }

  /** Sweeps every `every` ms on the clock until `stop()`; a sweep in progress finishes first. */
  private async sweepLoop(every: number): Promise<void> {
    const signal = this.stopSweeping.signal;
    while (!signal.aborted) {
      try {
        await this.clock.sleep(every, signal);
      } catch {
        return;
      }
      await this.sweepOnce(every).catch((e: unknown) => this.onError(e, "sweeping pending threads"));
    }
  }

  /** One safety-net sweep (one process at a time); tests call it directly. */
  async sweepOnce(lockMs = 5000): Promise<string[]> {
    const got = await this.redis.set(this.keys.sweepLock, "1", "PX", Math.max(50, lockMs - 10), "NX");
    if (got !== "OK") return [];
    const minAge = 2 * (this.o.leaseTtlMs ?? 15_000);
    return this.waker.sweep(minAge);
  }

  /** Hands every held thread over and closes the queue, the worker and (if owned) the connection. */
  stop(options: { graceMs?: number } = {}): Promise<void> {
    this.stopped ??= this.doStop(options.graceMs ?? 30_000);
    return this.stopped;
  }

  /**
   * The stop order never uses a closed connection: the sweeper stops (a sweep in progress
   * finishes), then the holders hand over and the BullMQ worker finishes its jobs (their re-wakes
   * included), and only then are the connections closed.
   */
  private async doStop(graceMs: number): Promise<void> {
    this.stopSweeping.abort();
    await this.sweeping;
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
