/**
 * The firing engine of scheduled prompts: calls back at each occurrence of each armed schedule. In
 * Redis mode BullMQ's job schedulers (`BullScheduleTimer`), so that several processes fire each
 * occurrence once; in embedded mode a timer on the `Clock` over the data directory's records
 * (`LocalScheduleTimer`). Neither decides whether an occurrence runs: `ScheduleService.fire` does
 * (the fence, the missed-run policy), so a timer may call back twice or late and nothing runs twice.
 */
import type { ScheduleRecord } from "./types.js";

/** Called at an occurrence: the schedule's id and the instant it was due (ms). */
export type FireFn = (id: string, occurrence: number) => Promise<void>;

export interface ScheduleTimer {
  /**
   * Begins calling `fire`. `records` are every schedule there is: the timer arms those not paused
   * and calls back at once for occurrences that fell due while nothing ran (the latest one of each
   * schedule, never a burst), so that the missed-run policy decides about it.
   */
  start(fire: FireFn, records: readonly ScheduleRecord[]): Promise<void>;
  /** Arms (or re-arms, after a resume) a schedule: its next occurrences after now fire. */
  arm(record: ScheduleRecord): Promise<void>;
  /** Fires nothing more for schedule `id` (paused or removed). */
  disarm(id: string): Promise<void>;
  /** Stops calling back; resolves once a callback in progress ended. */
  close(): Promise<void>;
}
