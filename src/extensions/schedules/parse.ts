/**
 * The `/schedule` argument grammar: a schedule (`in`, `at`, `every`, `cron` and the `hourly`,
 * `daily`, `weekdays` shorthands), then the prompt. Every refusal is one sentence that names what
 * was wrong and shows a form that works, since the reader is a chat user, not a developer.
 */
import { cronSyntaxError, nextCronRun } from "./cron.js";
import { Cursor } from "./cursor.js";
import { dayOfWeekField, daysPhrase, readDays } from "./days.js";
import { DAY_MS, formatDuration, MINUTE_MS, readDuration } from "./duration.js";
import type { ParsedSchedule, ScheduleSpec } from "./spec.js";
import { formatTimeOfDay, readTimeOfDay } from "./time-of-day.js";
import {
  canonicalTimeZone,
  formatInstant,
  type LocalDateTime,
  localDateTimeAt,
  localDateTimeToInstant,
} from "./time-zone.js";

/**
 * What the deployment allows: the zone for schedules that name none (an IANA name), and the
 * shortest gap between two runs of a repeating schedule.
 */
export interface ScheduleRules {
  defaultTimeZone: string;
  minIntervalMs: number;
}

/** `parseSchedule`'s answer: the schedule, or the one-sentence reason to show the user. */
export type ParseResult = { ok: true; schedule: ParsedSchedule } | { ok: false; error: string };

/** The longest delay for `in` and the longest interval for `every`. */
const MAX_AHEAD_MS = 365 * DAY_MS;
// Enough runs to meet the irregular gaps of patterns like "0,5 9 * * *" or "*/20 9-17 * * 1-5"; a
// year bounds the work for rare patterns ("0 0 * 2 1#5" runs once in decades, each step costs).
const GAP_CHECK_RUNS = 50;
const GAP_CHECK_SPAN_MS = 366 * DAY_MS;

const USAGE =
  'write in <duration>, at <time>, every <interval or days> at <time>, or cron "<pattern>", then the prompt, ' +
  "e.g. every weekday at 09:00 Europe/Berlin summarise the news";
const IN_EXAMPLE = "e.g. in 2h check the build";
const AT_EXAMPLE = "e.g. at 09:00 Europe/Berlin stand-up reminder or at 2026-12-24 18:00 call home";
const EVERY_EXAMPLE =
  "e.g. every 30m check the queue, every weekday at 09:00 stand-up or every mon,fri at 18:00 report";
const CRON_EXAMPLE = 'e.g. cron "0 9 * * 1-5" Europe/Berlin stand-up reminder';
const CRON_FIELDS = "minute hour day-of-month month day-of-week";

/** The zones' top-level areas: a word like "and/or" is prompt, "Europe/Berlinn" a mistyped zone. */
const ZONE_AREAS = new Set(
  "africa america antarctica arctic asia atlantic australia europe indian pacific etc us canada brazil chile mexico".split(
    " ",
  ),
);

/** User text inside an error: one line, short, quoted. */
function quote(text: string): string {
  const short = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return JSON.stringify(short);
}

const fail = (error: string): ParseResult => ({ ok: false, error });

/**
 * Reads `args` (everything after `/schedule`) as of `nowMs`. Keywords and units are
 * case-insensitive; the prompt is the text after the schedule, trimmed and otherwise untouched, and
 * must not be empty. Relative and next-occurrence times count from `nowMs`; a zone may follow the
 * time or pattern ("Europe/Berlin", "UTC", or "tz=<name>"), else `rules.defaultTimeZone` applies.
 * Never throws for any `args`; throws a RangeError only when `rules.defaultTimeZone` is no zone,
 * which is a configuration mistake, not the user's.
 */
export function parseSchedule(args: string, nowMs: number, rules: ScheduleRules): ParseResult {
  const defaultTz = canonicalTimeZone(rules.defaultTimeZone);
  if (defaultTz === undefined) throw new RangeError(`Unknown default time zone "${rules.defaultTimeZone}"`);
  const cursor = new Cursor(args);
  const keyword = cursor.next();
  if (keyword === undefined) return fail(`No schedule given: ${USAGE}.`);
  const context: Context = { cursor, nowMs, rules, defaultTz };
  switch (keyword.toLowerCase()) {
    case "in":
      return parseIn(context);
    case "at":
      return parseAt(context);
    case "every":
      return parseEvery(context);
    case "cron":
      return parseCron(context);
    case "hourly":
      return parseHourly(context);
    case "daily":
      return readTimeForDays(context, [0, 1, 2, 3, 4, 5, 6], "daily");
    case "weekdays":
      return readTimeForDays(context, [1, 2, 3, 4, 5], "weekdays");
    default:
      return fail(`${quote(keyword)} does not start a schedule: ${USAGE}.`);
  }
}

