/**
 * Days of the week as chat users name them ("weekday", "mon,wed,fri", "Monday and Friday"), turned
 * into cron's day-of-week field (0 = Sunday) and back into a phrase for the description.
 */
import type { Cursor } from "./cursor.js";

const NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const WEEKDAYS = [1, 2, 3, 4, 5];

const WORDS = new Map<string, number[]>([
  ["day", [0, 1, 2, 3, 4, 5, 6]],
  ["days", [0, 1, 2, 3, 4, 5, 6]],
  ["weekday", WEEKDAYS],
  ["weekdays", WEEKDAYS],
  ["weekend", [0, 6]],
  ["weekends", [0, 6]],
]);
for (const [day, name] of NAMES.entries()) {
  const lower = name.toLowerCase();
  for (const word of [lower, `${lower}s`, lower.slice(0, 3)]) WORDS.set(word, [day]);
}
for (const [word, day] of [
  ["tues", 2],
  ["weds", 3],
  ["thur", 4],
  ["thurs", 4],
] as const) {
  WORDS.set(word, [day]);
}

const daysOf = (word: string) => WORDS.get(word.toLowerCase());

/**
 * The outcome of reading days: the set (`days`, sorted, 0 = Sunday) and the words taken (`text`),
 * `none` when the next word names no day (nothing consumed), or `bad` with the list when a list
 * that started with a day holds a word that is not one ("mon,wen").
 */
export type DaysRead =
  | { kind: "ok"; days: number[]; text: string }
  | { kind: "none" }
  | { kind: "bad"; text: string };

/**
 * Reads days at the cursor: one word or a list joined by commas (inside a word or between words)
 * or by "and"/"&" ("mon,wed,fri", "mon, wed and fri", "saturday & sunday"). On `none` the cursor is
 * where it was.
 */
export function readDays(cursor: Cursor): DaysRead {
  const days = new Set<number>();
  const words: string[] = [];
  let needDay = true;
  for (;;) {
    const word = cursor.peek();
    if (word === undefined) break;
    if (!needDay) {
      if (!/^(and|&)$/i.test(word)) break;
      needDay = true;
    } else {
      const named = word
        .split(",")
        .filter((piece) => piece !== "")
        .map(daysOf);
      if (named.length === 0 || named.some((d) => d === undefined)) {
        // Only a word that starts with a day name makes this a list of days at all.
        if (words.length === 0 && named[0] === undefined) return { kind: "none" };
        return { kind: "bad", text: [...words, word].join(" ") };
      }
      for (const list of named) for (const day of list ?? []) days.add(day);
      needDay = word.endsWith(",");
    }
    words.push(word);
    cursor.next();
  }
  if (needDay) return words.length === 0 ? { kind: "none" } : { kind: "bad", text: words.join(" ") };
  return { kind: "ok", days: [...days].sort((a, b) => a - b), text: words.join(" ") };
}

/**
 * Cron's day-of-week field for `days` (sorted, 0 = Sunday): "*" for all seven, runs of three or
 * more as ranges ("1-5", "1-3,5"), the rest listed ("0,6").
 */
export function dayOfWeekField(days: readonly number[]): string {
  if (days.length === 7) return "*";
  const parts: string[] = [];
  for (let i = 0; i < days.length; ) {
    let j = i;
    while (j + 1 < days.length && days[j + 1] === (days[j] ?? 0) + 1) j++;
    parts.push(j - i >= 2 ? `${days[i]}-${days[j]}` : days.slice(i, j + 1).join(","));
    i = j + 1;
  }
  return parts.join(",");
}

/**
 * "day", "weekday", or the days named Monday first ("Monday, Wednesday and Friday",
 * "Saturday and Sunday"), to follow "every" in a description.
 */
export function daysPhrase(days: readonly number[]): string {
  if (days.length === 7) return "day";
  if (days.length === 5 && WEEKDAYS.every((d) => days.includes(d))) return "weekday";
  const names = [...days].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7)).map((d) => NAMES[d] ?? String(d));
  return names.length === 1 ? String(names[0]) : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
