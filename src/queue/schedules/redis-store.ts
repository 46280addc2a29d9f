/**
 * `ScheduleStore` on Redis, shared by every process of a deployment. Each record is a JSON string;
 * a hash per thread (id → origin) and a set per person (chat schedule ids) index them for the
 * listings and the limits, and a set holds every id (`ScheduleKeys` in src/redis-keys.ts). Every
 * key carries the one hash tag `{schedules}`, so each step, a script in src/queue/lua/
 * (schedule-*.lua), touches one slot and also runs on Redis Cluster. Reads are plain commands (the
 * index, then MGET of the records). The scripts that change a record decode and re-encode it with
 * Redis's cjson, which keeps 14 significant digits of a number (a ms timestamp has 13) and would
 * turn an empty array into `{}` (a record has none).
 */
import { DEFAULT_KEY_PREFIX, ScheduleKeys } from "../../redis-keys.js";
import { luaScript } from "../lua/load.js";
import type { RedisClient } from "../redis/client.js";
import { runScript, type ScriptReply } from "../redis/run-script.js";
import { compareSchedules, scheduleUser } from "./indexing.js";
import type { CreateOutcome, ScheduleLimits, ScheduleRecord, ScheduleRun, ScheduleStore } from "./types.js";

/** Adds a record when its id is free and no limit is reached (schedule-create.4.lua). */
const CREATE = luaScript("schedule-create");
/** Adds or replaces a record, moving it between indexes (schedule-put.6.lua). */
const PUT = luaScript("schedule-put");
/** Removes a record and its index entries (schedule-remove.4.lua). */
const REMOVE = luaScript("schedule-remove");
/** The occurrence fence (schedule-claim.1.lua). */
const CLAIM = luaScript("schedule-claim");
/** Patches the current occurrence's run (schedule-update-run.1.lua). */
const UPDATE_RUN = luaScript("schedule-update-run");
/** Pauses or resumes (schedule-set-paused.1.lua). */
const SET_PAUSED = luaScript("schedule-set-paused");

/** Where a record is indexed, as schedule-place.lua spells it from the stored JSON. */
function placeOf(record: ScheduleRecord): string {
  return `${record.target.threadKey}\n${scheduleUser(record)}`;
}

/**
 * The schedules in Redis under `prefix` (default `DEFAULT_KEY_PREFIX`). Uses (does not own)
 * `redis`: `close` leaves it open. Every method is one atomic step but `put` and `remove`, which
 * read the record first to name its index keys, and step again when another put or remove of the
 * same id moved it meanwhile (the step gives the record back, so no second read is needed).
 */