interface Context {
  cursor: Cursor;
  nowMs: number;
  rules: ScheduleRules;
  defaultTz: string;
}

/** The schedule is read; what remains is the prompt. */
function finish(context: Context, spec: ScheduleSpec, description: string, example: string): ParseResult {
  const prompt = context.cursor.rest();
  if (prompt === "") {
    return fail(`The schedule "${description}" has no prompt: write what to ask after it, ${example}.`);
  }
  return { ok: true, schedule: { spec, prompt, description } };
}

function parseIn(context: Context): ParseResult {
  const read = readDuration(context.cursor);
  if (read.kind === "seconds") return fail(secondsError(read.word, IN_EXAMPLE));
  if (read.kind === "none") {
    return fail(`"in" needs a duration such as 45m, 2h, 1h30m or 3 days, ${IN_EXAMPLE}.`);
  }
  if (read.ms < MINUTE_MS) {
    return fail(
      `${quote(`in ${read.text}`)} is too soon: the delay must be at least 1 minute, ${IN_EXAMPLE}.`,
    );
  }
  if (read.ms > MAX_AHEAD_MS) {
    return fail(
      `${quote(`in ${read.text}`)} is too far ahead: the delay can be at most 365 days, ${IN_EXAMPLE}.`,
    );
  }
  const at = context.nowMs + read.ms;
  const tz = context.defaultTz;
  return finish(context, { kind: "once", at, tz }, `once at ${formatInstant(at, tz)}`, IN_EXAMPLE);
}

function secondsError(word: string, example: string): string {
  return `Durations count minutes, hours, days or weeks, not seconds (${quote(word)}): ${example}.`;
}

const TIME_FORMS = "HH:MM, YYYY-MM-DD HH:MM or YYYY-MM-DDTHH:MM";

function parseAt(context: Context): ParseResult {
  const { cursor } = context;
  const word = cursor.next();
  if (word === undefined) return fail(`"at" needs a time as ${TIME_FORMS}, ${AT_EXAMPLE}.`);
  let date: { year: number; month: number; day: number } | undefined;
  let timeWord = word;
  const dated = /^(\d{4})-(\d{2})-(\d{2})(?:T(.*))?$/i.exec(word);
  if (dated) {
    date = { year: Number(dated[1]), month: Number(dated[2]), day: Number(dated[3]) };
    // The Gregorian calendar repeats every 400 years, leap days included.
    const daysInMonth = new Date(Date.UTC(2000 + (date.year % 400), date.month, 0)).getUTCDate();
    if (date.month < 1 || date.month > 12 || date.day < 1 || date.day > daysInMonth) {
      return fail(`${quote(word.slice(0, 10))} is not a calendar date: write YYYY-MM-DD, ${AT_EXAMPLE}.`);
    }
    // Intl shows years before 1 AD oddly (no era): say it plainly instead of showing the instant.
    if (date.year < 1970) {
      return fail(`${quote(word.slice(0, 10))} is long past: pick a later date, ${AT_EXAMPLE}.`);
    }
    const next = dated[4] ?? cursor.next();
    if (next === undefined) return fail(`"at ${word}" needs a time of day after the date, ${AT_EXAMPLE}.`);
    timeWord = next;
  }
  const time = readTimeOfDay(timeWord);
  if (time === "bad") {
    return fail(`${quote(timeWord)} is not a time of day: use 00:00 to 23:59, ${AT_EXAMPLE}.`);
  }
  if (time === undefined) {
    return fail(`"at" needs a time as ${TIME_FORMS}, not ${quote(timeWord)}, ${AT_EXAMPLE}.`);
  }
  const zone = readZone(context);
  if (!zone.ok) return fail(zone.error);
  const tz = zone.tz;
  let at: number;
  if (date) {
    at = localDateTimeToInstant({ ...date, ...time }, tz);
    if (at <= context.nowMs) {
      return fail(
        `${formatInstant(at, tz)} is already past (it is now ${formatInstant(context.nowMs, tz)}): pick a later time, ${AT_EXAMPLE}.`,
      );
    }
  } else {
    at = nextOccurrence(time, tz, context.nowMs);
  }
  return finish(context, { kind: "once", at, tz }, `once at ${formatInstant(at, tz)}`, AT_EXAMPLE);
}

