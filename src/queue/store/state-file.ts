/**
 * A state file the embedded mode replaces whole (the schedules, the budgets): read once at start,
 * rewritten at each change to a temporary file that is fsynced and renamed over it, so a crash
 * leaves the old file or the new one, never half of one. One process owns each file and writes it
 * one change at a time, so one temporary name suffices.
 */
import { readFileSync } from "node:fs";
import { open, rename } from "node:fs/promises";

/**
 * The JSON in the file at `path`, or undefined when there is no file. A file that is not JSON
 * throws `damaged("not JSON: …")`: the caller names the file and what to do, since loading a damaged
 * file as empty would overwrite it at the next change.
 */
export function readStateFile(path: string, damaged: (why: string) => Error): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw damaged(`not JSON: ${(err as Error).message}`);
  }
}

/** Replaces the file at `path` with `text`, atomically; resolves once the new file is in place. */
export async function replaceStateFile(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const handle = await open(tmp, "w");
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
}
