/**
 * What a schedule is, as data: when it runs (`ScheduleSpec`) and what it asks (`ParsedSchedule`).
 * Plain JSON, so the stores keep it as it is and BullMQ's job schedulers get their options from it.
 */

/** When a schedule runs: a cron pattern in a zone, a fixed interval from `startAt`, or once at `at`. */
export type ScheduleSpec =
  | { kind: "cron"; pattern: string; tz: string }
  | { kind: "every"; everyMs: number; startAt: number; tz: string }
  | { kind: "once"; at: number; tz: string };

/** A schedule as `/schedule` parsed it: when, the prompt, and a short human phrase for both. */
export interface ParsedSchedule {
  spec: ScheduleSpec;
  prompt: string;
  description: string;
}
