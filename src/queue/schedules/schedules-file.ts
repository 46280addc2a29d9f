/**
 * The embedded mode's schedules file, `<dataDir>/schedules.json`: `{"version": 1, "schedules":
 * [record, …]}`. Read once at start (`readSchedulesFile`), replaced whole at each change
 * (`writeSchedulesFile`: a temporary file, fsynced, then renamed over it, so a crash leaves the old
 * file or the new one, never half of one).
 */
import { readStateFile, replaceStateFile } from "../store/state-file.js";
import type { ScheduleRecord } from "./types.js";

/** The file's shape on disk. */
interface SchedulesFile {
  version: 1;
  schedules: ScheduleRecord[];
}

/**
 * The records in the file at `path`, in file order; none when it does not exist. Throws an Error
 * naming the file and what to do when it cannot be read or is not a schedules file (the caller
 * decides whether to stop): loading a damaged file as empty would overwrite it at the next change
 * and lose every chat schedule in it.
 */
export function readSchedulesFile(path: string): ScheduleRecord[] {
  const parsed = readStateFile(path, (why) => damaged(path, why));
  if (parsed === undefined) return [];
  const file = parsed as Partial<SchedulesFile> | null;
  if (typeof file !== "object" || file === null || file.version !== 1 || !Array.isArray(file.schedules))
    throw damaged(path, 'not {"version": 1, "schedules": [...]}');
  for (const [i, record] of file.schedules.entries()) {
    if (typeof record !== "object" || record === null || typeof record.id !== "string")
      throw damaged(path, `schedule ${i} has no id`);
  }
  return file.schedules;
}

function damaged(path: string, why: string): Error {
  return new Error(
    `The schedules file ${path} is damaged (${why}). Move it aside (rename it, say to ${path}.damaged) ` +
      "to start with no chat schedules (config schedules come back from the config), or repair it and restart.",
  );
}

/**
 * Replaces the file at `path` with `records` as they are at the call (serialized before the first
 * await) atomically; resolves once the new file is in place.
 */
export async function writeSchedulesFile(path: string, records: readonly ScheduleRecord[]): Promise<void> {
  const file: SchedulesFile = { version: 1, schedules: [...records] };
  await replaceStateFile(path, `${JSON.stringify(file, null, 2)}\n`);
}
