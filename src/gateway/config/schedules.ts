/**
 * The checks of the `schedules:` section the schema cannot make: a time zone that exists, job ids
 * that do not repeat, thread keys of a known platform, and schedules that parse the way `/schedule`
 * reads them (checked at `now`, so a one-off whose time has passed is refused too).
 */
import { canonicalTimeZone, parseSchedule } from "../../extensions/schedules/index.js";
import { type ConfigIssue, joinPath } from "./errors.js";
import type { ValidatedConfig } from "./schema.js";

export function scheduleIssues(
  s: ValidatedConfig["schedules"],
  platforms: readonly string[],
  now: number,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const zone = canonicalTimeZone(s.timeZone);
  if (!zone)
    issues.push({
      path: "schedules.timeZone",
      message: `"${s.timeZone}" is not a time zone: use an IANA name such as Europe/Berlin, America/New_York or UTC`,
    });
  const rules = { defaultTimeZone: zone ?? "UTC", minIntervalMs: s.minIntervalMs };
  const firstOf = new Map<string, number>();
  s.jobs.forEach((job, i) => {
    const at = (field: string) => joinPath(["schedules", "jobs", i, field]);
    const first = firstOf.get(job.id);
    if (first !== undefined)
      issues.push({ path: at("id"), message: `repeats "${job.id}" of schedules.jobs[${first}]` });
    else firstOf.set(job.id, i);
    const platform = job.thread.split(":")[0] ?? "";
    if (!platforms.includes(platform))
      issues.push({
        path: at("thread"),
        message: `"${job.thread}" is no thread key: it starts with a platform (${platforms.join(", ")}) and a colon, e.g. web:<conversation>`,
      });
    const parsed = parseSchedule(`${job.schedule} ${job.prompt}`, now, rules);
    if (!parsed.ok) issues.push({ path: at("schedule"), message: parsed.error });
    else if (parsed.schedule.prompt !== job.prompt.trim())
      issues.push({
        path: at("schedule"),
        message: `"${job.schedule}" holds more than when it runs; put what the agent is asked in prompt`,
      });
  });
  return issues;
}
