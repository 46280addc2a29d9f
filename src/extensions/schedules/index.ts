/**
 * Scheduled prompts, the pure part: reading `/schedule` arguments into specs and computing when a
 * spec runs, with no clock and no I/O, so the chat command, BullMQ's job schedulers and the embedded
 * scheduler all share one set of answers.
 */
export { catchUp, MISSED_RUNS_CAP } from "./missed-runs.js";
export { countRunsBetween, lastRunAtOrBefore, nextRuns } from "./next-runs.js";
export { type ParseResult, parseSchedule } from "./parse.js";
export type { ScheduleSpec } from "./spec.js";
export {
  canonicalTimeZone,
  formatInstant,
  type LocalDateTime,
  localDateTimeAt,
  localDateTimeToInstant,
} from "./time-zone.js";
