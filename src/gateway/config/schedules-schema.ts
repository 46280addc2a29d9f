/**
 * The `schedules:` section: how scheduled prompts behave (docs/scheduling.md) and the operators'
 * own schedules (`jobs`), kept in step with the file at every start.
 */
import { Type } from "@sinclair/typebox";
import { Obj, StringEnum } from "../../adapters/config-schema.js";

const ConfiguredScheduleSchema = Type.Object(
  {
    id: Type.String({
      pattern: "^[A-Za-z0-9_-]{1,40}$",
      description: "A name of your choosing (letters, digits, - and _): the schedule's id in /schedule list.",
    }),
    thread: Type.String({
      minLength: 3,
      description:
        "The conversation it runs in, as a thread key (`/status` shows it): slack:<team>:<channel>:<thread_ts>, discord:…, telegram:…, web:<conversation>.",
    }),
    schedule: Type.String({
      minLength: 1,
      description:
        "When, as /schedule takes it: `every weekday 09:00 Europe/Berlin`, `every 6h`, `cron 0 9 * * 1-5`.",
    }),
    prompt: Type.String({ minLength: 1, description: "What the agent is asked each time." }),
  },
  { additionalProperties: false },
);

export const SchedulesSchema = Obj(
  {
    enabled: Type.Boolean({ default: true, description: "Offer /schedule and run schedules." }),
    timeZone: Type.String({
      default: "UTC",
      description: "The zone of schedules that name none (IANA: Europe/Berlin, America/New_York, UTC).",
    }),
    missed: StringEnum(["once", "skip"] as const, {
      default: "once",
      description:
        "Occurrences that fell due while nothing ran: once (run the latest when back) or skip. Never a burst.",
    }),
    graceMs: Type.Integer({
      default: 300_000,
      minimum: 0,
      description: "A late occurrence within this many ms still runs, whatever `missed` says.",
    }),
    ifBusy: StringEnum(["queue", "skip"] as const, {
      default: "queue",
      description: "A conversation busy at an occurrence: queue the prompt after its run, or skip it.",
    }),
    maxPerThread: Type.Integer({
      default: 10,
      minimum: 1,
      description: "Most chat schedules per conversation.",
    }),
    maxPerUser: Type.Integer({
      default: 25,
      minimum: 1,
      description: "Most chat schedules one person may own.",
    }),
    minIntervalMs: Type.Integer({
      default: 300_000,
      minimum: 60_000,
      description: "Shortest interval a repeating schedule may have (ms; at least a minute).",
    }),
    quietMarker: Type.String({
      default: "NO_REPLY",
      description: "A scheduled run that answers exactly this (or nothing) posts nothing. Empty: off.",
    }),
    deliveryRetryMs: Type.Array(Type.Integer({ minimum: 1000 }), {
      default: [60_000, 300_000, 1_800_000, 7_200_000],
      minItems: 1,
      description:
        "Waits between retries of an answer the platform refused (the prompt is not run again); still refused after the last, the schedule is paused.",
    }),
    jobs: Type.Array(ConfiguredScheduleSchema, {
      default: [],
      description: "The operators' schedules (ids must be unique); chat schedules are made with /schedule.",
    }),
  },
  "Scheduled prompts: /schedule and the operators' schedules.",
);
