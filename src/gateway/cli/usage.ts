/**
 * `switchboard usage`, the pure part: reading `--since`/`--until` (a date, an instant or a
 * duration back from now) and writing the usage rows as CSV or JSON.
 */
import { localDateTimeToInstant } from "../../extensions/schedules/time-zone.js";
import type { UsageExportRow } from "./types.js";

export const USAGE_FORMATS = ["csv", "json"] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];

/** A time as given on the command line, made an instant once the config's zone is known. */
export type When =
  | { kind: "date"; year: number; month: number; day: number }
  | { kind: "instant"; ms: number }
  | { kind: "ago"; ms: number };

const HOUR = 3_600_000;
const UNITS: Record<string, number> = { h: HOUR, d: 24 * HOUR, w: 7 * 24 * HOUR };

/** `text` as a `When`, or the sentence saying why it is none (for a usage error). */
export function parseWhen(text: string): When | string {
  const t = text.trim();
  const expected =
    "a date (2026-11-01), an instant with its zone (2026-11-01T09:00:00Z, 2026-11-01T09:00+01:00) or a duration back from now (24h, 7d, 2w)";
  const ago = /^(\d{1,6})([hdw])$/.exec(t);
  if (ago) return { kind: "ago", ms: Number(ago[1]) * (UNITS[ago[2] as string] as number) };
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth)
      return `"${text}" is no date in the calendar`;
    return { kind: "date", year, month, day };
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(t))
    return `"${text}" names no zone: add Z (UTC) or an offset such as +01:00, or give a date`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(t)) {
    const ms = Date.parse(t);
    if (Number.isFinite(ms)) return { kind: "instant", ms };
  }
  return `"${text}" is not ${expected}`;
}

/** The instant `w` stands for: a date's first instant in `timeZone`, a duration before `now`. */
export function instantOf(w: When, now: number, timeZone: string): number {
  if (w.kind === "instant") return w.ms;
  if (w.kind === "ago") return now - w.ms;
  return localDateTimeToInstant({ year: w.year, month: w.month, day: w.day, hour: 0, minute: 0 }, timeZone);
}

/** A CSV field, quoted as RFC 4180 says when it holds a comma, a quote or a line break. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** USD with at most 6 decimals (the ledger counts whole micro-dollars), no trailing zeros. */
function usdText(usd: number): string {
  const fixed = usd.toFixed(6);
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/** The rows as CSV: a header line, then one line per row; each line ends with a newline. */
export function usageCsv(rows: readonly UsageExportRow[]): string {
  const lines = ["day,scope,key,model,usd,tokens,calls"];
  for (const r of rows)
    lines.push(
      [
        r.day,
        r.scope,
        csvField(r.key),
        csvField(r.model),
        usdText(r.usd),
        String(r.tokens),
        String(r.calls),
      ].join(","),
    );
  return `${lines.join("\n")}\n`;
}

/** The rows as one JSON array (an object per row), ending with a newline. */
export function usageJson(rows: readonly UsageExportRow[]): string {
  return `${JSON.stringify(rows, null, 2)}\n`;
}
