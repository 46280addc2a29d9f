/**
 * One session JSONL file: loading it into an in-memory index (damaged lines skipped with a
 * warning), and appending lines with an fsync.
 */
import { open, readFile } from "node:fs/promises";
import { NO_CARRIERS, nextCarriers, type SettingCarriers } from "../../agent/session/context.js";
import { createSessionHeader } from "../../agent/session/entries.js";
import { parseSessionJsonl, type WarnLogger } from "../../agent/session/jsonl.js";
import type { SessionEntry, SessionHeader } from "../../agent/session/types.js";

/**
 * A loaded session: every entry in file order, by id, the settings carriers at each entry, and
 * whether the file lacks a final newline.
 */
export class SessionIndex {
  readonly byId = new Map<string, SessionEntry>();
  /** Entry id → the entries that set the settings in force there (see `SettingCarriers`). */
  readonly carriers = new Map<string, SettingCarriers>();

  constructor(
    readonly header: SessionHeader,
    readonly entries: SessionEntry[],
    /** The file ends inside a line (a truncated write): the next append starts a new line first. */
    public needsNewline: boolean,
  ) {
    for (const e of entries) this.index(e);
  }

  get lastId(): string | null {
    return this.entries[this.entries.length - 1]?.id ?? null;
  }

  add(entries: readonly SessionEntry[]): void {
    for (const e of entries) {
      this.entries.push(e);
      this.index(e);
    }
  }

  /** The settings carriers at `id` (`NO_CARRIERS` for null or an unknown id). */
  carriersAt(id: string | null): SettingCarriers {
    return (id === null ? undefined : this.carriers.get(id)) ?? NO_CARRIERS;
  }

  private index(e: SessionEntry): void {
    this.byId.set(e.id, e);
    this.carriers.set(e.id, nextCarriers(e, this.carriersAt(e.parentId)));
  }
}

/** Reads and indexes a session file; undefined when it does not exist. */
export async function loadSessionFile(
  path: string,
  threadKey: string,
  sessionId: string,
  logger: WarnLogger,
): Promise<SessionIndex | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const fallbackHeader = {
    ...createSessionHeader(threadKey, { id: sessionId }),
    timestamp: new Date(0).toISOString(),
  };
  const parsed = parseSessionJsonl(text, { logger, source: path, fallbackHeader });
  const header = parsed?.header ?? fallbackHeader;
  return new SessionIndex(header, parsed?.entries ?? [], text.length > 0 && !text.endsWith("\n"));
}

/** Appends `text` to the file and waits until it is on disk. */
export async function appendDurably(path: string, text: string): Promise<void> {
  const handle = await open(path, "a");
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates a file that must not exist yet with `text`, on disk before it returns. */
export async function createDurably(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx");
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a directory's new entries (created or renamed files) durable. Best effort on platforms without it. */
export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the data itself was synced.
  }
}