/** The next time `tz`'s clock shows `time`: today if still ahead, else tomorrow. */
function nextOccurrence(time: { hour: number; minute: number }, tz: string, nowMs: number): number {
  const today = localDateTimeAt(nowMs, tz);
  const todayAt: LocalDateTime = { ...today, ...time };
  const at = localDateTimeToInstant(todayAt, tz);
  if (at > nowMs) return at;
  // Day 32 rolls over into the next month, as in Date.
  return localDateTimeToInstant({ ...todayAt, day: today.day + 1 }, tz);
}

/** An optional zone word: "tz=<name>", "UTC"/"GMT", or Area/Location under a known area. */
function readZone(context: Context): { ok: true; tz: string } | { ok: false; error: string } {
  const { cursor } = context;
  const word = cursor.peek();
  if (word === undefined) return { ok: true, tz: context.defaultTz };
  const named = /^tz=(.*)$/i.exec(word)?.[1];
  const looksLikeZone =
    named !== undefined ||
    /^(utc|gmt)$/i.test(word) ||
    (/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)+$/.test(word) &&
      ZONE_AREAS.has(String(word.split("/")[0]).toLowerCase()));
  if (!looksLikeZone) return { ok: true, tz: context.defaultTz };
  cursor.next();
  const name = named ?? word;
  const tz = canonicalTimeZone(name);
  if (tz === undefined) {
    return {
      ok: false,
      error: `Unknown time zone ${quote(name)}: use an IANA name such as Europe/Berlin or UTC.`,
    };
  }
  return { ok: true, tz };
}

function parseEvery(context: Context): ParseResult {
  const { cursor, rules } = context;
  const days = readDays(cursor);
  if (days.kind === "bad") {
    return fail(
      `${quote(days.text)} is not a list of days: use day, weekday, weekend, monday…sunday or mon,wed,fri, ${EVERY_EXAMPLE}.`,
    );
  }
  if (days.kind === "ok") return readTimeForDays(context, days.days, `every ${days.text}`);
  const read = readDuration(cursor, true);
  if (read.kind === "seconds") return fail(secondsError(read.word, EVERY_EXAMPLE));
  if (read.kind === "none") return fail(`"every" needs an interval or days, ${EVERY_EXAMPLE}.`);
  if (read.ms < rules.minIntervalMs) {
    return fail(
      `${quote(`every ${read.text}`)} is too frequent: the interval must be at least ${formatDuration(rules.minIntervalMs)}, ${EVERY_EXAMPLE}.`,
    );
  }
  if (read.ms > MAX_AHEAD_MS) {
    return fail(
      `${quote(`every ${read.text}`)} is too far apart: the interval can be at most 365 days, ${EVERY_EXAMPLE}.`,
    );
  }
  const spec: ScheduleSpec = {
    kind: "every",
    everyMs: read.ms,
    startAt: context.nowMs + read.ms,
    tz: context.defaultTz,
  };
  // "every hour", not "every 1 hour"; "every 1 hour 30 minutes" keeps its count.
  const interval = formatDuration(read.ms).replace(/^1 (\w+)$/, "$1");
  return finish(context, spec, `every ${interval}`, EVERY_EXAMPLE);
}

/** After the days: "[at] <time> [zone]", giving a daily cron pattern restricted to those days. */
function readTimeForDays(context: Context, days: number[], written: string): ParseResult {
  const { cursor } = context;
  if (cursor.peek()?.toLowerCase() === "at") cursor.next();
  const word = cursor.next();
  const time = word === undefined ? undefined : readTimeOfDay(word);
  const example = `e.g. ${written} at 09:00 stand-up reminder`;
  if (time === "bad") {
    return fail(`${quote(word ?? "")} is not a time of day: use 00:00 to 23:59, ${example}.`);
  }
  if (time === undefined) {
    return fail(`${quote(written)} needs a time of day, ${example}.`);
  }
  const zone = readZone(context);
  if (!zone.ok) return fail(zone.error);
  const pattern = `${time.minute} ${time.hour} * * ${dayOfWeekField(days)}`;
  const description = `every ${daysPhrase(days)} at ${formatTimeOfDay(time.hour, time.minute)} (${zone.tz})`;
  return cronSchedule(context, pattern, zone.tz, description, example);
}

