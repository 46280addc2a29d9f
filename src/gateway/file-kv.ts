/**
 * `KeyValueStore` on one append-only file, for the embedded mode (no Redis): which thread a
 * platform message belongs to (Telegram reply chains, Discord conversations) and which Slack threads
 * the bot takes part in survive a restart, as they do in Redis. The adapters prefix their own keys.
 *
 * Layout: `<dataDir>/message-threads.jsonl`, one JSON array `[key, value, expiresAtMs]` per line,
 * the last line of a key winning. Everything is loaded into memory at start (expired entries
 * dropped; a line cut by a crash is skipped), every `set` appends its line before it resolves, and
 * when most lines are stale the file is rewritten (to a temporary file, then renamed over it, so a
 * crash leaves the old or the new file, never half of one). One process owns the file, as it owns
 * the embedded runtime's other files; writes are not fsynced, so a process restart loses nothing
 * while a power cut may lose the last lines, like the session files.
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { appendFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { BoundedMap } from "../adapters/bounded-map.js";
import type { KeyValueStore } from "../adapters/types.js";

export interface FileKeyValueStoreOptions {
  /** Most keys kept; the least recently written go first (default 200,000). */
  maxEntries?: number;
  now?: () => number;
}

/** Stale lines tolerated before a rewrite, beyond one per live key. */
const SLACK_LINES = 1000;

export class FileKeyValueStore implements KeyValueStore {
  private readonly entries: BoundedMap<string, string>;
  private lines = 0;
  private writes: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  /** Loads `path` (created with its directory when missing). Throws when it cannot be read or created. */
  constructor(
    readonly path: string,
    o: FileKeyValueStoreOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.entries = new BoundedMap(o.maxEntries ?? 200_000, Number.POSITIVE_INFINITY, this.now);
    mkdirSync(dirname(path), { recursive: true });
    let text = "";
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      appendFileSync(path, "");
    }
    const now = this.now();
    // The last line of each key wins, in the order those last lines were written.
    const loaded = new Map<string, [value: string, expiresAt: number]>();
    for (const line of text.split("\n")) {
      if (!line) continue;
      this.lines++;
      const parsed = parseLine(line);
      if (!parsed) continue;
      const [key, value, expiresAt] = parsed;
      loaded.delete(key);
      if (expiresAt > now) loaded.set(key, [value, expiresAt]);
    }
    for (const [key, [value, expiresAt]] of loaded) this.entries.setUntil(key, value, expiresAt);
    if (this.stale()) this.rewriteSync();
    // A line cut short by a crash must not swallow the next append.
    else if (text !== "" && !text.endsWith("\n")) appendFileSync(path, "\n");
  }

  async get(key: string): Promise<string | undefined> {
    return this.entries.get(key);
  }

  /** Resolves once the entry is written to the file (rejects when the write fails; memory keeps it). */
  set(key: string, value: string, ttlMs: number): Promise<void> {
    const expiresAt = this.now() + Math.max(1, Math.ceil(ttlMs));
    this.entries.setUntil(key, value, expiresAt);
    const line = `${JSON.stringify([key, value, expiresAt])}\n`;
    const write = this.writes.then(async () => {
      if (this.stale()) await this.rewrite();
      else {
        await appendFile(this.path, line);
        this.lines++;
      }
    });
    // A failed write is the caller's failure; the next write tries again from a clean state.
    this.writes = write.catch(() => {});
    return write;
  }

  /** Resolves once every write so far is on disk. */
  flush(): Promise<void> {
    return this.writes;
  }

  private stale(): boolean {
    return this.lines > 2 * this.entries.size + SLACK_LINES;
  }

  private snapshot(): string {
    let text = "";
    let lines = 0;
    for (const [key, value, expiresAt] of this.entries.live()) {
      text += `${JSON.stringify([key, value, expiresAt])}\n`;
      lines++;
    }
    this.lines = lines;
    return text;
  }

  private rewriteSync(): void {
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, this.snapshot());
    renameSync(tmp, this.path);
  }

  private async rewrite(): Promise<void> {
    const tmp = `${this.path}.tmp`;
    await writeFile(tmp, this.snapshot());
    await rename(tmp, this.path);
  }
}

function parseLine(line: string): [string, string, number] | undefined {
  try {
    const v: unknown = JSON.parse(line);
    if (
      Array.isArray(v) &&
      typeof v[0] === "string" &&
      typeof v[1] === "string" &&
      typeof v[2] === "number" &&
      Number.isFinite(v[2])
    )
      return [v[0], v[1], v[2]];
  } catch {
    // a line cut short by a crash: the entry before it (if any) stands
  }
  return undefined;
}
