/**
 * When a schedule runs, as pure arithmetic over instants: the same answers for the `/schedule`
 * preview, the embedded scheduler and the catch-up after downtime.
 */
import { nextCronRun, previousCronRunHint } from "./cron.js";
import type { ScheduleSpec } from "./spec.js";

const HOUR_MS = 3_600_000;
// DST shifts are at most two hours; stepping forward from this far before cron-parser's prev()
// hint finds the run its prev() skipped or misplaced on a DST night.
const PREV_HINT_SLACK_MS = 3 * HOUR_MS;
// A minutely pattern over the slack window takes 180 steps; more means the pattern is pathological.
const MAX_FORWARD_STEPS = 10_000;

const validEvery = (spec: { everyMs: number; startAt: number }) =>
  Number.isFinite(spec.everyMs) && spec.everyMs > 0 && Number.isFinite(spec.startAt);

/** Index of the first `every` run strictly after `ms`. */
const firstEveryIndexAfter = (spec: { everyMs: number; startAt: number }, ms: number) =>
  ms < spec.startAt ? 0 : Math.floor((ms - spec.startAt) / spec.everyMs) + 1;

/**
 * The next `count` runs strictly after `afterMs`, ascending (fewer when the schedule ends: a `once`
 * at or before `afterMs` has none). Cron runs are stepped as BullMQ steps them, so this is the list
 * BullMQ will fire; a pattern cron-parser rejects, or an `every` without a positive interval, has
 * no runs rather than throwing, because a stored spec must never take a scheduler loop down.
 */
export function nextRuns(spec: ScheduleSpec, afterMs: number, count: number): number[] {
  const runs: number[] = [];
  const wanted = Math.floor(count);
  if (!(wanted > 0)) return runs;
  switch (spec.kind) {
    case "once":
      if (spec.at > afterMs) runs.push(spec.at);
      break;
    case "every": {
      if (!validEvery(spec)) break;
      const first = firstEveryIndexAfter(spec, afterMs);
      for (let i = 0; i < wanted; i++) runs.push(spec.startAt + (first + i) * spec.everyMs);
      break;
    }
    case "cron": {
      let cursor = afterMs;
      while (runs.length < wanted) {
        const next = nextCronRun(spec.pattern, spec.tz, cursor);
        if (next === undefined) break;
        runs.push(next);
        cursor = next;
      }
      break;
    }
  }
  return runs;
}

/**
 * The latest run at or before `ms`, or undefined when there is none (a `once` still ahead, an
 * `every` before its `startAt`). For cron it is a run `nextRuns` would list, even on DST nights
 * where cron-parser's own `prev()` answers differently.
 */
export function lastRunAtOrBefore(spec: ScheduleSpec, ms: number): number | undefined {
  switch (spec.kind) {
    case "once":
      return spec.at <= ms ? spec.at : undefined;
    case "every":
      if (!validEvery(spec) || ms < spec.startAt) return undefined;
      return spec.startAt + Math.floor((ms - spec.startAt) / spec.everyMs) * spec.everyMs;
    case "cron":
      return lastCronRunAtOrBefore(spec.pattern, spec.tz, ms);
  }
}

function lastCronRunAtOrBefore(pattern: string, tz: string, ms: number): number | undefined {
  let before = ms + 1;
  // A hint too late (a DST-misplaced run) just moves the search window further back, a few times.
  for (let attempt = 0; attempt < 4; attempt++) {
    const hint = previousCronRunHint(pattern, tz, before);
    if (hint === undefined) return undefined;
    const from = hint - PREV_HINT_SLACK_MS;
    let last: number | undefined;
    let cursor = from;
    for (let step = 0; step < MAX_FORWARD_STEPS; step++) {
      const next = nextCronRun(pattern, tz, cursor);
      if (next === undefined || next > ms) break;
      last = next;
      cursor = next;
    }
    if (last !== undefined) return last;
    before = from;
  }
  return undefined;
}

/**
 * How many runs fall in (`fromExclusive`, `toInclusive`], counting no further than `cap` (the
 * answer is then `cap`), so a minutely schedule over a year of downtime costs `cap` steps at most.
 */
export function countRunsBetween(
  spec: ScheduleSpec,
  fromExclusive: number,
  toInclusive: number,
  cap: number,
): number {
  const limit = Math.floor(cap);
  if (!(limit > 0) || !(toInclusive > fromExclusive)) return 0;
  switch (spec.kind) {
    case "once":
      return spec.at > fromExclusive && spec.at <= toInclusive ? 1 : 0;
    case "every": {
      if (!validEvery(spec) || toInclusive < spec.startAt) return 0;
      const first = firstEveryIndexAfter(spec, fromExclusive);
      const last = Math.floor((toInclusive - spec.startAt) / spec.everyMs);
      return Math.min(limit, Math.max(0, last - first + 1));
    }
    case "cron": {
      let count = 0;
      let cursor = fromExclusive;
      while (count < limit) {
        const next = nextCronRun(spec.pattern, spec.tz, cursor);
        if (next === undefined || next > toInclusive) break;
        count++;
        cursor = next;
      }
      return count;
    }
  }
}
