/**
 * `/schedule` arguments as a user types them: what each form schedules (spec, prompt and the
 * description shown back), every refusal word for word, and that no input at all makes the parser
 * throw. "Now" is Thu 2026-12-03 22:39 UTC (23:39 in Berlin, 17:39 in New York).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  nextRuns,
  type ParseResult,
  parseSchedule,
  type ScheduleSpec,
} from "../../../src/extensions/schedules/index.js";

const NOW = Date.parse("2026-12-03T22:39:00Z");
const MINUTE = 60_000;
const rules = { defaultTimeZone: "Europe/Berlin", minIntervalMs: 5 * MINUTE };
const parse = (args: string) => parseSchedule(args, NOW, rules);
const at = (instant: string) => Date.parse(instant);

function parsed(args: string) {
  const result = parse(args);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(args)} to parse, got: ${result.error}`);
  return result.schedule;
}

function refusal(args: string): string {
  const result: ParseResult = parse(args);
  if (result.ok) throw new Error(`expected ${JSON.stringify(args)} to be refused`);
  return result.error;
}

describe("in <duration>", () => {
  it.each([
    ["in 2h check the build", 2 * 60, "once at Fri 2026-12-04 01:39 CET"],
    ["in 1m x", 1, "once at Thu 2026-12-03 23:40 CET"],
    ["in 45m x", 45, "once at Fri 2026-12-04 00:24 CET"],
    ["in 1h30m x", 90, "once at Fri 2026-12-04 01:09 CET"],
    ["in 3d x", 3 * 24 * 60, "once at Sun 2026-12-06 23:39 CET"],
    ["in 1w x", 7 * 24 * 60, "once at Thu 2026-12-10 23:39 CET"],
    ["in 1 minute x", 1, "once at Thu 2026-12-03 23:40 CET"],
    ["in 2 hours x", 120, "once at Fri 2026-12-04 01:39 CET"],
    ["in 3 days x", 3 * 24 * 60, "once at Sun 2026-12-06 23:39 CET"],
    ["in 2 hours 30 minutes x", 150, "once at Fri 2026-12-04 02:09 CET"],
    ["IN 2H x", 120, "once at Fri 2026-12-04 01:39 CET"],
    ["in 365d x", 365 * 24 * 60, "once at Fri 2027-12-03 23:39 CET"],
  ])("%j runs once, %i minutes from now", (args, minutes, description) => {
    const schedule = parsed(args);
    expect(schedule.spec).toEqual({ kind: "once", at: NOW + minutes * MINUTE, tz: "Europe/Berlin" });
    expect(schedule.description).toBe(description);
  });

  it("keeps the prompt as written (newlines, quotes), trimmed at both ends", () => {
    expect(parsed("in 2h   line one\n  line two  \n").prompt).toBe("line one\n  line two");
    expect(parsed('in 2h check the build\n"quoted" & <b>').prompt).toBe('check the build\n"quoted" & <b>');
    expect(parsed("in 2h check the build").prompt).toBe("check the build");
    // The duration is read greedily: a number followed by a unit word belongs to it.
    expect(parsed("in 2h 3 reasons").prompt).toBe("3 reasons");
  });
});

describe("at <time>", () => {
  it.each<[string, string, string, string]>([
    // 09:00 has passed in Berlin today (23:39), so tomorrow.
    ["at 09:00 stand-up", "2026-12-04T08:00:00Z", "Europe/Berlin", "once at Fri 2026-12-04 09:00 CET"],
    ["at 23:50 x", "2026-12-03T22:50:00Z", "Europe/Berlin", "once at Thu 2026-12-03 23:50 CET"],
    ["at 23:39 x", "2026-12-04T22:39:00Z", "Europe/Berlin", "once at Fri 2026-12-04 23:39 CET"],
    ["at 9:00 x", "2026-12-04T08:00:00Z", "Europe/Berlin", "once at Fri 2026-12-04 09:00 CET"],
    ["at 5:30pm x", "2026-12-04T16:30:00Z", "Europe/Berlin", "once at Fri 2026-12-04 17:30 CET"],
    ["at 12am x", "2026-12-03T23:00:00Z", "Europe/Berlin", "once at Fri 2026-12-04 00:00 CET"],
    [
      "at 09:00 America/New_York x",
      "2026-12-04T14:00:00Z",
      "America/New_York",
      "once at Fri 2026-12-04 09:00 EST",
    ],
    // 17:39 in New York: 18:00 is still today there.
    [
      "at 18:00 america/new_york x",
      "2026-12-03T23:00:00Z",
      "America/New_York",
      "once at Thu 2026-12-03 18:00 EST",
    ],
    ["at 9am tz=asia/tokyo x", "2026-12-04T00:00:00Z", "Asia/Tokyo", "once at Fri 2026-12-04 09:00 GMT+9"],
    ["at 2026-12-24 09:00 x", "2026-12-24T08:00:00Z", "Europe/Berlin", "once at Thu 2026-12-24 09:00 CET"],
    ["at 2026-12-24T09:00 UTC x", "2026-12-24T09:00:00Z", "UTC", "once at Thu 2026-12-24 09:00 UTC"],
    ["at 2027-07-01 09:00 x", "2027-07-01T07:00:00Z", "Europe/Berlin", "once at Thu 2027-07-01 09:00 CEST"],
    // Skipped by spring-forward (2027-03-28 02:00 → 03:00): the end of the gap.
    [
      "at 2027-03-28 02:30 Europe/Berlin x",
      "2027-03-28T01:00:00Z",
      "Europe/Berlin",
      "once at Sun 2027-03-28 03:00 CEST",
    ],
    // Repeated by fall-back (2027-10-31): the first 02:30, in summer time.
    ["at 2027-10-31 02:30 x", "2027-10-31T00:30:00Z", "Europe/Berlin", "once at Sun 2027-10-31 02:30 CEST"],
  ])("%j runs once at %s", (args, instant, tz, description) => {
    const schedule = parsed(args);
    expect(schedule.spec).toEqual({ kind: "once", at: at(instant), tz });
    expect(schedule.description).toBe(description);
    expect(schedule.prompt).toBe(args.split(" ").at(-1));
  });

  it("reads a word with a slash outside the zone areas as prompt, not as a zone", () => {
    expect(parsed("at 09:00 and/or x").prompt).toBe("and/or x");
    expect(parsed("at 09:00 Japan is waking up").prompt).toBe("Japan is waking up");
  });
});

describe("every <interval>", () => {
  it.each([
    ["every 30m check the queue", 30, "every 30 minutes"],
    ["every 5 minutes x", 5, "every 5 minutes"],
    ["every hour x", 60, "every hour"],
    ["every 1h30m x", 90, "every 1 hour 30 minutes"],
    ["every 2 days x", 2 * 24 * 60, "every 2 days"],
    ["every 1 week x", 7 * 24 * 60, "every week"],
    ["Every 2H x", 120, "every 2 hours"],
  ])("%j repeats every %i minutes, first one interval from now", (args, minutes, description) => {
    const schedule = parsed(args);
    expect(schedule.spec).toEqual({
      kind: "every",
      everyMs: minutes * MINUTE,
      startAt: NOW + minutes * MINUTE,
      tz: "Europe/Berlin",
    });
    expect(schedule.description).toBe(description);
  });
});

describe("every <days> at <time>, the shorthands, and cron", () => {
  it.each<[string, string, string, string]>([
    [
      "every weekday at 09:00 Europe/Berlin stand-up",
      "0 9 * * 1-5",
      "Europe/Berlin",
      "every weekday at 09:00 (Europe/Berlin)",
    ],
    ["every day 07:15 x", "15 7 * * *", "Europe/Berlin", "every day at 07:15 (Europe/Berlin)"],
    ["every weekend at 10:00 UTC x", "0 10 * * 0,6", "UTC", "every Saturday and Sunday at 10:00 (UTC)"],
    ["every monday at 08:00 x", "0 8 * * 1", "Europe/Berlin", "every Monday at 08:00 (Europe/Berlin)"],
    ["every Sundays 9:00 x", "0 9 * * 0", "Europe/Berlin", "every Sunday at 09:00 (Europe/Berlin)"],
    [
      "every mon,wed,fri at 18:00 x",
      "0 18 * * 1,3,5",
      "Europe/Berlin",
      "every Monday, Wednesday and Friday at 18:00 (Europe/Berlin)",
    ],
    [
      "every tue, thu and sat at 6pm tz=America/New_York x",
      "0 18 * * 2,4,6",
      "America/New_York",
      "every Tuesday, Thursday and Saturday at 18:00 (America/New_York)",
    ],
    [
      "every mon,tue,wed,fri at 09:00 x",
      "0 9 * * 1-3,5",
      "Europe/Berlin",
      "every Monday, Tuesday, Wednesday and Friday at 09:00 (Europe/Berlin)",
    ],
    [
      "every sat & sun at 10:30 x",
      "30 10 * * 0,6",
      "Europe/Berlin",
      "every Saturday and Sunday at 10:30 (Europe/Berlin)",
    ],
    ["daily 9:00 x", "0 9 * * *", "Europe/Berlin", "every day at 09:00 (Europe/Berlin)"],
    ["daily at 21:00 UTC x", "0 21 * * *", "UTC", "every day at 21:00 (UTC)"],
    ["weekdays 08:30 tz=UTC x", "30 8 * * 1-5", "UTC", "every weekday at 08:30 (UTC)"],
    ["hourly x", "0 * * * *", "Europe/Berlin", "every hour on the hour (Europe/Berlin)"],
    ['cron "0 9 * * 1-5" stand-up', "0 9 * * 1-5", "Europe/Berlin", "cron 0 9 * * 1-5 (Europe/Berlin)"],
    ["cron 0 9 * * 1-5 UTC x", "0 9 * * 1-5", "UTC", "cron 0 9 * * 1-5 (UTC)"],
    [
      'cron "0 9 * * 1-5" tz=America/New_York x',
      "0 9 * * 1-5",
      "America/New_York",
      "cron 0 9 * * 1-5 (America/New_York)",
    ],
    ["cron “0 9 * * 1” x", "0 9 * * 1", "Europe/Berlin", "cron 0 9 * * 1 (Europe/Berlin)"],
    [
      "cron '*/15 9-17 * * 1-5' x",
      "*/15 9-17 * * 1-5",
      "Europe/Berlin",
      "cron */15 9-17 * * 1-5 (Europe/Berlin)",
    ],
    [
      'cron "  0   9 * *  MON-FRI " x',
      "0 9 * * MON-FRI",
      "Europe/Berlin",
      "cron 0 9 * * MON-FRI (Europe/Berlin)",
    ],
    ['CRON "0 9 L * *" x', "0 9 L * *", "Europe/Berlin", "cron 0 9 L * * (Europe/Berlin)"],
  ])("%j is cron %s in %s", (args, pattern, tz, description) => {
    const schedule = parsed(args);
    expect(schedule.spec).toEqual({ kind: "cron", pattern, tz });
    expect(schedule.description).toBe(description);
  });

  it("takes the prompt after the closing quote verbatim", () => {
    expect(parsed('cron "0 9 * * *" say "hi"\nthen stop').prompt).toBe('say "hi"\nthen stop');
    expect(parsed('cron "0 9 * * *"UTC x').spec).toEqual({ kind: "cron", pattern: "0 9 * * *", tz: "UTC" });
  });
});

