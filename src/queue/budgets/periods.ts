/**
 * Calendar periods in an IANA time zone, from Intl.DateTimeFormat alone (no time zone data of our
 * own): the day or month containing an instant, as the instants it starts and ends at. A local day
 * is 23 or 25 hours long on a daylight-saving change, and in a few zones (America/Santiago, say) a
 * day starts at 01:00 because its midnight is skipped; the window is always [first instant of the
 * local date, first instant of the next).
 */
import type { BudgetPeriod } from "./types.js";

/** An interval of instants in ms: `start` included, `end` excluded. */
export interface PeriodWindow {
  start: number;
  end: number;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const HOUR_MS = 3_600_000;
const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's formatter, made once per zone (making one is far slower than using it). */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formats.set(timeZone, f);
  }
  return f;
}

/**
 * Throws a RangeError naming `timeZone` unless Intl knows it as a zone (an IANA name such as
 * `Europe/Berlin`, or `UTC`). The ledgers check their zone once, when made.
 */
export function assertTimeZone(timeZone: string): void {
  try {
    formatter(timeZone);
  } catch {
    throw new RangeError(`Unknown time zone "${timeZone}": use an IANA name such as Europe/Berlin or UTC.`);
  }
}

function wallClock(t: number, timeZone: string): WallClock {
  const w: WallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatter(timeZone).formatToParts(t))
    if (part.type in w) w[part.type as keyof WallClock] = Number(part.value);
  return w;
}

/** The local date at `t` as the UTC instant of that date's midnight (a number that orders dates). */
function localDate(t: number, timeZone: string): number {
  const w = wallClock(t, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day);
}

/** How far the zone's wall clock is ahead of UTC at `t` (ms). */
function offsetAt(t: number, timeZone: string): number {
  const w = wallClock(t, timeZone);
  const wallAsUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return wallAsUtc - (t - (((t % 1000) + 1000) % 1000));
}

/**
 * The first instant whose local date is `date` (a date's midnight as a UTC instant) or later. The
 * zone's offset gives it in two steps; when that misses (midnight skipped or repeated on that date),
 * a binary search within the ±15 h every zone's offset lies in finds it.
 */
function startOfDate(date: number, timeZone: string): number {
  const reached = (t: number) => localDate(t, timeZone) >= date;
  const guess = date - offsetAt(date - offsetAt(date, timeZone), timeZone);
  if (reached(guess) && !reached(guess - 1)) return guess;
  let lo = date - 15 * HOUR_MS;
  let hi = date + 15 * HOUR_MS;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (reached(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * The day or month containing `now` in `timeZone` (IANA), as [start, end) in ms. Pure; throws a
 * RangeError for a zone Intl does not know.
 */
export function periodWindow(period: BudgetPeriod, now: number, timeZone: string): PeriodWindow {
  const w = wallClock(now, timeZone);
  if (period === "day")
    return {
      start: startOfDate(Date.UTC(w.year, w.month - 1, w.day), timeZone),
      end: startOfDate(Date.UTC(w.year, w.month - 1, w.day + 1), timeZone),
    };
  return {
    start: startOfDate(Date.UTC(w.year, w.month - 1, 1), timeZone),
    end: startOfDate(Date.UTC(w.year, w.month, 1), timeZone),
  };
}

/** The local date at `now` in `timeZone` as `YYYY-MM-DD` (the usage rows' day). */
export function dayOf(now: number, timeZone: string): string {
  const w = wallClock(now, timeZone);
  const pad = (n: number, width: number) => String(n).padStart(width, "0");
  return `${pad(w.year, 4)}-${pad(w.month, 2)}-${pad(w.day, 2)}`;
}