export class RedisScheduleStore implements ScheduleStore {
  private readonly keys: ScheduleKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string = DEFAULT_KEY_PREFIX,
  ) {
    this.keys = new ScheduleKeys(prefix);
  }

  async create(record: ScheduleRecord, limits: ScheduleLimits): Promise<CreateOutcome> {
    const k = this.keys;
    const reply = await runScript(
      this.redis,
      CREATE,
      [k.record(record.id), k.all, k.thread(record.target.threadKey), k.user(scheduleUser(record))],
      [record.id, JSON.stringify(record), record.origin, limits.perThread, limits.perUser],
    );
    switch (reply) {
      case "ok":
        return { ok: true };
      case "exists":
        return { ok: false, reason: "exists" };
      case "thread":
        return { ok: false, reason: "thread", limit: limits.perThread };
      case "user":
        return { ok: false, reason: "user", limit: limits.perUser };
      default:
        throw new Error(
          `schedule-create answered ${JSON.stringify(reply)}; expected ok, exists, thread or user.`,
        );
    }
  }

  async put(record: ScheduleRecord): Promise<void> {
    const k = this.keys;
    const json = JSON.stringify(record);
    let stored = await this.redis.get(k.record(record.id));
    for (;;) {
      const old = stored === null ? undefined : parse(stored);
      const from = old ?? record;
      const place = old ? placeOf(old) : "";
      const reply = (await runScript(
        this.redis,
        PUT,
        [
          k.record(record.id),
          k.all,
          k.thread(record.target.threadKey),
          k.user(scheduleUser(record)),
          k.thread(from.target.threadKey),
          k.user(scheduleUser(from)),
        ],
        [record.id, json, record.origin, place],
      )) as ScriptReply[];
      if (Number(reply[0]) === 1) return;
      stored = movedTo(reply[1], place, record.id);
    }
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const raw = await this.redis.get(this.keys.record(id));
    return raw === null ? undefined : parse(raw);
  }

  async listByThread(threadKey: string): Promise<ScheduleRecord[]> {
    return this.read(await this.redis.hkeys(this.keys.thread(threadKey)));
  }

  async listAll(): Promise<ScheduleRecord[]> {
    return this.read(await this.redis.smembers(this.keys.all));
  }

  async setPaused(id: string, paused: boolean, reason?: string): Promise<ScheduleRecord | undefined> {
    const reply = await runScript(
      this.redis,
      SET_PAUSED,
      [this.keys.record(id)],
      [paused ? 1 : 0, reason === undefined ? 0 : 1, reason ?? ""],
    );
    return typeof reply === "string" ? parse(reply) : undefined;
  }

  async claimOccurrence(
    id: string,
    occurrence: number,
    run: ScheduleRun,
    missedBefore: number,
  ): Promise<ScheduleRecord | undefined> {
    const reply = await runScript(
      this.redis,
      CLAIM,
      [this.keys.record(id)],
      [occurrence, JSON.stringify(run), missedBefore],
    );
    return typeof reply === "string" ? parse(reply) : undefined;
  }

  async updateRun(
    id: string,
    occurrence: number,
    patch: Partial<Omit<ScheduleRun, "occurrence">>,
  ): Promise<boolean> {
    const reply = await runScript(
      this.redis,
      UPDATE_RUN,
      [this.keys.record(id)],
      [occurrence, JSON.stringify(patch)],
    );
    return Number(reply) === 1;
  }

  async findByRun(threadKey: string, runId: string): Promise<ScheduleRecord | undefined> {
    // A thread has a few schedules: reading them all is one HKEYS and one MGET.
    return (await this.listByThread(threadKey)).find((r) => r.lastRun?.runId === runId);
  }

  async remove(id: string): Promise<boolean> {
    const k = this.keys;
    let stored = await this.redis.get(k.record(id));
    while (stored !== null) {
      const old = parse(stored);
      const place = placeOf(old);
      const reply = (await runScript(
        this.redis,
        REMOVE,
        [k.record(id), k.all, k.thread(old.target.threadKey), k.user(scheduleUser(old))],
        [id, place],
      )) as ScriptReply[];
      const removed = Number(reply[0]);
      if (removed !== -1) return removed === 1;
      stored = movedTo(reply[1], place, id);
    }
    return false;
  }

  /** Nothing to release: the connection is the caller's. */
  async close(): Promise<void> {}

  /** The records of `ids` that still exist (one may go between the index read and this), oldest first. */
  private async read(ids: string[]): Promise<ScheduleRecord[]> {
    if (ids.length === 0) return [];
    // One slot for every key, so MGET works on a cluster too.
    const raws = await this.redis.mget(ids.map((id) => this.keys.record(id)));
    return raws
      .filter((raw): raw is string => raw !== null)
      .map(parse)
      .sort(compareSchedules);
  }
}

function parse(raw: string): ScheduleRecord {
  return JSON.parse(raw) as ScheduleRecord;
}

/**
 * The record a put or remove step found moved (the JSON it gave back, or null when gone), to try
 * again with. A step misses only when another put or remove of the id landed since the read, so
 * every miss is another caller's progress and the retries end. A "moved" record still at the place
 * sent is no move but TypeScript and schedule-place.lua reading a record differently: thrown, since
 * trying again would loop forever.
 */
function movedTo(reply: ScriptReply | undefined, sent: string, id: string): string | null {
  const stored = typeof reply === "string" ? reply : null;
  if ((stored === null ? "" : placeOf(parse(stored))) === sent)
    throw new Error(
      `The schedule ${id} is indexed at ${JSON.stringify(sent)} by TypeScript but elsewhere by schedule-place.lua; ` +
        "the two must read a record alike (fix the one that changed).",
    );
  return stored;
}