const IN_EXAMPLE = "e.g. in 2h check the build";
const AT_EXAMPLE = "e.g. at 09:00 Europe/Berlin stand-up reminder or at 2026-12-24 18:00 call home";
const EVERY_EXAMPLE =
  "e.g. every 30m check the queue, every weekday at 09:00 stand-up or every mon,fri at 18:00 report";
const CRON_EXAMPLE = 'e.g. cron "0 9 * * 1-5" Europe/Berlin stand-up reminder';
const USAGE =
  'write in <duration>, at <time>, every <interval or days> at <time>, or cron "<pattern>", then the prompt, e.g. every weekday at 09:00 Europe/Berlin summarise the news';
const FIELDS = "minute hour day-of-month month day-of-week";

describe("refusals, word for word", () => {
  it.each([
    ["", `No schedule given: ${USAGE}.`],
    ["  \n\t ", `No schedule given: ${USAGE}.`],
    ["remind me tomorrow", `"remind" does not start a schedule: ${USAGE}.`],
    ["a".repeat(60), `"${"a".repeat(40)}…" does not start a schedule: ${USAGE}.`],
    // in
    ["in", `"in" needs a duration such as 45m, 2h, 1h30m or 3 days, ${IN_EXAMPLE}.`],
    ["in soon x", `"in" needs a duration such as 45m, 2h, 1h30m or 3 days, ${IN_EXAMPLE}.`],
    ["in 90s x", `Durations count minutes, hours, days or weeks, not seconds ("90s"): ${IN_EXAMPLE}.`],
    [
      "in 30 seconds x",
      `Durations count minutes, hours, days or weeks, not seconds ("30 seconds"): ${IN_EXAMPLE}.`,
    ],
    ["in 1h30s x", `Durations count minutes, hours, days or weeks, not seconds ("1h30s"): ${IN_EXAMPLE}.`],
    ["in 0m x", `"in 0m" is too soon: the delay must be at least 1 minute, ${IN_EXAMPLE}.`],
    ["in 366d x", `"in 366d" is too far ahead: the delay can be at most 365 days, ${IN_EXAMPLE}.`],
    [
      "in 99999999999999999999w x",
      `"in 99999999999999999999w" is too far ahead: the delay can be at most 365 days, ${IN_EXAMPLE}.`,
    ],
    [
      "in 2h",
      `The schedule "once at Fri 2026-12-04 01:39 CET" has no prompt: write what to ask after it, ${IN_EXAMPLE}.`,
    ],
    // at
    ["at", `"at" needs a time as HH:MM, YYYY-MM-DD HH:MM or YYYY-MM-DDTHH:MM, ${AT_EXAMPLE}.`],
    [
      "at noon x",
      `"at" needs a time as HH:MM, YYYY-MM-DD HH:MM or YYYY-MM-DDTHH:MM, not "noon", ${AT_EXAMPLE}.`,
    ],
    ["at 25:00 x", `"25:00" is not a time of day: use 00:00 to 23:59, ${AT_EXAMPLE}.`],
    ["at 13pm x", `"13pm" is not a time of day: use 00:00 to 23:59, ${AT_EXAMPLE}.`],
    ["at 2026-02-30 09:00 x", `"2026-02-30" is not a calendar date: write YYYY-MM-DD, ${AT_EXAMPLE}.`],
    ["at 2027-02-29 09:00 x", `"2027-02-29" is not a calendar date: write YYYY-MM-DD, ${AT_EXAMPLE}.`],
    ["at 2026-13-01T09:00 x", `"2026-13-01" is not a calendar date: write YYYY-MM-DD, ${AT_EXAMPLE}.`],
    ["at 2026-12-24", `"at 2026-12-24" needs a time of day after the date, ${AT_EXAMPLE}.`],
    ["at 0000-01-01 00:00 x", `"0000-01-01" is long past: pick a later date, ${AT_EXAMPLE}.`],
    [
      "at 2026-01-01 09:00 x",
      `Thu 2026-01-01 09:00 CET is already past (it is now Thu 2026-12-03 23:39 CET): pick a later time, ${AT_EXAMPLE}.`,
    ],
    [
      "at 09:00 Europe/Berlinn x",
      'Unknown time zone "Europe/Berlinn": use an IANA name such as Europe/Berlin or UTC.',
    ],
    [
      "at 09:00 tz=Mars/Base x",
      'Unknown time zone "Mars/Base": use an IANA name such as Europe/Berlin or UTC.',
    ],
    ["at 09:00 tz= x", 'Unknown time zone "": use an IANA name such as Europe/Berlin or UTC.'],
    [
      "at 09:00 Europe/Berlin",
      `The schedule "once at Fri 2026-12-04 09:00 CET" has no prompt: write what to ask after it, ${AT_EXAMPLE}.`,
    ],
    // every
    ["every", `"every" needs an interval or days, ${EVERY_EXAMPLE}.`],
    ["every now and then", `"every" needs an interval or days, ${EVERY_EXAMPLE}.`],
    ["every 30s x", `Durations count minutes, hours, days or weeks, not seconds ("30s"): ${EVERY_EXAMPLE}.`],
    ["every 1m x", `"every 1m" is too frequent: the interval must be at least 5 minutes, ${EVERY_EXAMPLE}.`],
    [
      "every 4 minutes x",
      `"every 4 minutes" is too frequent: the interval must be at least 5 minutes, ${EVERY_EXAMPLE}.`,
    ],
    [
      "every 366 days x",
      `"every 366 days" is too far apart: the interval can be at most 365 days, ${EVERY_EXAMPLE}.`,
    ],
    [
      "every 30m",
      `The schedule "every 30 minutes" has no prompt: write what to ask after it, ${EVERY_EXAMPLE}.`,
    ],
    [
      "every mon,wen at 09:00 x",
      `"mon,wen" is not a list of days: use day, weekday, weekend, monday…sunday or mon,wed,fri, ${EVERY_EXAMPLE}.`,
    ],
    [
      "every monday and x",
      `"monday and x" is not a list of days: use day, weekday, weekend, monday…sunday or mon,wed,fri, ${EVERY_EXAMPLE}.`,
    ],
    [
      "every weekday stand-up",
      '"every weekday" needs a time of day, e.g. every weekday at 09:00 stand-up reminder.',
    ],
    [
      "every day at 24:00 x",
      '"24:00" is not a time of day: use 00:00 to 23:59, e.g. every day at 09:00 stand-up reminder.',
    ],
    [
      "every mon at 09:00 Europe/Berlinn x",
      'Unknown time zone "Europe/Berlinn": use an IANA name such as Europe/Berlin or UTC.',
    ],
    ["daily x", '"daily" needs a time of day, e.g. daily at 09:00 stand-up reminder.'],
    [
      "weekdays 09:00",
      'The schedule "every weekday at 09:00 (Europe/Berlin)" has no prompt: write what to ask after it, e.g. weekdays at 09:00 stand-up reminder.',
    ],
    [
      "hourly",
      'The schedule "every hour on the hour (Europe/Berlin)" has no prompt: write what to ask after it, e.g. hourly check the queue.',
    ],
    // cron
    ["cron", `"cron" needs a 5-field pattern (${FIELDS}), ${CRON_EXAMPLE}.`],
    ['cron "" x', `"cron" needs a 5-field pattern (${FIELDS}), ${CRON_EXAMPLE}.`],
    [
      'cron "0 9 * *" x',
      `"0 9 * *" has 4 fields, but a cron pattern has exactly 5 (${FIELDS}) and no seconds, ${CRON_EXAMPLE}.`,
    ],
    [
      'cron "@daily" x',
      `"@daily" has 1 field, but a cron pattern has exactly 5 (${FIELDS}) and no seconds, ${CRON_EXAMPLE}.`,
    ],
    [
      'cron "0 0 9 * * *" x',
      `"0 0 9 * * *" has 6 fields, but a cron pattern has exactly 5 (${FIELDS}) and no seconds, ${CRON_EXAMPLE}.`,
    ],
    [
      "cron 0 9 *",
      `"0 9 *" has 3 fields, but a cron pattern has exactly 5 (${FIELDS}) and no seconds, ${CRON_EXAMPLE}.`,
    ],
    [
      "cron 0 0 9 * * * x",
      `Cron patterns have exactly 5 fields (${FIELDS}) and no seconds; quote the pattern if the prompt starts with a number, ${CRON_EXAMPLE}.`,
    ],
    ['cron "0 9 * * 1-5 x', `The cron pattern's closing quote is missing, ${CRON_EXAMPLE}.`],
    [
      'cron "61 * * * *" x',
      `"61 * * * *" is not a valid cron pattern (Constraint error, got value 61 expected range 0-59), ${CRON_EXAMPLE}.`,
    ],
    [
      'cron "0 9 31 2 *" x',
      `"0 9 31 2 *" is not a valid cron pattern (Invalid explicit day of month definition), ${CRON_EXAMPLE}.`,
    ],
    ['cron "0 0 31 4,6 *" x', `"0 0 31 4,6 *" never runs: check the day and month, ${CRON_EXAMPLE}.`],
    [
      'cron "H 9 * * *" x',
      `Hashed "H" values are not supported in "H 9 * * *": write the minute and hour out, ${CRON_EXAMPLE}.`,
    ],
    [
      'cron "*/2 * * * *" x',
      `"*/2 * * * *" runs more often than the minimum interval of 5 minutes, ${CRON_EXAMPLE}.`,
    ],
    [
      'cron "0,1 9 * * *" x',
      `"0,1 9 * * *" runs more often than the minimum interval of 5 minutes, ${CRON_EXAMPLE}.`,
    ],
    [
      'cron "0 9 * * *" tz=nowhere x',
      'Unknown time zone "nowhere": use an IANA name such as Europe/Berlin or UTC.',
    ],
    [
      'cron "0 9 * * 1-5"',
      `The schedule "cron 0 9 * * 1-5 (Europe/Berlin)" has no prompt: write what to ask after it, ${CRON_EXAMPLE}.`,
    ],
  ])("%j", (args, error) => {
    expect(refusal(args)).toBe(error);
  });

  it("names a configured minimum that is not whole minutes", () => {
    const result = parseSchedule("every 1m x", NOW, { defaultTimeZone: "UTC", minIntervalMs: 90_000 });
    expect(result).toEqual({
      ok: false,
      error: `"every 1m" is too frequent: the interval must be at least 1 minute 30 seconds, ${EVERY_EXAMPLE}.`,
    });
  });

  it("throws only for a default zone that is no zone, a configuration mistake", () => {
    expect(() =>
      parseSchedule("in 2h x", NOW, { defaultTimeZone: "Nowhere/Land", minIntervalMs: MINUTE }),
    ).toThrow(RangeError);
  });
});

