/**
 * The render journal: per thread, what each run (or worker notice) has shown in the chat and still
 * owes it, as the opaque snapshot its sink records (`RenderLog`). Written only by the thread's lease
 * holder (fenced by its token, like the session), read and cleared by the next holder when it takes
 * the thread, so a worker that dies between a platform request and the chat's final state leaves a
 * record the next holder finishes. `RedisRenderJournal` keeps it in the thread's hash slot; the
 * memory one below serves the embedded runtime, mirrored to files so that a restart finishes too.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { decodeThreadKey, encodeThreadKey } from "../store/thread-dir.js";

/** One owed record: the run (or notice) id and the last snapshot its sink recorded. */
export interface OwedRender {
  runId: string;
  /** Undefined when only posted ids are left of the record (or it is damaged). */
  snapshot: unknown;
  /** Idempotency key of a post → the platform id it got, as recorded the instant the platform answered. */
  posted: ReadonlyMap<string, string>;
}

/**
 * The field of a posted id beside run `runId`'s snapshot: `<runId>\n<key>` (run ids never hold a
 * newline). One field per post, so it is written at once, apart from the run's ordered snapshots.
 */
export function postedField(runId: string, key: string): string {
  return `${runId}\n${key}`;
}

/** Groups a journal's fields (`runId` → snapshot JSON, `runId\nkey` → posted id) into records. */
export function groupRecords(
  fields: Iterable<[string, unknown]>,
  parse: (raw: unknown) => unknown,
): OwedRender[] {
  const runs = new Map<string, { snapshot: unknown; posted: Map<string, string> }>();
  const of = (runId: string) => {
    let r = runs.get(runId);
    if (!r) {
      r = { snapshot: undefined, posted: new Map() };
      runs.set(runId, r);
    }
    return r;
  };
  for (const [field, value] of fields) {
    const cut = field.indexOf("\n");
    if (cut < 0) of(field).snapshot = parse(value);
    else if (typeof value === "string") of(field.slice(0, cut)).posted.set(field.slice(cut + 1), value);
  }
  return [...runs.entries()].map(([runId, r]) => ({ runId, snapshot: r.snapshot, posted: r.posted }));
}

/** The journal primitives; every method is atomic on its own. */
export interface RenderJournal {
  /** Records `snapshot` as what run `runId` owes, replacing the previous one. False: `token` does not hold the lease. */
  put(threadKey: string, token: string, runId: string, snapshot: unknown): Promise<boolean>;
  /**
   * Records that the post with idempotency key `key` of run `runId` got platform id `ref`: sent the
   * instant the platform answered, apart from the run's snapshots (which may be queued), so that a
   * worker killed just after a post leaves the id. False: `token` does not hold the lease.
   */
  posted(threadKey: string, token: string, runId: string, key: string, ref: string): Promise<boolean>;
  /** Nothing is owed for `runId` any more (its posted ids go too). False: `token` does not hold the lease. */
  drop(threadKey: string, token: string, runId: string): Promise<boolean>;
  /** What the thread's runs still owe, in no particular order (a damaged record has `snapshot` undefined). */
  owed(threadKey: string): Promise<OwedRender[]>;
}

/**
 * A copy of `value` as JSON keeps it, the form Redis and the files store: a record is what was put,
 * not a live view of the caller's object (a renderer goes on changing its messages after `owe`).
 */
function jsonCopy(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

export interface MemoryRenderJournalOptions {
  /** True while `token` holds the thread's lease (the embedded runtime's lease table). */
  holds: (threadKey: string, token: string) => boolean;
  /** Mirror every thread's records to `${dir}/<thread>.json`; omitted: memory only. */
  dir?: string;
}

/** The journal of the embedded runtime: in memory, written through to files when `dir` is given. */
export class MemoryRenderJournal implements RenderJournal {
  private readonly threads = new Map<string, Map<string, unknown>>();
  /** Per-thread write chain, so the files are written in the order of the changes. */
  private readonly writes = new Map<string, Promise<void>>();

  constructor(private readonly o: MemoryRenderJournalOptions) {}

  /** Loads the records a previous process left in `dir`; returns the threads that owe something. */
  async load(): Promise<string[]> {
    const dir = this.o.dir;
    if (!dir) return [];
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      const threadKey = decodeThreadKey(name.slice(0, -5));
      if (threadKey === undefined) continue;
      try {
        const runs = JSON.parse(await readFile(join(dir, name), "utf8")) as Record<string, unknown>;
        const records = new Map(Object.entries(runs));
        if (records.size === 0) continue;
        this.threads.set(threadKey, records);
        out.push(threadKey);
      } catch {
        // A damaged file owes nothing we could finish; the next write replaces it.
      }
    }
    return out;
  }

  async put(threadKey: string, token: string, runId: string, snapshot: unknown): Promise<boolean> {
    if (!this.o.holds(threadKey, token)) return false;
    let runs = this.threads.get(threadKey);
    if (!runs) {
      runs = new Map();
      this.threads.set(threadKey, runs);
    }
    runs.set(runId, jsonCopy(snapshot));
    await this.persist(threadKey);
    return true;
  }

  async posted(threadKey: string, token: string, runId: string, key: string, ref: string): Promise<boolean> {
    return this.put(threadKey, token, postedField(runId, key), ref);
  }

  async drop(threadKey: string, token: string, runId: string): Promise<boolean> {
    if (!this.o.holds(threadKey, token)) return false;
    const runs = this.threads.get(threadKey);
    if (!runs) return true;
    let changed = runs.delete(runId);
    for (const field of [...runs.keys()])
      if (field.startsWith(postedField(runId, ""))) changed = runs.delete(field) || changed;
    if (!changed) return true;
    if (runs.size === 0) this.threads.delete(threadKey);
    await this.persist(threadKey);
    return true;
  }

  async owed(threadKey: string): Promise<OwedRender[]> {
    return groupRecords((this.threads.get(threadKey) ?? new Map<string, unknown>()).entries(), jsonCopy);
  }

  /** Writes the thread's records as they are now (after the writes queued before). */
  private persist(threadKey: string): Promise<void> {
    const dir = this.o.dir;
    if (!dir) return Promise.resolve();
    const step = (this.writes.get(threadKey) ?? Promise.resolve()).then(async () => {
      const runs = this.threads.get(threadKey);
      const path = join(dir, `${encodeThreadKey(threadKey)}.json`);
      if (!runs || runs.size === 0) {
        await rm(path, { force: true });
        return;
      }
      await mkdir(dir, { recursive: true });
      const tmp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
      const handle = await open(tmp, "w");
      try {
        await handle.writeFile(JSON.stringify(Object.fromEntries(runs)), "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, path);
    });
    this.writes.set(
      threadKey,
      step.catch(() => {}),
    );
    return step;
  }
}
