/**
 * `periodWindow` and `dayOf`: the day or month containing an instant in an IANA zone, from the
 * zone's own midnight, 23 or 25 hours long on a DST change, starting at 01:00 where a change skips
 * midnight.
 */
import { describe, expect, it } from "vitest";
import { assertTimeZone, dayOf, periodWindow } from "../../../src/queue/budgets/periods.js";
import type { BudgetPeriod } from "../../../src/queue/budgets/types.js";

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;

function window(period: BudgetPeriod, iso: string, tz: string) {
  const w = periodWindow(period, at(iso), tz);
  return {
    start: new Date(w.start).toISOString(),
    end: new Date(w.end).toISOString(),
    hours: (w.end - w.start) / HOUR,
  };
}

describe("periodWindow: days", () => {
  it.each([
    ["UTC", "2026-03-10T12:00:00Z", "2026-03-10T00:00:00.000Z", "2026-03-11T00:00:00.000Z", 24],
    ["Europe/Berlin", "2026-03-10T12:00:00Z", "2026-03-09T23:00:00.000Z", "2026-03-10T23:00:00.000Z", 24],
    ["Europe/Berlin", "2026-03-29T12:00:00Z", "2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z", 23],
    ["Europe/Berlin", "2026-10-25T12:00:00Z", "2026-10-24T22:00:00.000Z", "2026-10-25T23:00:00.000Z", 25],
    ["America/New_York", "2026-03-08T12:00:00Z", "2026-03-08T05:00:00.000Z", "2026-03-09T04:00:00.000Z", 23],
    ["America/New_York", "2026-11-01T12:00:00Z", "2026-11-01T04:00:00.000Z", "2026-11-02T05:00:00.000Z", 25],
    ["Asia/Kolkata", "2026-01-01T00:00:00Z", "2025-12-31T18:30:00.000Z", "2026-01-01T18:30:00.000Z", 24],
    // Chile moves its clocks at midnight: on 2026-09-06 the day starts at 01:00 local.
    ["America/Santiago", "2026-09-06T12:00:00Z", "2026-09-06T04:00:00.000Z", "2026-09-07T03:00:00.000Z", 23],
  ])("%s at %s: [%s, %s), %i hours", (tz, now, start, end, hours) => {
    expect(window("day", now, tz)).toEqual({ start, end, hours });
  });

  it("contains its first instant and not its end, on both sides of a DST change", () => {
    const tz = "Europe/Berlin";
    for (const iso of ["2026-03-28T23:00:00Z", "2026-03-29T21:59:59.999Z"])
      expect(periodWindow("day", at(iso), tz)).toEqual({
        start: at("2026-03-28T23:00:00Z"),
        end: at("2026-03-29T22:00:00Z"),
      });
    expect(periodWindow("day", at("2026-03-29T22:00:00Z"), tz).start).toBe(at("2026-03-29T22:00:00Z"));
    expect(periodWindow("day", at("2026-03-28T22:59:59.999Z"), tz).end).toBe(at("2026-03-28T23:00:00Z"));
  });

  it("follows every day of a year back to back in zones with DST (no gap, no overlap)", () => {
    for (const tz of ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago"]) {
      let w = periodWindow("day", at("2026-01-01T12:00:00Z"), tz);
      const lengths = new Set<number>();
      for (let i = 0; i < 365; i++) {
        const next = periodWindow("day", w.end, tz);
        expect(next.start).toBe(w.end);
        lengths.add((w.end - w.start) / HOUR);
        w = next;
      }
      expect([...lengths].every((h) => h >= 23 && h <= 25)).toBe(true);
    }
  });
});

describe("periodWindow: months", () => {
  it.each([
    ["UTC", "2026-02-14T00:00:00Z", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", 672],
    ["Europe/Berlin", "2026-03-15T12:00:00Z", "2026-02-28T23:00:00.000Z", "2026-03-31T22:00:00.000Z", 743],
    ["Europe/Berlin", "2026-10-15T12:00:00Z", "2026-09-30T22:00:00.000Z", "2026-10-31T23:00:00.000Z", 745],
    ["Europe/Berlin", "2026-12-31T23:30:00Z", "2026-12-31T23:00:00.000Z", "2027-01-31T23:00:00.000Z", 744],
    [
      "America/New_York",
      "2026-02-01T04:59:59.999Z",
      "2026-01-01T05:00:00.000Z",
      "2026-02-01T05:00:00.000Z",
      744,
    ],
    ["America/New_York", "2026-11-30T12:00:00Z", "2026-11-01T04:00:00.000Z", "2026-12-01T05:00:00.000Z", 721],
  ])("%s at %s: [%s, %s)", (tz, now, start, end, hours) => {
    expect(window("month", now, tz)).toEqual({ start, end, hours });
  });
});

describe("dayOf", () => {
  it("names the local date in the zone", () => {
    expect(dayOf(at("2026-03-10T23:30:00Z"), "UTC")).toBe("2026-03-10");
    expect(dayOf(at("2026-03-10T23:30:00Z"), "Europe/Berlin")).toBe("2026-03-11");
    expect(dayOf(at("2026-03-11T03:59:59Z"), "America/New_York")).toBe("2026-03-10");
  });
});

describe("assertTimeZone", () => {
  it("accepts IANA names and refuses anything else", () => {
    expect(() => assertTimeZone("Europe/Berlin")).not.toThrow();
    expect(() => assertTimeZone("UTC")).not.toThrow();
    expect(() => assertTimeZone("Europe/Nowhere")).toThrow(RangeError);
    expect(() => periodWindow("day", 0, "Europe/Nowhere")).toThrow(RangeError);
  });
});
