/**
 * When schedules run, as UTC instants: wall-clock cron schedules keep their local time across the
 * DST changes of 2026 in Berlin and New York, cron-parser's handling of skipped and repeated times
 * is pinned (BullMQ fires with the same library), and `every`/`once` are plain arithmetic.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  countRunsBetween,
  lastRunAtOrBefore,
  nextRuns,
  type ScheduleSpec,
} from "../../../src/extensions/schedules/index.js";

const at = (instant: string) => Date.parse(instant);
const isos = (runs: number[]) => runs.map((ms) => new Date(ms).toISOString().replace(".000Z", "Z"));
const cron = (pattern: string, tz: string): ScheduleSpec => ({ kind: "cron", pattern, tz });

describe("nextRuns: weekday 09:00 across the DST changes", () => {
  it("Europe/Berlin: 08:00Z in winter, 07:00Z in summer (2026-03-29 and 2026-10-25)", () => {
    const spec = cron("0 9 * * 1-5", "Europe/Berlin");
    expect(isos(nextRuns(spec, at("2026-03-25T12:00:00Z"), 5))).toEqual([
      "2026-03-26T08:00:00Z",
      "2026-03-27T08:00:00Z",
      "2026-03-30T07:00:00Z",
      "2026-03-31T07:00:00Z",
      "2026-04-01T07:00:00Z",
    ]);
    expect(isos(nextRuns(spec, at("2026-10-21T12:00:00Z"), 4))).toEqual([
      "2026-10-22T07:00:00Z",
      "2026-10-23T07:00:00Z",
      "2026-10-26T08:00:00Z",
      "2026-10-27T08:00:00Z",
    ]);
  });

  it("America/New_York: 14:00Z in winter, 13:00Z in summer (2026-03-08 and 2026-11-01)", () => {
    const spec = cron("0 9 * * 1-5", "America/New_York");
    expect(isos(nextRuns(spec, at("2026-03-04T18:00:00Z"), 4))).toEqual([
      "2026-03-05T14:00:00Z",
      "2026-03-06T14:00:00Z",
      "2026-03-09T13:00:00Z",
      "2026-03-10T13:00:00Z",
    ]);
    expect(isos(nextRuns(spec, at("2026-10-28T18:00:00Z"), 4))).toEqual([
      "2026-10-29T13:00:00Z",
      "2026-10-30T13:00:00Z",
      "2026-11-02T14:00:00Z",
      "2026-11-03T14:00:00Z",
    ]);
  });
});

describe("nextRuns: cron-parser on times a DST change skips or repeats (pinned)", () => {
  it("a daily 02:30 in Berlin runs at 03:30 CEST on the spring-forward day, shifted by the gap", () => {
    // Not 03:00, where localDateTimeToInstant puts a skipped one-off time: cron-parser shifts by the
    // length of the gap, and BullMQ fires what cron-parser says.
    expect(isos(nextRuns(cron("30 2 * * *", "Europe/Berlin"), at("2026-03-27T12:00:00Z"), 3))).toEqual([
      "2026-03-28T01:30:00Z",
      "2026-03-29T01:30:00Z",
      "2026-03-30T00:30:00Z",
    ]);
  });

  it("a daily 02:30 in Berlin runs once on the fall-back day, at the first (CEST) 02:30", () => {
    expect(isos(nextRuns(cron("30 2 * * *", "Europe/Berlin"), at("2026-10-23T12:00:00Z"), 3))).toEqual([
      "2026-10-24T00:30:00Z",
      "2026-10-25T00:30:00Z",
      "2026-10-26T01:30:00Z",
    ]);
  });

  it("New York: a daily 02:30 runs at 03:30 EDT on 2026-03-08, a daily 01:30 once (EDT) on 2026-11-01", () => {
    expect(isos(nextRuns(cron("30 2 * * *", "America/New_York"), at("2026-03-07T12:00:00Z"), 2))).toEqual([
      "2026-03-08T07:30:00Z",
      "2026-03-09T06:30:00Z",
    ]);
    expect(isos(nextRuns(cron("30 1 * * *", "America/New_York"), at("2026-10-31T12:00:00Z"), 2))).toEqual([
      "2026-11-01T05:30:00Z",
      "2026-11-02T06:30:00Z",
    ]);
  });

  it("an hourly pattern runs every elapsed hour, twice in the repeated hour and once across the gap", () => {
    expect(isos(nextRuns(cron("0 * * * *", "Europe/Berlin"), at("2026-10-24T23:30:00Z"), 4))).toEqual([
      "2026-10-25T00:00:00Z",
      "2026-10-25T01:00:00Z",
      "2026-10-25T02:00:00Z",
      "2026-10-25T03:00:00Z",
    ]);
    expect(isos(nextRuns(cron("0 * * * *", "Europe/Berlin"), at("2026-03-28T23:30:00Z"), 3))).toEqual([
      "2026-03-29T00:00:00Z",
      "2026-03-29T01:00:00Z",
      "2026-03-29T02:00:00Z",
    ]);
  });

  it("a daily midnight in Santiago has no run on 2026-09-06, when midnight itself is skipped", () => {
    // cron-parser shifts a skipped 02:30 (above) but drops a skipped 00:00: the day has no run.
    expect(isos(nextRuns(cron("0 0 * * *", "America/Santiago"), at("2026-09-04T12:00:00Z"), 3))).toEqual([
      "2026-09-05T04:00:00Z",
      "2026-09-07T03:00:00Z",
      "2026-09-08T03:00:00Z",
    ]);
  });
});

describe("nextRuns: every, once and the edges", () => {
  const every: ScheduleSpec = {
    kind: "every",
    everyMs: 30 * 60_000,
    startAt: at("2026-12-03T23:00:00Z"),
    tz: "UTC",
  };

  it("every: startAt, then each interval after it, strictly after the given instant", () => {
    expect(isos(nextRuns(every, at("2026-12-03T22:00:00Z"), 3))).toEqual([
      "2026-12-03T23:00:00Z",
      "2026-12-03T23:30:00Z",
      "2026-12-04T00:00:00Z",
    ]);
    expect(isos(nextRuns(every, at("2026-12-03T23:30:00Z"), 2))).toEqual([
      "2026-12-04T00:00:00Z",
      "2026-12-04T00:30:00Z",
    ]);
    expect(isos(nextRuns(every, at("2026-12-03T23:31:00Z"), 1))).toEqual(["2026-12-04T00:00:00Z"]);
  });

  it("every: elapsed time, so its wall-clock time moves by an hour across a DST change", () => {
    const daily: ScheduleSpec = {
      kind: "every",
      everyMs: 86_400_000,
      startAt: at("2026-03-28T08:00:00Z"),
      tz: "Europe/Berlin",
    };
    expect(isos(nextRuns(daily, at("2026-03-28T00:00:00Z"), 2))).toEqual([
      "2026-03-28T08:00:00Z",
      "2026-03-29T08:00:00Z",
    ]);
  });

  it("once: its instant while it is ahead, then nothing", () => {
    const once: ScheduleSpec = { kind: "once", at: at("2026-12-24T08:00:00Z"), tz: "Europe/Berlin" };
    expect(nextRuns(once, at("2026-12-24T07:59:59Z"), 5)).toEqual([at("2026-12-24T08:00:00Z")]);
    expect(nextRuns(once, at("2026-12-24T08:00:00Z"), 5)).toEqual([]);
  });

  it("cron: a run exactly at the given instant is not after it", () => {
    expect(isos(nextRuns(cron("0 9 * * *", "UTC"), at("2026-05-01T09:00:00Z"), 1))).toEqual([
      "2026-05-02T09:00:00Z",
    ]);
    expect(isos(nextRuns(cron("0 9 * * *", "UTC"), at("2026-05-01T08:59:59.999Z"), 1))).toEqual([
      "2026-05-01T09:00:00Z",
    ]);
  });

  it("no runs for count 0, an invalid stored pattern, or an every without a positive interval", () => {
    expect(nextRuns(cron("0 9 * * *", "UTC"), 0, 0)).toEqual([]);
    expect(nextRuns(cron("61 * * * *", "UTC"), 0, 3)).toEqual([]);
    expect(nextRuns({ kind: "every", everyMs: 0, startAt: 0, tz: "UTC" }, 0, 3)).toEqual([]);
    expect(nextRuns({ kind: "every", everyMs: Number.NaN, startAt: 0, tz: "UTC" }, 0, 3)).toEqual([]);
  });
});

describe("lastRunAtOrBefore", () => {
  it("cron: the run at or before the instant, including the spring-forward day's shifted run", () => {
    const spec = cron("30 2 * * *", "Europe/Berlin");
    expect(lastRunAtOrBefore(spec, at("2026-03-29T12:00:00Z"))).toBe(at("2026-03-29T01:30:00Z"));
    expect(lastRunAtOrBefore(spec, at("2026-03-29T01:30:00Z"))).toBe(at("2026-03-29T01:30:00Z"));
    expect(lastRunAtOrBefore(spec, at("2026-03-29T01:29:59Z"))).toBe(at("2026-03-28T01:30:00Z"));
  });

  it("cron: on the fall-back day only the first 02:30 counts (cron-parser's prev() would say the second)", () => {
    const spec = cron("30 2 * * *", "Europe/Berlin");
    expect(lastRunAtOrBefore(spec, at("2026-10-25T12:00:00Z"))).toBe(at("2026-10-25T00:30:00Z"));
    expect(lastRunAtOrBefore(spec, at("2026-10-25T00:29:00Z"))).toBe(at("2026-10-24T00:30:00Z"));
  });

  it("cron: a yearly pattern reaches back a year", () => {
    expect(lastRunAtOrBefore(cron("0 0 1 1 *", "UTC"), at("2026-12-03T12:00:00Z"))).toBe(
      at("2026-01-01T00:00:00Z"),
    );
  });

  it("every and once", () => {
    const every: ScheduleSpec = {
      kind: "every",
      everyMs: 3_600_000,
      startAt: at("2026-12-03T10:00:00Z"),
      tz: "UTC",
    };
    expect(lastRunAtOrBefore(every, at("2026-12-03T09:59:59Z"))).toBeUndefined();
    expect(lastRunAtOrBefore(every, at("2026-12-03T10:00:00Z"))).toBe(at("2026-12-03T10:00:00Z"));
    expect(lastRunAtOrBefore(every, at("2026-12-03T12:59:59Z"))).toBe(at("2026-12-03T12:00:00Z"));
    const once: ScheduleSpec = { kind: "once", at: at("2026-12-24T08:00:00Z"), tz: "UTC" };
    expect(lastRunAtOrBefore(once, at("2026-12-24T07:59:59Z"))).toBeUndefined();
    expect(lastRunAtOrBefore(once, at("2026-12-24T08:00:00Z"))).toBe(at("2026-12-24T08:00:00Z"));
  });
});

describe("countRunsBetween", () => {
  it("counts runs in (from, to], up to the cap", () => {
    const weekdays = cron("0 9 * * 1-5", "Europe/Berlin");
    // Fri 27 March to Tue 31 March 2026, 12:00Z: Fri, Mon, Tue.
    expect(countRunsBetween(weekdays, at("2026-03-27T07:00:00Z"), at("2026-03-31T12:00:00Z"), 100)).toBe(3);
    expect(countRunsBetween(weekdays, at("2026-03-27T08:00:00Z"), at("2026-03-31T07:00:00Z"), 100)).toBe(2);
    expect(countRunsBetween(weekdays, at("2026-03-27T07:00:00Z"), at("2026-03-31T12:00:00Z"), 2)).toBe(2);
    expect(countRunsBetween(weekdays, at("2026-03-31T12:00:00Z"), at("2026-03-27T07:00:00Z"), 100)).toBe(0);
  });

  it("every: arithmetic, so a year of minutes costs nothing", () => {
    const minutely: ScheduleSpec = {
      kind: "every",
      everyMs: 60_000,
      startAt: at("2025-01-01T00:00:00Z"),
      tz: "UTC",
    };
    expect(countRunsBetween(minutely, at("2025-01-01T00:00:00Z"), at("2026-01-01T00:00:00Z"), 1e9)).toBe(
      365 * 24 * 60,
    );
    expect(countRunsBetween(minutely, at("2024-12-31T00:00:00Z"), at("2025-01-01T00:00:00Z"), 1e9)).toBe(1);
    expect(countRunsBetween(minutely, at("2025-01-01T00:00:00Z"), at("2026-01-01T00:00:00Z"), 1000)).toBe(
      1000,
    );
  });

  it("once: 1 when its instant is inside", () => {
    const once: ScheduleSpec = { kind: "once", at: 1000, tz: "UTC" };
    expect(countRunsBetween(once, 999, 1000, 5)).toBe(1);
    expect(countRunsBetween(once, 1000, 2000, 5)).toBe(0);
  });
});

describe("properties over zones with DST", () => {
  const patterns = [
    "0 9 * * 1-5",
    "30 2 * * *",
    "*/15 1-3 * * *",
    "0 * * * *",
    "30 1 * * 0",
    "0 0 1 * *",
    "5,35 0-4 * * 6,0",
  ];
  const zones = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Sydney",
    "America/Santiago",
    "Asia/Kolkata",
    "UTC",
  ];
  const arbitrary = fc.record({
    pattern: fc.constantFrom(...patterns),
    tz: fc.constantFrom(...zones),
    after: fc.integer({ min: at("2025-01-01T00:00:00Z"), max: at("2030-01-01T00:00:00Z") }),
  });

  it("runs are strictly ascending, after the start, and agree with lastRunAtOrBefore and countRunsBetween", () => {
    fc.assert(
      fc.property(arbitrary, ({ pattern, tz, after }) => {
        const spec = cron(pattern, tz);
        const runs = nextRuns(spec, after, 12);
        expect(runs).toHaveLength(12);
        let previous = after;
        for (const run of runs) {
          expect(run).toBeGreaterThan(previous);
          previous = run;
        }
        for (let i = 1; i < runs.length; i++) {
          const run = runs[i] as number;
          expect(lastRunAtOrBefore(spec, run)).toBe(run);
          expect(lastRunAtOrBefore(spec, run - 1)).toBe(runs[i - 1]);
        }
        expect(countRunsBetween(spec, after, runs[11] as number, 100)).toBe(12);
        expect(countRunsBetween(spec, after, (runs[11] as number) - 1, 100)).toBe(11);
      }),
      { numRuns: 60 },
    );
  });
});
