/**
 * Zones through Intl: names are matched case-insensitively to their canonical spelling, instants
 * are shown with their zone's abbreviation, and wall-clock times become instants with the DST rules
 * the docs promise (a skipped time moves to the end of the gap, a repeated one is the earlier).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalTimeZone,
  formatInstant,
  type LocalDateTime,
  localDateTimeAt,
  localDateTimeToInstant,
} from "../../../src/extensions/schedules/index.js";

const iso = (ms: number) => new Date(ms).toISOString();
const local = (year: number, month: number, day: number, hour: number, minute: number): LocalDateTime => ({
  year,
  month,
  day,
  hour,
  minute,
});

describe("canonicalTimeZone", () => {
  it.each([
    ["Europe/Berlin", "Europe/Berlin"],
    ["europe/berlin", "Europe/Berlin"],
    ["AMERICA/NEW_YORK", "America/New_York"],
    ["utc", "UTC"],
    ["Etc/UTC", "UTC"],
    ["GMT", "UTC"],
    ["US/Eastern", "America/New_York"],
    ["Asia/Tokyo", "Asia/Tokyo"],
  ])("%s is %s", (name, canonical) => {
    expect(canonicalTimeZone(name)).toBe(canonical);
  });

  it.each([
    "Europe/Berlinn",
    "",
    " Europe/Berlin",
    "Europe/Berlin ",
    "+01:00",
    "-05:00",
    "Mars/Olympus",
    "../etc",
  ])("%j is no zone", (name) => {
    expect(canonicalTimeZone(name)).toBeUndefined();
  });
});

describe("formatInstant", () => {
  it.each([
    ["2026-12-07T08:00:00Z", "Europe/Berlin", "Mon 2026-12-07 09:00 CET"],
    ["2026-07-06T07:00:00Z", "Europe/Berlin", "Mon 2026-07-06 09:00 CEST"],
    ["2026-12-07T14:00:00Z", "America/New_York", "Mon 2026-12-07 09:00 EST"],
    ["2026-07-06T13:00:00Z", "America/New_York", "Mon 2026-07-06 09:00 EDT"],
    ["2026-07-06T08:00:00Z", "Europe/London", "Mon 2026-07-06 09:00 BST"],
    ["2026-12-24T08:05:00Z", "UTC", "Thu 2026-12-24 08:05 UTC"],
    ["2026-12-07T00:00:00Z", "Asia/Tokyo", "Mon 2026-12-07 09:00 GMT+9"],
    ["2026-12-07T03:30:00Z", "Asia/Kolkata", "Mon 2026-12-07 09:00 GMT+5:30"],
    ["2026-12-06T23:30:00Z", "UTC", "Sun 2026-12-06 23:30 UTC"],
  ])("%s in %s is %s", (instant, tz, shown) => {
    expect(formatInstant(Date.parse(instant), tz)).toBe(shown);
  });
});

describe("localDateTimeToInstant", () => {
  it("reads an ordinary wall-clock time with the zone's offset of that day", () => {
    expect(iso(localDateTimeToInstant(local(2026, 12, 7, 9, 0), "Europe/Berlin"))).toBe(
      "2026-12-07T08:00:00.000Z",
    );
    expect(iso(localDateTimeToInstant(local(2026, 7, 6, 9, 0), "Europe/Berlin"))).toBe(
      "2026-07-06T07:00:00.000Z",
    );
    expect(iso(localDateTimeToInstant(local(2026, 7, 6, 9, 0), "America/New_York"))).toBe(
      "2026-07-06T13:00:00.000Z",
    );
    expect(iso(localDateTimeToInstant(local(2026, 7, 6, 9, 0), "UTC"))).toBe("2026-07-06T09:00:00.000Z");
  });

  it("moves a time skipped by spring-forward to the end of the gap", () => {
    // Berlin 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z).
    for (const minute of [0, 1, 30, 59]) {
      expect(iso(localDateTimeToInstant(local(2026, 3, 29, 2, minute), "Europe/Berlin"))).toBe(
        "2026-03-29T01:00:00.000Z",
      );
    }
    expect(iso(localDateTimeToInstant(local(2026, 3, 29, 3, 0), "Europe/Berlin"))).toBe(
      "2026-03-29T01:00:00.000Z",
    );
    expect(iso(localDateTimeToInstant(local(2026, 3, 29, 1, 59), "Europe/Berlin"))).toBe(
      "2026-03-29T00:59:00.000Z",
    );
    // New York 2026-03-08: 02:00 EST becomes 03:00 EDT (07:00Z).
    expect(iso(localDateTimeToInstant(local(2026, 3, 8, 2, 30), "America/New_York"))).toBe(
      "2026-03-08T07:00:00.000Z",
    );
    // Santiago 2026-09-06: midnight itself is skipped (00:00 -04 becomes 01:00 -03).
    expect(iso(localDateTimeToInstant(local(2026, 9, 6, 0, 0), "America/Santiago"))).toBe(
      "2026-09-06T04:00:00.000Z",
    );
  });

  it("takes the earlier of a time repeated by fall-back", () => {
    // Berlin 2026-10-25: 02:00–02:59 happen in CEST (00:xxZ), then again in CET (01:xxZ).
    expect(iso(localDateTimeToInstant(local(2026, 10, 25, 2, 30), "Europe/Berlin"))).toBe(
      "2026-10-25T00:30:00.000Z",
    );
    expect(iso(localDateTimeToInstant(local(2026, 10, 25, 3, 0), "Europe/Berlin"))).toBe(
      "2026-10-25T02:00:00.000Z",
    );
    // New York 2026-11-01: 01:00–01:59 happen in EDT (05:xxZ), then in EST (06:xxZ).
    expect(iso(localDateTimeToInstant(local(2026, 11, 1, 1, 30), "America/New_York"))).toBe(
      "2026-11-01T05:30:00.000Z",
    );
  });

  it("rolls day 32 over into the next month, as Date does", () => {
    expect(iso(localDateTimeToInstant(local(2026, 12, 32, 9, 0), "Europe/Berlin"))).toBe(
      "2027-01-01T08:00:00.000Z",
    );
  });

  it("inverts localDateTimeAt, except inside a repeated hour where it gives the earlier instant (property)", () => {
    const zones = [
      "Europe/Berlin",
      "America/New_York",
      "Australia/Sydney",
      "Asia/Kolkata",
      "America/Santiago",
      "UTC",
    ];
    fc.assert(
      fc.property(
        fc.integer({
          min: Date.parse("2000-01-01T00:00:00Z") / 60_000,
          max: Date.parse("2040-01-01T00:00:00Z") / 60_000,
        }),
        fc.constantFrom(...zones),
        (minutes, tz) => {
          const instant = minutes * 60_000;
          const back = localDateTimeToInstant(localDateTimeAt(instant, tz), tz);
          if (back !== instant) {
            // Only the second pass of a repeated hour maps elsewhere: to the same wall time, earlier.
            expect(back).toBeLessThan(instant);
            expect(instant - back).toBeLessThanOrEqual(2 * 3_600_000);
            expect(localDateTimeAt(back, tz)).toEqual(localDateTimeAt(instant, tz));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
