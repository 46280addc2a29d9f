/**
 * `ScheduleStore` for the embedded mode (no Redis): every record in memory, kept in one JSON file
 * (schedules-file.ts; `<dataDir>/schedules.json` as the runtime names it). Each method changes
 * memory in one synchronous step, before its first await, which makes it atomic in the one process
 * that owns the file; then the whole file is rewritten (temporary file, rename) and the method
 * resolves once a write made after its change is in place. Writes run one after another; a change
 * made while one is under way waits for the next, which carries every change queued so far. A write
 * that fails rejects its callers and leaves memory changed: the next write carries the change again.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { compareSchedules, countsAgainstLimits, scheduleUser } from "./indexing.js";
import { readSchedulesFile, writeSchedulesFile } from "./schedules-file.js";
import type { CreateOutcome, ScheduleLimits, ScheduleRecord, ScheduleRun, ScheduleStore } from "./types.js";

/**
 * The schedules of one process, in the file at `path`. The constructor creates its directory and
 * loads the file (none: no schedules); it throws when the file is damaged (the Error names the file
 * and says to move it aside), leaving the decision to the caller. Records go in and out as copies:
 * a caller's later change to its object never reaches the store.
 */
export class FileScheduleStore implements ScheduleStore {
  private readonly records = new Map<string, ScheduleRecord>();
  /** The last write queued or under way; never rejects (its callers got the failure). */
  private writes: Promise<void> = Promise.resolve();
  /** A write queued and not started yet, which a new change may join. */
  private queued: Promise<void> | undefined;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    for (const record of readSchedulesFile(path)) this.records.set(record.id, record);
  }

  async create(record: ScheduleRecord, limits: ScheduleLimits): Promise<CreateOutcome> {
    if (this.records.has(record.id)) return { ok: false, reason: "exists" };
    if (countsAgainstLimits(record)) {
      const counted = [...this.records.values()].filter(countsAgainstLimits);
      const inThread = counted.filter((r) => r.target.threadKey === record.target.threadKey).length;
      if (inThread >= limits.perThread) return { ok: false, reason: "thread", limit: limits.perThread };
      const user = scheduleUser(record);
      const byUser = counted.filter((r) => scheduleUser(r) === user).length;
      if (byUser >= limits.perUser) return { ok: false, reason: "user", limit: limits.perUser };
    }
    this.records.set(record.id, structuredClone(record));
    await this.persist();
    return { ok: true };
  }

  async put(record: ScheduleRecord): Promise<void> {
    this.records.set(record.id, structuredClone(record));
    await this.persist();
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const record = this.records.get(id);
    return record && structuredClone(record);
  }

  async listByThread(threadKey: string): Promise<ScheduleRecord[]> {
    return this.list((r) => r.target.threadKey === threadKey);
  }

  async listAll(): Promise<ScheduleRecord[]> {
    return this.list(() => true);
  }

  async setPaused(id: string, paused: boolean, reason?: string): Promise<ScheduleRecord | undefined> {
    const current = this.records.get(id);
    if (!current) return undefined;
    const { pausedReason: _dropped, ...rest } = current;
    const next: ScheduleRecord = { ...rest, paused };
    if (paused && reason !== undefined) next.pausedReason = reason;
    this.records.set(id, next);
    await this.persist();
    return structuredClone(next);
  }

  async claimOccurrence(
    id: string,
    occurrence: number,
    run: ScheduleRun,
    missedBefore: number,
  ): Promise<ScheduleRecord | undefined> {
    const before = this.records.get(id);
    if (!before || before.paused) return undefined;
    if (before.lastOccurrence !== undefined && occurrence <= before.lastOccurrence) return undefined;
    this.records.set(id, {
      ...before,
      lastOccurrence: occurrence,
      lastRun: structuredClone(run),
      runs: before.runs + (run.status === "skipped" ? 0 : 1),
      missed: before.missed + missedBefore,
    });
    await this.persist();
    // `before` is no longer in the map, so it is the caller's to keep.
    return before;
  }

  async updateRun(
    id: string,
    occurrence: number,
    patch: Partial<Omit<ScheduleRun, "occurrence">>,
  ): Promise<boolean> {
    const current = this.records.get(id);
    if (!current?.lastRun || current.lastRun.occurrence !== occurrence) return false;
    const run: ScheduleRun = { ...current.lastRun };
    // As JSON carries it to Redis: an undefined field is no change, and the occurrence stays.
    for (const [key, value] of Object.entries(patch))
      if (value !== undefined && key !== "occurrence") Object.assign(run, { [key]: value });
    this.records.set(id, { ...current, lastRun: run });
    await this.persist();
    return true;
  }

  async findByRun(threadKey: string, runId: string): Promise<ScheduleRecord | undefined> {
    return (await this.listByThread(threadKey)).find((r) => r.lastRun?.runId === runId);
  }

  async remove(id: string): Promise<boolean> {
    if (!this.records.delete(id)) return false;
    await this.persist();
    return true;
  }

  /** Resolves once every write so far has ended. */
  async close(): Promise<void> {
    await this.writes;
  }

  private list(keep: (r: ScheduleRecord) => boolean): ScheduleRecord[] {
    return [...this.records.values()]
      .filter(keep)
      .sort(compareSchedules)
      .map((r) => structuredClone(r));
  }

  /** Writes the file after the writes before; the state is taken when the write starts. */
  private persist(): Promise<void> {
    if (!this.queued) {
      const write = this.writes.then(() => {
        this.queued = undefined;
        return writeSchedulesFile(this.path, [...this.records.values()]);
      });
      this.queued = write;
      this.writes = write.catch(() => {});
    }
    return this.queued;
  }
}