/** What holds of every answer: a usable schedule, or one line of error. */
function checkAnswer(result: ParseResult, nowMs: number) {
  if (!result.ok) {
    expect(result.error).toMatch(/^[^\n]+\.$/);
    return;
  }
  const { spec, prompt, description } = result.schedule;
  expect(prompt).not.toBe("");
  expect(prompt).toBe(prompt.trim());
  expect(description).not.toBe("");
  const first = nextRuns(spec as ScheduleSpec, nowMs, 1)[0];
  expect(first).toBeGreaterThan(nowMs);
}

describe("never throws (fuzz)", () => {
  const nowArb = fc.integer({
    min: Date.parse("1990-01-01T00:00:00Z"),
    max: Date.parse("2090-01-01T00:00:00Z"),
  });

  it("on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), nowArb, (args, nowMs) => {
        checkAnswer(parseSchedule(args, nowMs, rules), nowMs);
      }),
      { numRuns: 1000 },
    );
  });

  it("on strings made of the grammar's own words", () => {
    const words = fc.constantFrom(
      ..."in at every cron hourly daily weekdays 2h 1h30m 90s 0m 3 days hours seconds 09:00 9am 25:00 2026-12-24 2027-03-28T02:30 2026-02-30 day weekday weekend mon,wed,fri mon, and & sun tue Europe/Berlin UTC tz=Asia/Tokyo tz=nope Europe/Nowhere and/or \" ' “ ” * */5 0 9 1-5 L 1#2 H 61 @daily x \n".split(
        " ",
      ),
    );
    fc.assert(
      fc.property(
        fc.array(words, { maxLength: 10 }),
        fc.constantFrom(" ", "  ", "\n", ""),
        nowArb,
        (tokens, gap, nowMs) => {
          checkAnswer(parseSchedule(tokens.join(gap), nowMs, rules), nowMs);
        },
      ),
      { numRuns: 400 },
    );
  });
});
