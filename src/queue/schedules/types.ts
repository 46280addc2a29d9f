/**
 * Scheduled prompts as the runtime keeps them: one record per schedule (where it runs, who made it,
 * when, what it asks, how its last run went) in a `ScheduleStore`, and the firing engine that calls
 * back at each occurrence (`ScheduleTimer`: BullMQ's job schedulers in Redis mode, a persisted
 * local timer on the `Clock` in embedded mode). docs/scheduling.md says what users see.
 */
import type { Platform } from "../../adapters/types.js";
import type { ScheduleSpec } from "../../extensions/schedules/spec.js";

/** Where a schedule's runs go: the thread that made it, as an inbound message needs it. */
export interface ScheduleTarget {
  platform: Platform;
  threadKey: string;
  channelId: string;
  isDirect: boolean;
}

/** Who made a schedule (whose message each run is), or the operator for config schedules. */
export interface ScheduleOwner {
  id: string;
  name?: string;
}

/**
 * How one occurrence went. `queued`: delivered into the thread, its run not ended yet; `answered`:
 * the run ended with an answer; `quiet`: it ended with nothing to post (empty, or the quiet
 * marker); `failed`: the model or a tool failed the run (`detail` says how); `skipped`: not run
 * (`detail`: missed while down, thread busy, inbox full). `delivery`: whether the answer reached
 * the chat: `pending` until the run ends, `shown` once the platform confirmed it, `owed` while a
 * post the platform refused waits to be retried (never by running the prompt again), `none` when
 * there was nothing to post.
 */
export interface ScheduleRun {
  occurrence: number;
  firedAt: number;
  status: "queued" | "answered" | "quiet" | "failed" | "skipped";
  detail?: string;
  runId?: string;
  delivery?: "pending" | "shown" | "owed" | "none";
  /** When the delivery last changed (a retried post that got through, say). */
  deliveredAt?: number;
}

/** Where a schedule came from: `/schedule` in chat, or the operators' `schedules.jobs` in the config. */
export type ScheduleOrigin = "chat" | "config";

/**
 * One schedule. `lastOccurrence` is the newest occurrence handled (run or skipped): the fence that
 * makes each occurrence run once, whatever fires it twice (a BullMQ job retried after a crash, a
 * restart of the embedded timer). `paused` schedules fire nothing; `pausedReason` says why when
 * the runtime paused it (the thread is gone), absent when a person did.
 */
export interface ScheduleRecord {
  id: string;
  origin: ScheduleOrigin;
  target: ScheduleTarget;
  owner: ScheduleOwner;
  spec: ScheduleSpec;
  prompt: string;
  description: string;
  createdAt: number;
  paused: boolean;
  pausedReason?: string;
  lastOccurrence?: number;
  lastRun?: ScheduleRun;
  /** Occurrences not run because everything was down at the time (the missed-run policy). */
  missed: number;
  /** Occurrences run. */
  runs: number;
}

/**
 * The most schedules one thread and one person may have (chat schedules only; config ones never
 * count). A person is `<platform>:<owner id>` (`scheduleUser`), counted over every thread.
 */
export interface ScheduleLimits {
  perThread: number;
  perUser: number;
}

export type CreateOutcome =
  | { ok: true }
  | { ok: false; reason: "thread" | "user"; limit: number }
  | { ok: false; reason: "exists" };

/**
 * The schedules' durable records, shared by every process of a deployment (Redis) or kept in the
 * data directory (embedded). Every method is atomic on its own: `create` checks the limits in the
 * same step that adds; `claimOccurrence` is the exactly-once fence. Implementations:
 * `FileScheduleStore`, `RedisScheduleStore`; test/queue/schedules/schedule-store-contract.ts runs
 * both.
 */
export interface ScheduleStore {
  /**
   * Adds `record` unless its id exists (`exists`, checked first) or a chat schedule would pass
   * `limits` (config ones skip them): the thread's chat schedules are counted first (`thread`), then
   * the owner's across every thread (`user`); `limit` is the one reached.
   */
  create(record: ScheduleRecord, limits: ScheduleLimits): Promise<CreateOutcome>;
  /**
   * Adds or replaces a record by id without limits (config schedules, kept in step with the config).
   * The record is replaced whole; when its thread or owner changed, it is listed and counted under
   * the new ones only.
   */
  put(record: ScheduleRecord): Promise<void>;
  get(id: string): Promise<ScheduleRecord | undefined>;
  /** The schedules of one thread, oldest first (by `createdAt`, then by id). */
  listByThread(threadKey: string): Promise<ScheduleRecord[]>;
  /** Every schedule, oldest first (by `createdAt`, then by id). */
  listAll(): Promise<ScheduleRecord[]>;
  /**
   * Pauses (with the runtime's `reason`, or none when a person did: a reason from before is dropped)
   * or resumes (the reason dropped); the record after, or undefined when gone.
   */
  setPaused(id: string, paused: boolean, reason?: string): Promise<ScheduleRecord | undefined>;
  /**
   * The fence: when the schedule exists, is not paused and `occurrence` is newer than its
   * `lastOccurrence` (greater; any is newer when there is none), records it as handled
   * (`lastOccurrence`, `lastRun` = `run`, `runs` + 1 unless `run.status` is `skipped`, `missed` +
   * `missedBefore`) and returns the record as it was before; otherwise changes nothing and returns
   * undefined.
   */
  claimOccurrence(
    id: string,
    occurrence: number,
    run: ScheduleRun,
    missedBefore: number,
  ): Promise<ScheduleRecord | undefined>;
  /**
   * Updates `lastRun` of the occurrence `occurrence` with `patch` (a newer occurrence's run is left
   * alone; fields given as undefined are left as they are); false when the record is gone or its
   * last run is another occurrence.
   */
  updateRun(
    id: string,
    occurrence: number,
    patch: Partial<Omit<ScheduleRun, "occurrence">>,
  ): Promise<boolean>;
  /**
   * The schedule of thread `threadKey` whose last run has `runId`, for delivery reports that arrive
   * with only the run's id; undefined when none (an older run's id is not kept).
   */
  findByRun(threadKey: string, runId: string): Promise<ScheduleRecord | undefined>;
  /** Removes the record; false when there was none. */
  remove(id: string): Promise<boolean>;
  close(): Promise<void>;
}
