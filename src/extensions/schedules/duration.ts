/**
 * Durations as people write them in chat ("45m", "1h30m", "2 hours"), counted in minutes and up:
 * second-level schedules are not offered, so a seconds unit is an error rather than a surprise.
 */
import type { Cursor } from "./cursor.js";

export const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
const WEEK_MS = 7 * DAY_MS;

const UNITS: Record<string, number> = {};
for (const [ms, names] of [
  [MINUTE_MS, ["m", "min", "mins", "minute", "minutes"]],
  [HOUR_MS, ["h", "hr", "hrs", "hour", "hours"]],
  [DAY_MS, ["d", "day", "days"]],
  [WEEK_MS, ["w", "wk", "wks", "week", "weeks"]],
] as const) {
  for (const name of names) UNITS[name] = ms;
}
const SECOND_UNITS = new Set(["s", "sec", "secs", "second", "seconds"]);

const unitMs = (word: string): number | undefined =>
  Object.hasOwn(UNITS, word.toLowerCase()) ? UNITS[word.toLowerCase()] : undefined;

/**
 * The outcome of reading a duration: `ms` and the words it took (`text`, for error messages), `none`
 * when the next word starts no duration (nothing consumed), or `seconds` with the offending word
 * when a seconds unit was used.
 */
export type DurationRead =
  | { kind: "ok"; ms: number; text: string }
  | { kind: "none" }
  | { kind: "seconds"; word: string };

/**
 * Reads a duration at the cursor: one or more parts, each compact ("1h30m", "45m") or a number and
 * a unit word ("2 hours"), summed, stopping at the first word that is neither, so "in 2h check it"
 * leaves "check it". `bareUnit` also takes a lone unit word as one of that unit ("every hour"). On `none`
 * the cursor is where it was. The result may be Infinity for absurd numbers; callers bound it.
 */
export function readDuration(cursor: Cursor, bareUnit = false): DurationRead {
  const words: string[] = [];
  let ms = 0;
  for (;;) {
    const mark = cursor.pos;
    const word = cursor.next();
    if (word === undefined) break;
    if (/^(\d+[a-z]+)+$/i.test(word)) {
      let sum = 0;
      for (const [, count, unit] of word.matchAll(/(\d+)([a-z]+)/gi)) {
        if (SECOND_UNITS.has(String(unit).toLowerCase())) return { kind: "seconds", word };
        const size = unitMs(String(unit));
        if (size === undefined) {
          sum = Number.NaN;
          break;
        }
        sum += Number(count) * size;
      }
      if (!Number.isNaN(sum)) {
        ms += sum;
        words.push(word);
        continue;
      }
    } else if (/^\d+$/.test(word)) {
      const unitMark = cursor.pos;
      const unit = cursor.next();
      if (unit !== undefined && SECOND_UNITS.has(unit.toLowerCase())) {
        return { kind: "seconds", word: `${word} ${unit}` };
      }
      const size = unit === undefined ? undefined : unitMs(unit);
      if (size !== undefined) {
        ms += Number(word) * size;
        words.push(`${word} ${unit}`);
        continue;
      }
      cursor.pos = unitMark;
    } else if (bareUnit && words.length === 0 && unitMs(word) !== undefined && word.length > 1) {
      ms += unitMs(word) ?? 0;
      words.push(word);
      continue;
    }
    cursor.pos = mark;
    break;
  }
  return words.length === 0 ? { kind: "none" } : { kind: "ok", ms, text: words.join(" ") };
}

/**
 * `ms` in words, largest units first: "30 minutes", "1 hour 30 minutes", "2 weeks"; seconds appear
 * only when `ms` is not whole minutes (a configured minimum may be), and 0 is "0 minutes".
 */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let left = Math.max(0, Math.round(ms / 1000)) * 1000;
  for (const [size, unit] of [
    [WEEK_MS, "week"],
    [DAY_MS, "day"],
    [HOUR_MS, "hour"],
    [MINUTE_MS, "minute"],
    [1000, "second"],
  ] as const) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count > 0) parts.push(`${count} ${unit}${count === 1 ? "" : "s"}`);
  }
  return parts.length === 0 ? "0 minutes" : parts.join(" ");
}
