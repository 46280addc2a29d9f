/**
 * In Redis mode BullMQ's job schedulers fire cron schedules, stepping each run from the previous one
 * with its `getNextMillis`; the times Switchboard shows must be those. Checked over consecutive runs
 * of patterns and zones chosen to cross DST changes. (`every` is not compared: BullMQ computes its
 * runs in a Lua script from `startDate`, not with `getNextMillis`.)
 */
import { getNextMillis } from "bullmq";
import { describe, expect, it } from "vitest";
import { nextRuns } from "../../../src/extensions/schedules/index.js";

const RUNS = 12;

/** BullMQ's own sequence: each run computed from the one before, as its scheduler does. */
function bullmqRuns(pattern: string, tz: string, afterMs: number, count: number): number[] {
  const runs: number[] = [];
  let millis = afterMs;
  for (let i = 0; i < count; i++) {
    const next = getNextMillis(millis, { pattern, tz });
    if (next === undefined) break;
    runs.push(next);
    millis = next;
  }
  return runs;
}

const cases: [pattern: string, tz: string, after: string][] = [
  ["0 9 * * 1-5", "Europe/Berlin", "2026-03-25T12:00:00Z"],
  ["0 9 * * 1-5", "Europe/Berlin", "2026-10-21T12:00:00Z"],
  ["0 9 * * 1-5", "America/New_York", "2026-03-04T18:00:00Z"],
  ["0 9 * * 1-5", "America/New_York", "2026-10-28T18:00:00Z"],
  ["30 2 * * *", "Europe/Berlin", "2026-03-24T12:00:00Z"],
  ["30 2 * * *", "Europe/Berlin", "2026-10-20T12:00:00Z"],
  ["30 1 * * *", "America/New_York", "2026-10-27T12:00:00Z"],
  ["*/30 * * * *", "Europe/Berlin", "2026-10-25T00:10:00Z"],
  ["*/20 1-3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z"],
  ["0 * * * *", "America/New_York", "2026-11-01T03:00:00Z"],
  ["0 0 * * *", "America/Santiago", "2026-09-01T12:00:00Z"],
  ["0 18 * * 1,3,5", "Australia/Sydney", "2026-04-01T00:00:00Z"],
  ["0 0 1 * *", "Asia/Kolkata", "2026-01-15T00:00:00Z"],
  ["15 10 L * *", "UTC", "2026-01-15T00:00:00Z"],
  ["0 9 * * 1#2", "Europe/London", "2026-01-15T00:00:00Z"],
  ["0 12 * * MON-FRI", "Asia/Tokyo", "2026-12-03T22:39:00Z"],
];

describe("cron runs agree with BullMQ's getNextMillis", () => {
  it.each(cases)("%s in %s from %s", (pattern, tz, after) => {
    const afterMs = Date.parse(after);
    const ours = nextRuns({ kind: "cron", pattern, tz }, afterMs, RUNS);
    expect(ours).toHaveLength(RUNS);
    expect(ours).toEqual(bullmqRuns(pattern, tz, afterMs, RUNS));
  });
});