function parseHourly(context: Context): ParseResult {
  const zone = readZone(context);
  if (!zone.ok) return fail(zone.error);
  return cronSchedule(
    context,
    "0 * * * *",
    zone.tz,
    `every hour on the hour (${zone.tz})`,
    "e.g. hourly check the queue",
  );
}

// Chat clients turn typed quotes into typographic ones, so any usual pair delimits the pattern.
const CLOSING_QUOTES: Record<string, string> = { '"': '"”', "'": "'’", "“": '”"', "„": '“”"', "«": "»" };

function parseCron(context: Context): ParseResult {
  const { cursor } = context;
  const start = cursor.start();
  const text = cursor.text;
  const opening = text.charAt(start);
  const closers = Object.hasOwn(CLOSING_QUOTES, opening) ? CLOSING_QUOTES[opening] : undefined;
  let pattern: string;
  if (closers !== undefined) {
    let end = start + 1;
    while (end < text.length && !closers.includes(text.charAt(end))) end++;
    if (end >= text.length) return fail(`The cron pattern's closing quote is missing, ${CRON_EXAMPLE}.`);
    pattern = text.slice(start + 1, end);
    cursor.pos = end + 1;
  } else {
    const fields: string[] = [];
    while (fields.length < 5) {
      const word = cursor.next();
      if (word === undefined) break;
      fields.push(word);
    }
    pattern = fields.join(" ");
    // A sixth field-like word is most likely seconds-first syntax, not the prompt.
    if (fields.length === 5 && /^[\d*?][\d*?,/\-LW#]*$/i.test(cursor.peek() ?? "")) {
      return fail(
        `Cron patterns have exactly 5 fields (${CRON_FIELDS}) and no seconds; quote the pattern if the prompt starts with a number, ${CRON_EXAMPLE}.`,
      );
    }
  }
  const fields = pattern
    .trim()
    .split(/\s+/)
    .filter((f) => f !== "");
  if (fields.length === 0) return fail(`"cron" needs a 5-field pattern (${CRON_FIELDS}), ${CRON_EXAMPLE}.`);
  if (fields.length !== 5) {
    return fail(
      `${quote(fields.join(" "))} has ${fields.length} field${fields.length === 1 ? "" : "s"}, but a cron pattern has exactly 5 (${CRON_FIELDS}) and no seconds, ${CRON_EXAMPLE}.`,
    );
  }
  const normalized = fields.join(" ");
  // cron-parser picks H values at random unless given a seed, and BullMQ gives none: the times
  // shown here would not be the times fired.
  if (fields.some((field) => field.split(",").some((item) => /^H(?![a-z])/i.test(item)))) {
    return fail(
      `Hashed "H" values are not supported in ${quote(normalized)}: write the minute and hour out, ${CRON_EXAMPLE}.`,
    );
  }
  const zone = readZone(context);
  if (!zone.ok) return fail(zone.error);
  const problem = cronSyntaxError(normalized, zone.tz);
  if (problem !== undefined) {
    return fail(
      `${quote(normalized)} is not a valid cron pattern (${problem.replace(/\.$/, "")}), ${CRON_EXAMPLE}.`,
    );
  }
  return cronSchedule(context, normalized, zone.tz, `cron ${normalized} (${zone.tz})`, CRON_EXAMPLE);
}

/** A cron spec, once its runs are known to exist and to keep the minimum interval. */
function cronSchedule(
  context: Context,
  pattern: string,
  tz: string,
  description: string,
  example: string,
): ParseResult {
  const { nowMs, rules } = context;
  let previous = nextCronRun(pattern, tz, nowMs);
  if (previous === undefined) {
    return fail(`${quote(pattern)} never runs: check the day and month, ${example}.`);
  }
  for (let i = 1; i < GAP_CHECK_RUNS && previous - nowMs < GAP_CHECK_SPAN_MS; i++) {
    const next = nextCronRun(pattern, tz, previous);
    if (next === undefined) break;
    if (next - previous < rules.minIntervalMs) {
      return fail(
        `${quote(pattern)} runs more often than the minimum interval of ${formatDuration(rules.minIntervalMs)}, ${example}.`,
      );
    }
    previous = next;
  }
  return finish(context, { kind: "cron", pattern, tz }, description, example);
}
