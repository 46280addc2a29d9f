/**
 * What a schedule is, as data: plain JSON-safe values (epoch milliseconds, an IANA zone name), so a
 * spec can be persisted locally or handed to BullMQ's job schedulers unchanged.
 */

/**
 * When a scheduled prompt runs. `cron` is a 5-field pattern read by cron-parser in `tz` (the
 * library BullMQ fires job schedulers with, so previews and firings agree); `every` runs at
 * `startAt`, `startAt + everyMs`, … in elapsed time, so its wall-clock time drifts across DST
 * changes; `once` runs at `at`. `tz` is always a canonical IANA name: for `every` and `once` it only
 * decides how times are shown.
 */
export type ScheduleSpec =
  | { kind: "cron"; pattern: string; tz: string }
  | { kind: "every"; everyMs: number; startAt: number; tz: string }
  | { kind: "once"; at: number; tz: string };

/**
 * A `/schedule` argument understood: the spec, the prompt to send when it runs (never empty, kept
 * as written apart from the surrounding whitespace), and a short phrase that tells the user what
 * was understood ("every weekday at 09:00 (Europe/Berlin)").
 */
export interface ParsedSchedule {
  spec: ScheduleSpec;
  prompt: string;
  description: string;
}
