/**
 * How scheduled prompts behave in one deployment (`schedules:` in the config): the defaults a
 * person typing `/schedule` gets and the rules the runtime keeps for every schedule.
 */
import type { ScheduleLimits } from "./types.js";

export interface ScheduleSettings {
  /** The zone of schedules that name none (IANA, e.g. `Europe/Berlin`). */
  defaultTimeZone: string;
  /**
   * An occurrence that fell due while nothing ran (every process down): `once` runs the latest one
   * when things are back, `skip` runs none. Earlier ones are counted as missed; never a burst.
   */
  missed: "once" | "skip";
  /** A late occurrence within this of its instant runs whatever `missed` says (a restart, a slow start). */
  graceMs: number;
  /** A thread busy at an occurrence: `queue` the prompt after the run in progress, or `skip` it. */
  ifBusy: "queue" | "skip";
  limits: ScheduleLimits;
  /** The shortest interval a repeating schedule may have. */
  minIntervalMs: number;
  /** A scheduled run that answers exactly this (or nothing) posts nothing. "" turns it off. */
  quietMarker: string;
  /**
   * The waits between retries of an answer the platform refused to show (the prompt never runs
   * again for it); still refused after the last, the schedule is paused (its thread or channel is
   * likely gone).
   */
  deliveryRetryMs: readonly number[];
}

export const DEFAULT_SCHEDULE_SETTINGS: ScheduleSettings = {
  defaultTimeZone: "UTC",
  missed: "once",
  graceMs: 5 * 60_000,
  ifBusy: "queue",
  limits: { perThread: 10, perUser: 25 },
  minIntervalMs: 5 * 60_000,
  quietMarker: "NO_REPLY",
  deliveryRetryMs: [60_000, 5 * 60_000, 30 * 60_000, 2 * 60 * 60_000],
};
