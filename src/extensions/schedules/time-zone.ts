/**
 * Time zones through `Intl` alone (Node 20 ships full ICU), so no zone database of our own can
 * disagree with the one cron-parser (through Luxon) and BullMQ use.
 */

/** A wall-clock reading: month 1–12, hour 0–23; seconds are not part of schedules. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

// Building an Intl.DateTimeFormat costs far more than using one; zones in use are few. The cap only
// guards against a caller feeding endless spellings of valid names.
const partsFormats = new Map<string, Intl.DateTimeFormat>();
function partsFormat(tz: string): Intl.DateTimeFormat {
  let format = partsFormats.get(tz);
  if (!format) {
    if (partsFormats.size >= 1000) partsFormats.clear();
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    partsFormats.set(tz, format);
  }
  return format;
}

interface Reading extends LocalDateTime {
  second: number;
  weekday: string;
}

function readingAt(ms: number, tz: string): Reading {
  const out: Record<string, string> = {};
  for (const part of partsFormat(tz).formatToParts(ms)) out[part.type] = part.value;
  return {
    year: Number(out.year),
    month: Number(out.month),
    day: Number(out.day),
    hour: Number(out.hour),
    minute: Number(out.minute),
    second: Number(out.second),
    weekday: out.weekday ?? "",
  };
}

/** The wall-clock reading as if it were UTC; Date.UTC would map years 0–99 to the 1900s. */
function utcOf(local: LocalDateTime, second = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(local.year, local.month - 1, local.day);
  d.setUTCHours(local.hour, local.minute, second, 0);
  return d.getTime();
}

/** How far `tz`'s wall clock is ahead of UTC at `ms` (whole seconds, as zones define it). */
function offsetAt(ms: number, tz: string): number {
  const reading = readingAt(ms, tz);
  return utcOf(reading, reading.second) - Math.floor(ms / 1000) * 1000;
}

/**
 * The canonical IANA name for `name`, matched case-insensitively ("europe/berlin" → "Europe/Berlin",
 * "utc" → "UTC"), or undefined when `Intl` knows no such zone. Offsets like "+01:00" are refused
 * even where a newer Node accepts them, since cron-parser's zone handling is only promised for
 * IANA names.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const zoneNames = new Map<string, [Intl.DateTimeFormat, Intl.DateTimeFormat]>();
/** en-US knows only American abbreviations and en-GB only European ones; both fall back to GMT±h. */
function zoneName(ms: number, tz: string): string {
  let formats = zoneNames.get(tz);
  if (!formats) {
    if (zoneNames.size >= 1000) zoneNames.clear();
    formats = [
      new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "short" }),
      new Intl.DateTimeFormat("en-GB", { timeZone: tz, timeZoneName: "short" }),
    ];
    zoneNames.set(tz, formats);
  }
  const nameIn = (format: Intl.DateTimeFormat) =>
    format.formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? tz;
  const american = nameIn(formats[0]);
  if (!american.startsWith("GMT")) return american;
  const british = nameIn(formats[1]);
  return /^[A-Z]{2,5}$/.test(british) ? british : american;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * `ms` as people in `tz` read it, "Mon 2026-12-07 09:00 CET": weekday, ISO date, 24-hour time and
 * the zone's short name (an abbreviation where English has one, else "GMT+9"), so the zone of a
 * shown time is never in doubt. `tz` must be a valid zone name (see `canonicalTimeZone`).
 */
export function formatInstant(ms: number, tz: string): string {
  const r = readingAt(ms, tz);
  return `${r.weekday} ${pad(r.year, 4)}-${pad(r.month)}-${pad(r.day)} ${pad(r.hour)}:${pad(r.minute)} ${zoneName(ms, tz)}`;
}

/**
 * The wall-clock date and time in `tz` at `ms` (seconds dropped), for questions like "what is
 * today's date there". `tz` must be a valid zone name.
 */
export function localDateTimeAt(ms: number, tz: string): LocalDateTime {
  const { year, month, day, hour, minute } = readingAt(ms, tz);
  return { year, month, day, hour, minute };
}

/**
 * The instant when `tz`'s wall clock shows `local`. A time that does not exist there (skipped by a
 * DST change, 02:30 on a spring-forward night in Europe) moves forward to the first instant that
 * does exist, the end of the gap (03:00); a time that exists twice (fall-back) is its earlier
 * occurrence, so a reminder never comes an hour late. Fields out of range roll over as in `Date`.
 */
export function localDateTimeToInstant(local: LocalDateTime, tz: string): number {
  const wall = utcOf(local);
  // Zone offsets a day either side bracket any single transition near this wall time.
  const candidates = [...new Set([wall - offsetAt(wall - DAY, tz), wall - offsetAt(wall + DAY, tz)])]
    .filter((t) => t + offsetAt(t, tz) === wall)
    .sort((a, b) => a - b);
  const first = candidates[0];
  if (first !== undefined) return first;
  return transitionBetween(wall - offsetAt(wall + DAY, tz), wall - offsetAt(wall - DAY, tz), tz);
}

/** The first instant in (lo, hi] whose offset differs from lo's; zones change offset on whole seconds. */
function transitionBetween(lo: number, hi: number, tz: string): number {
  const before = offsetAt(lo, tz);
  let low = Math.floor(lo / 1000);
  let high = Math.ceil(hi / 1000);
  if (offsetAt(high * 1000, tz) === before) return hi;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (offsetAt(mid * 1000, tz) === before) low = mid;
    else high = mid;
  }
  return high * 1000;
}
