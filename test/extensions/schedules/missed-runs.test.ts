/**
 * Starting after downtime: at most one run fires for everything missed (never a burst), a run that
 * is merely late (within the grace) always fires, and the count of dropped runs is capped so a long
 * outage of a frequent schedule costs bounded work.
 */
import { describe, expect, it } from "vitest";
import { catchUp, MISSED_RUNS_CAP, type ScheduleSpec } from "../../../src/extensions/schedules/index.js";

const at = (instant: string) => Date.parse(instant);
const HOUR = 3_600_000;
const daily: ScheduleSpec = { kind: "cron", pattern: "0 9 * * *", tz: "UTC" };
// Last handled Mon 2026-12-07 09:00; back on Thu 12:00: Tue, Wed and Thu 09:00 were missed.
const since = at("2026-12-07T09:00:00Z");
const now = at("2026-12-10T12:00:00Z");

describe("catchUp", () => {
  it('"once" fires the latest missed run and reports the others', () => {
    expect(catchUp(daily, since, now, { policy: "once", graceMs: HOUR })).toEqual({
      runAt: at("2026-12-10T09:00:00Z"),
      missed: 2,
    });
  });

  it('"skip" fires nothing and reports every missed run', () => {
    expect(catchUp(daily, since, now, { policy: "skip", graceMs: HOUR })).toEqual({
      runAt: undefined,
      missed: 3,
    });
  });

  it("a run within the grace is late, not missed: it fires under either policy", () => {
    for (const policy of ["once", "skip"] as const) {
      expect(catchUp(daily, since, now, { policy, graceMs: 3 * HOUR })).toEqual({
        runAt: at("2026-12-10T09:00:00Z"),
        missed: 2,
      });
      expect(catchUp(daily, since, at("2026-12-10T09:00:30Z"), { policy, graceMs: 60_000 })).toEqual({
        runAt: at("2026-12-10T09:00:00Z"),
        missed: 2,
      });
    }
    // Grace ends at exactly graceMs.
    expect(catchUp(daily, since, at("2026-12-10T09:01:00Z"), { policy: "skip", graceMs: 60_000 }).runAt).toBe(
      at("2026-12-10T09:00:00Z"),
    );
    expect(
      catchUp(daily, since, at("2026-12-10T09:01:00.001Z"), { policy: "skip", graceMs: 60_000 }).runAt,
    ).toBe(undefined);
  });

  it("nothing missed: no run and a count of 0", () => {
    const rules = { policy: "once", graceMs: HOUR } as const;
    expect(catchUp(daily, at("2026-12-10T09:00:00Z"), now, rules)).toEqual({ runAt: undefined, missed: 0 });
    expect(catchUp(daily, now, now, rules)).toEqual({ runAt: undefined, missed: 0 });
    expect(catchUp(daily, now, since, rules)).toEqual({ runAt: undefined, missed: 0 });
  });

  it("caps the count for a minutely cron down for a year, in bounded time", () => {
    const minutely: ScheduleSpec = { kind: "cron", pattern: "* * * * *", tz: "Europe/Berlin" };
    const started = performance.now();
    const result = catchUp(minutely, at("2025-12-10T12:00:00Z"), now, { policy: "once", graceMs: HOUR });
    expect(result).toEqual({ runAt: at("2026-12-10T12:00:00Z"), missed: MISSED_RUNS_CAP });
    expect(MISSED_RUNS_CAP).toBe(1000);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("every: the latest run on the interval grid, counted by arithmetic", () => {
    const every: ScheduleSpec = {
      kind: "every",
      everyMs: 5 * 60_000,
      startAt: at("2025-01-01T00:02:00Z"),
      tz: "UTC",
    };
    expect(catchUp(every, at("2026-12-10T10:00:00Z"), now, { policy: "once", graceMs: 0 })).toEqual({
      runAt: at("2026-12-10T11:57:00Z"),
      missed: 23,
    });
    expect(catchUp(every, at("2025-01-01T00:00:00Z"), now, { policy: "skip", graceMs: 0 })).toEqual({
      runAt: undefined,
      missed: MISSED_RUNS_CAP,
    });
  });

  it('once: fires late under "once", dropped under "skip", untouched while ahead or already handled', () => {
    const once: ScheduleSpec = { kind: "once", at: at("2026-12-09T08:00:00Z"), tz: "UTC" };
    expect(catchUp(once, since, now, { policy: "once", graceMs: HOUR })).toEqual({
      runAt: once.at,
      missed: 0,
    });
    expect(catchUp(once, since, now, { policy: "skip", graceMs: HOUR })).toEqual({
      runAt: undefined,
      missed: 1,
    });
    expect(catchUp(once, since, at("2026-12-09T07:00:00Z"), { policy: "once", graceMs: HOUR })).toEqual({
      runAt: undefined,
      missed: 0,
    });
    expect(catchUp(once, once.at, now, { policy: "once", graceMs: HOUR })).toEqual({
      runAt: undefined,
      missed: 0,
    });
  });

  it("across the fall-back night, counts the repeated 02:30 once, as it fires", () => {
    const nightly: ScheduleSpec = { kind: "cron", pattern: "30 2 * * *", tz: "Europe/Berlin" };
    expect(
      catchUp(nightly, at("2026-10-23T12:00:00Z"), at("2026-10-26T12:00:00Z"), {
        policy: "once",
        graceMs: HOUR,
      }),
    ).toEqual({ runAt: at("2026-10-26T01:30:00Z"), missed: 2 });
  });
});
