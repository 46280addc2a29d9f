/**
 * The Redis mode's firing engine: BullMQ's job schedulers, the engine the runtime already runs on,
 * so that any number of gateway and worker processes fire each occurrence once (BullMQ keeps one
 * delayed job per scheduler and id, whoever upserts it). A cron schedule is a scheduler with
 * `{ pattern, tz }`, an interval one with `{ every, startDate }`, a one-off a delayed job. The job
 * carries the schedule's id; the occurrence is the instant BullMQ scheduled it for (`prevMillis`).
 * Processes that run workers also run this queue's worker (`start`); the others only arm and disarm.
 */
import { type Job, Queue, Worker } from "bullmq";
import type { RedisClient } from "../redis/client.js";
import { duplicateClient } from "../redis/client.js";
import type { FireFn, ScheduleTimer } from "./timer.js";
import type { ScheduleRecord } from "./types.js";

/** BullMQ's name of the schedules queue (beside the runs queue, under the same prefix). */
const SCHEDULES_QUEUE = "schedules";

interface ScheduleJobData {
  id: string;
  /** One-off jobs only: the instant it is due (scheduler jobs carry theirs as `prevMillis`). */
  at?: number;
}

/** The job id of a one-off schedule's delayed job (BullMQ ids must not contain `:`). */
function onceJobId(id: string): string {
  return `once-${id}`;
}

/**
 * The instant a job was scheduled for: a one-off's `at`; a scheduler's job carries it in its id
 * (`repeat:<scheduler id>:<ms>`, BullMQ's own naming, which it keeps unique per occurrence); the
 * job's `prevMillis` where a BullMQ version sets it.
 */
function occurrenceOf(job: Job<ScheduleJobData>): number | undefined {
  if (typeof job.data?.at === "number") return job.data.at;
  const fromId = Number(/:(\d+)$/.exec(job.id ?? "")?.[1]);
  if (Number.isSafeInteger(fromId) && fromId > 0) return fromId;
  return typeof job.opts.prevMillis === "number" ? job.opts.prevMillis : undefined;
}

export interface BullScheduleTimerOptions {
  /** The caller's connection; the timer duplicates it for BullMQ (and closes its duplicates). */
  redis: RedisClient;
  /** BullMQ's prefix: the runs queue's, so a cluster keeps both queues' keys in one slot each. */
  prefix: string;
  onError: (error: unknown, context: string) => void;
  /** The clock of `delay` for one-off jobs (ms); default `Date.now`. */
  now?: () => number;
  /**
   * How long a worker holds a schedule job before BullMQ counts it stalled (its worker died) and
   * hands it to another; default 10 s (the stalled check runs every half of it), so an occurrence
   * whose worker died is fired again within about 15 s, long before the next one of any schedule
   * the minimum interval allows.
   */
  lockDurationMs?: number;
}

export class BullScheduleTimer implements ScheduleTimer {
  private readonly connection: RedisClient;
  private readonly queue: Queue<ScheduleJobData>;
  private worker: Worker<ScheduleJobData> | undefined;
  private workerConnection: RedisClient | undefined;
  private readonly now: () => number;

  constructor(private readonly o: BullScheduleTimerOptions) {
    this.now = o.now ?? Date.now;
    this.connection = duplicateClient(o.redis, { maxRetriesPerRequest: null, autoPipelining: false });
    this.queue = new Queue<ScheduleJobData>(SCHEDULES_QUEUE, {
      connection: this.connection,
      prefix: o.prefix,
      streams: { events: { maxLen: 100 } },
    });
    this.queue.on("error", (e) => o.onError(e, "the schedules queue"));
  }

  async start(fire: FireFn, records: readonly ScheduleRecord[]): Promise<void> {
    if (this.worker) return;
    // Schedulers that exist keep their pending job: re-upserting one would replace an occurrence
    // that fell due while nothing ran (which the missed-run policy must see) with the next one.
    for (const r of records) {
      if (r.paused) continue;
      const exists =
        r.spec.kind === "once"
          ? (await this.queue.getJob(onceJobId(r.id))) !== undefined
          : (await this.queue.getJobScheduler(r.id)) !== undefined;
      if (!exists && !(r.spec.kind === "once" && r.lastOccurrence !== undefined)) await this.arm(r);
    }
    this.workerConnection = duplicateClient(this.o.redis, {
      maxRetriesPerRequest: null,
      autoPipelining: false,
    });
    const worker = new Worker<ScheduleJobData>(
      SCHEDULES_QUEUE,
      async (job: Job<ScheduleJobData>) => {
        const id = job.data?.id;
        const occurrence = occurrenceOf(job);
        if (typeof id !== "string" || typeof occurrence !== "number") return;
        await fire(id, occurrence);
      },
      {
        connection: this.workerConnection,
        prefix: this.o.prefix,
        concurrency: 8,
        autorun: false,
        lockDuration: this.o.lockDurationMs ?? 10_000,
        stalledInterval: Math.max(100, Math.floor((this.o.lockDurationMs ?? 10_000) / 2)),
        maxStalledCount: 5,
      },
    );
    worker.on("error", (e) => this.o.onError(e, "the schedules worker"));
    worker.on("failed", (job, e) => this.o.onError(e, `schedule job ${job?.id ?? "?"}`));
    this.worker = worker;
    void worker.run().catch((e: unknown) => this.o.onError(e, "running the schedules worker"));
    await worker.waitUntilReady();
  }

  async arm(record: ScheduleRecord): Promise<void> {
    const { spec, id } = record;
    // A failed fire (Redis unreachable for a moment) is tried again; the service's fence makes a
    // repeat harmless. Finished jobs are not kept: the schedule's record says how each run went.
    const opts = {
      attempts: 5,
      backoff: { type: "exponential", delay: 1000 },
      removeOnComplete: true,
      removeOnFail: 100,
    };
    if (spec.kind === "once") {
      await this.queue.add(
        "schedule",
        { id, at: spec.at },
        { ...opts, jobId: onceJobId(id), delay: Math.max(0, spec.at - this.now()) },
      );
      return;
    }
    const repeat =
      spec.kind === "cron"
        ? { pattern: spec.pattern, tz: spec.tz }
        : { every: spec.everyMs, startDate: spec.startAt };
    await this.queue.upsertJobScheduler(id, repeat, { name: "schedule", data: { id }, opts });
  }

  async disarm(id: string): Promise<void> {
    await this.queue.removeJobScheduler(id);
    await this.queue.remove(onceJobId(id));
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    await Promise.all([
      this.connection.quit().catch(() => {}),
      this.workerConnection?.quit().catch(() => {}),
    ]);
  }
}
