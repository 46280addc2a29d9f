/**
 * Calendar periods in an IANA time zone: the day or month containing an instant, as the instants it
 * starts and ends at. The wall-clock arithmetic is the schedules' (src/extensions/schedules/
 * time-zone.ts, one implementation for both): a local day is 23 or 25 hours long on a
 * daylight-saving change, and in a few zones (America/Santiago, say) a day starts at 01:00 because
 * its midnight is skipped; the window is always [first instant of the local date, first instant of
 * the next).
 */
import {
  canonicalTimeZone,
  localDateTimeAt,
  localDateTimeToInstant,
} from "../../extensions/schedules/time-zone.js";
import type { BudgetPeriod } from "./types.js";

/** An interval of instants in ms: `start` included, `end` excluded. */
export interface PeriodWindow {
  start: number;
  end: number;
}

/**
 * Throws a RangeError naming `timeZone` unless Intl knows it as a zone (an IANA name such as
 * `Europe/Berlin`, or `UTC`). The ledgers check their zone once, when made.
 */
export function assertTimeZone(timeZone: string): void {
  if (!canonicalTimeZone(timeZone))
    throw new RangeError(`Unknown time zone "${timeZone}": use an IANA name such as Europe/Berlin or UTC.`);
}

/** The first instant of the local date year-month-day (fields past their range roll over). */
function startOfDate(year: number, month: number, day: number, timeZone: string): number {
  // A midnight the zone skips moves forward to the first instant that exists: the date's start.
  return localDateTimeToInstant({ year, month, day, hour: 0, minute: 0 }, timeZone);
}

/**
 * The day or month containing `now` in `timeZone` (IANA), as [start, end) in ms. Pure; throws a
 * RangeError for a zone Intl does not know.
 */
export function periodWindow(period: BudgetPeriod, now: number, timeZone: string): PeriodWindow {
  const w = localDateTimeAt(now, timeZone);
  if (period === "day")
    return {
      start: startOfDate(w.year, w.month, w.day, timeZone),
      end: startOfDate(w.year, w.month, w.day + 1, timeZone),
    };
  return {
    start: startOfDate(w.year, w.month, 1, timeZone),
    end: startOfDate(w.year, w.month + 1, 1, timeZone),
  };
}

/** The local date at `now` in `timeZone` as `YYYY-MM-DD` (the usage rows' day). */
export function dayOf(now: number, timeZone: string): string {
  const w = localDateTimeAt(now, timeZone);
  const pad = (n: number, width: number) => String(n).padStart(width, "0");
  return `${pad(w.year, 4)}-${pad(w.month, 2)}-${pad(w.day, 2)}`;
}
