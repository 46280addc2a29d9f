/**
 * How both schedule stores file a record, so that they count and order alike: the person a chat
 * schedule counts against (`scheduleUser`) and the order of every listing (`compareSchedules`).
 */
import type { ScheduleRecord } from "./types.js";

/**
 * The person whose per-user limit a record counts against: `<platform>:<owner id>`, since the same
 * id on two platforms is two people. Only chat records count (`countsAgainstLimits`).
 */
export function scheduleUser(record: ScheduleRecord): string {
  return `${record.target.platform}:${record.owner.id}`;
}

/** Whether a record counts against the limits: chat schedules do, the operators' config ones never. */
export function countsAgainstLimits(record: ScheduleRecord): boolean {
  return record.origin === "chat";
}

/**
 * The order of every listing, oldest first: by `createdAt`, then by id (code unit order), so that
 * records made in the same millisecond list the same way in both stores and on every call.
 */
export function compareSchedules(a: ScheduleRecord, b: ScheduleRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
