/**
 * What a scheduler does on start about runs that fell while everything was down: at most one run,
 * never a burst, because a prompt repeated for every missed hour helps nobody.
 */
import { countRunsBetween, lastRunAtOrBefore } from "./next-runs.js";
import type { ScheduleSpec } from "./spec.js";

/** How far back `missed` counts: a minutely schedule down for a year stops counting here. */
export const MISSED_RUNS_CAP = 1000;

/**
 * `policy` for runs missed longer ago than `graceMs`: "once" runs one catch-up, "skip" drops them.
 * A run no older than `graceMs` is treated as merely late and always runs.
 */
export interface CatchUpRules {
  policy: "once" | "skip";
  graceMs: number;
}

/**
 * For runs in (`sinceMs`, `nowMs`] (since the last run handled, up to now): `runAt` is the one run
 * to fire now, or undefined for none, and `missed` how many of those runs will not fire (at most
 * `MISSED_RUNS_CAP`), to report. The latest missed run within `graceMs` of `nowMs` always fires;
 * otherwise "once" fires the latest and "skip" none. Later runs are the caller's `nextRuns(spec,
 * nowMs, …)`.
 */
export function catchUp(
  spec: ScheduleSpec,
  sinceMs: number,
  nowMs: number,
  rules: CatchUpRules,
): { runAt: number | undefined; missed: number } {
  const latest = lastRunAtOrBefore(spec, nowMs);
  if (latest === undefined || latest <= sinceMs) return { runAt: undefined, missed: 0 };
  const due = countRunsBetween(spec, sinceMs, nowMs, MISSED_RUNS_CAP + 1);
  const runs = nowMs - latest <= rules.graceMs || rules.policy === "once";
  return {
    runAt: runs ? latest : undefined,
    missed: Math.min(MISSED_RUNS_CAP, Math.max(0, due - (runs ? 1 : 0))),
  };
}
