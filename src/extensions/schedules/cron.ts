/**
 * The one door to cron-parser. BullMQ 6.7.0 computes a job scheduler's next run as
 * `CronExpressionParser.parse(pattern, { tz, currentDate: previousRun }).next()` (its
 * `getNextMillis`); stepping the same way, re-parsing from each run, is what keeps the times shown
 * to users equal to the times BullMQ fires, DST nights included.
 */
import { CronExpressionParser } from "cron-parser";

/**
 * The first run of `pattern` in `tz` strictly after `afterMs`, computed exactly as BullMQ does, or
 * undefined when cron-parser rejects the pattern or finds no run (it gives up after a loop limit).
 */
export function nextCronRun(pattern: string, tz: string, afterMs: number): number | undefined {
  try {
    const next = CronExpressionParser.parse(pattern, { currentDate: new Date(afterMs), tz })
      .next()
      .getTime();
    return next > afterMs ? next : undefined;
  } catch {
    return undefined;
  }
}

/**
 * cron-parser's own previous run before `beforeMs`, or undefined. Only a hint: across DST changes
 * `prev()` disagrees with `next()` (it skips the shifted run of a spring-forward night and picks the
 * later of a repeated hour), so callers confirm it by stepping forward with `nextCronRun`.
 */
export function previousCronRunHint(pattern: string, tz: string, beforeMs: number): number | undefined {
  try {
    const previous = CronExpressionParser.parse(pattern, { currentDate: new Date(beforeMs), tz })
      .prev()
      .getTime();
    return previous < beforeMs ? previous : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why cron-parser refuses `pattern` in `tz` (its own message), or undefined when it accepts it.
 * Only parsing is checked; whether the pattern ever runs is `nextCronRun`'s question.
 */
export function cronSyntaxError(pattern: string, tz: string): string | undefined {
  try {
    CronExpressionParser.parse(pattern, { currentDate: new Date(0), tz });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
