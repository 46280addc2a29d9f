/**
 * `SessionStore` on Redis. Layout (keys: `SessionKeys` in src/redis-keys.ts, `{t}` = `{threadKey}`):
 *
 * - `{t}:meta` hash: currentSessionId, leafId, model, thinkingLevel, usage totals, updatedAt
 * - `{t}:s:<sessionId>` list: the header, then one JSON entry per element, RPUSH only
 * - `{t}:s:<sessionId>:idx` hash: entryId → list index, parent and kept-range start, so a branch
 *   is walked without reading entries and only the entries since the last compaction are fetched
 * - `{t}:leaves` hash: sessionId → leaf · `{t}:sessions` list: session ids in creation order
 * - `threads` sorted set: thread keys by last activity
 *
 * Appends and leaf moves run as Lua scripts, fenced on `{t}:lease` when the caller passes a fence.
 * This file writes sessions and entries; reading them (branches, whole sessions, the session and
 * thread lists) is redis-session-reads.ts's, and the thread's settings and usage (`{t}:meta`)
 * redis-thread-meta.ts's.
 */

import {
  NO_CARRIERS,
  NO_SETTINGS,
  nextCarriers,
  type SettingCarriers,
  settingKind,
} from "../../agent/session/context.js";
import { createSessionHeader } from "../../agent/session/entries.js";
import { consoleWarnLogger, serializeSession, type WarnLogger } from "../../agent/session/jsonl.js";
import type { SessionEntry, SessionHeader } from "../../agent/session/types.js";
import { SessionKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";
import { EntryNotFoundError, InvalidEntryError, LeaseLostError, SessionNotFoundError } from "./errors.js";
import { replyStr, runList, scripts } from "./lua.js";
import {
  listSessions,
  listThreads,
  readAll,
  readBranch,
  type SessionReadContext,
} from "./redis-session-reads.js";
import { addThreadUsage, patchThreadMeta, readThreadMeta } from "./redis-thread-meta.js";
import {
  assertEntries,
  carriedOverSettings,
  leafSettingsOf,
  newSessionStart,
  prepareImport,
  renameTakenIds,
  settingsOf,
  usageOf,
} from "./shared.js";
import type {
  AppendOptions,
  AppendResult,
  BranchRead,
  CreateSessionOptions,
  ImportResult,
  NewSessionOptions,
  SessionRead,
  SessionStore,
  SessionSummary,
  ThreadMeta,
  ThreadMetaPatch,
  ThreadSummary,
  UsageTotals,
} from "./types.js";

export interface RedisSessionStoreOptions {
  /** A connection the caller owns (the store never closes it). */
  redis: RedisClient;
  /** Key prefix, default `DEFAULT_KEY_PREFIX`. */
  prefix?: string;
  /** Receives warnings about unreadable stored lines. Default: console.warn. */
  logger?: WarnLogger;
  /** Clock for activity times, in ms. Default `Date.now`. */
  now?: () => number;
}

/** Entries per RPUSH/HSET command when importing, to keep single commands small. */
const IMPORT_CHUNK = 1000;

/**
 * How stale an append may leave a thread's score in the `threads` index (ms). A running thread
 * appends several entries a second (the user's message, each answer, tool results); one ZADD per
 * second of activity keeps the order by last activity to within this, at a fraction of the
 * commands. Creating a session and changing settings always write the score.
 */
export const ACTIVITY_RESOLUTION_MS = 1000;
/** Threads remembered for the above; past it the memory starts over (one extra ZADD each). */
const ACTIVITY_MEMORY = 10_000;

/**
 * The index values of entries written together with the session (a new or imported session):
 * `<list index>\t<parentId>\t<firstKeptEntryId>\t<thinking carrier>\t<model carrier>`, the
 * carriers computed as append.lua does. `first` is the list index of `entries[0]`.
 */
function indexValues(entries: readonly SessionEntry[], first: number): string[] {
  const carriers = new Map<string, SettingCarriers>();
  return entries.map((entry, i) => {
    const parent = entry.parentId === null ? NO_CARRIERS : (carriers.get(entry.parentId) ?? NO_CARRIERS);
    const c = nextCarriers(entry, parent);
    carriers.set(entry.id, c);
    const kept = entry.type === "compaction" ? entry.firstKeptEntryId : "";
    return `${first + i}\t${entry.parentId ?? ""}\t${kept}\t${c.thinking ?? ""}\t${c.model ?? ""}`;
  });
}

/** The kind append.lua needs to carry settings forward: "t", "m" or "". */
function kindOf(entry: SessionEntry): string {
  const kind = settingKind(entry);
  return kind === "thinking" ? "t" : kind === "model" ? "m" : "";
}

export class RedisSessionStore implements SessionStore {
  readonly keys: SessionKeys;
  /** Counts list elements read from Redis, so tests and benchmarks can see what a read costs. */
  readonly stats = { elementsFetched: 0 };
  private readonly redis: RedisClient;
  private readonly logger: WarnLogger;
  private readonly now: () => number;
  /** What redis-session-reads.ts reads with: this store's connection, keys, logger and stats. */
  private readonly reads: SessionReadContext;

  constructor(options: RedisSessionStoreOptions) {
    this.redis = options.redis;
    this.keys = new SessionKeys(options.prefix);
    this.logger = options.logger ?? consoleWarnLogger;
    this.now = options.now ?? Date.now;
    this.reads = { redis: this.redis, keys: this.keys, logger: this.logger, stats: this.stats };
  }

  /** When this store's appends last wrote each thread's score (see ACTIVITY_RESOLUTION_MS). */
  private readonly appendScoredAt = new Map<string, number>();

  /** The ZADD of an append, skipped while the score this store wrote is fresh enough. */
  private async touchAfterAppend(threadKey: string): Promise<void> {
    const now = this.now();
    const last = this.appendScoredAt.get(threadKey);
    if (last !== undefined && now - last >= 0 && now - last < ACTIVITY_RESOLUTION_MS) return;
    if (this.appendScoredAt.size >= ACTIVITY_MEMORY) this.appendScoredAt.clear();
    await this.redis.zadd(this.keys.threads(), now, threadKey);
    this.appendScoredAt.set(threadKey, now);
  }

  /** The keys the append and set-leaf scripts touch: the thread's, the session's, the fence's. */
  private sessionScriptKeys(threadKey: string, sessionId: string, options: AppendOptions): string[] {
    const k = this.keys;
    const keys = [
      k.meta(threadKey),
      k.session(threadKey, sessionId),
      k.index(threadKey, sessionId),
      k.leaves(threadKey),
    ];
    if (options.fence) keys.push(options.fence.key);
    return keys;
  }

  async createSession(threadKey: string, options: CreateSessionOptions = {}): Promise<SessionHeader> {
    return (await this.startSession(threadKey, options)).header;
  }

  async startSession(threadKey: string, options: CreateSessionOptions = {}): Promise<BranchRead> {
    const { header, entries } = newSessionStart(threadKey, options);
    const k = this.keys;
    const keys = [
      k.meta(threadKey),
      k.session(threadKey, header.id),
      k.index(threadKey, header.id),
      k.leaves(threadKey),
      k.sessions(threadKey),
    ];
    if (options.fence) keys.push(options.fence.key);
    const settings = leafSettingsOf(entries);
    const now = this.now();
    const args: (string | number)[] = [
      header.id,
      options.fence?.token ?? "",
      JSON.stringify(header),
      now,
      settings.model ?? "",
      settings.thinkingLevel ?? "",
      threadKey,
      entries.length,
    ];
    const values = indexValues(entries, 1);
    entries.forEach((e, i) => {
      args.push(JSON.stringify(e), `${e.id}\t${values[i]}`);
    });
    // The index beside the script, not after it (one round trip, not two): it is outside the
    // thread's hash slot (Redis Cluster) and only orders threads by activity, so a refused create
    // leaves at most a fresh score on a thread that exists anyway.
    const [reply] = await Promise.all([
      runList(this.redis, scripts.createSession, keys, args),
      this.redis.zadd(k.threads(), now, threadKey),
    ]);
    const code = Number(reply[0]);
    if (code === -1) throw new LeaseLostError(threadKey, options.fence?.key ?? "");
    // A taken id under this very header line (a fresh UUID and time) is this create, resent by
    // ioredis after the node that ran it died before replying: the script is atomic, so it is whole.
    if (code !== 1 && (await this.redis.lindex(k.session(threadKey, header.id), 0)) !== args[2])
      throw new InvalidEntryError(`Could not create session ${header.id} of ${threadKey}: the id is taken.`);
    return { header, entries, leafId: entries.at(-1)?.id ?? null, inherited: NO_SETTINGS };
  }

  async newSession(threadKey: string, options: NewSessionOptions = {}): Promise<SessionHeader> {
    const [model, thinkingLevel] = await this.redis.hmget(
      this.keys.meta(threadKey),
      "model",
      "thinkingLevel",
    );
    return this.createSession(threadKey, carriedOverSettings({ model, thinkingLevel }, options));
  }

  /** Writes a session that does not exist yet, with its entries, and makes it current: one MULTI. */
  private async writeNewSession(
    threadKey: string,
    header: SessionHeader,
    entries: SessionEntry[],
  ): Promise<void> {
    const k = this.keys;
    const listKey = k.session(threadKey, header.id);
    const idxKey = k.index(threadKey, header.id);
    const now = this.now();
    const leaf = entries[entries.length - 1]?.id ?? "";
    const settings = leafSettingsOf(entries);
    const values = indexValues(entries, 1);
    const multi = this.redis.multi();
    multi.rpush(listKey, JSON.stringify(header));
    for (let i = 0; i < entries.length; i += IMPORT_CHUNK) {
      const chunk = entries.slice(i, i + IMPORT_CHUNK);
      multi.rpush(listKey, ...chunk.map((e) => JSON.stringify(e)));
      const fields = chunk.flatMap((e, j) => [e.id, values[i + j] as string]);
      multi.hset(idxKey, ...fields);
    }
    multi.hset(k.leaves(threadKey), header.id, leaf);
    multi.hset(
      k.meta(threadKey),
      "threadKey",
      threadKey,
      "currentSessionId",
      header.id,
      "leafId",
      leaf,
      "updatedAt",
      String(now),
    );
    if (settings.model) multi.hset(k.meta(threadKey), "model", settings.model);
    if (settings.thinkingLevel) multi.hset(k.meta(threadKey), "thinkingLevel", settings.thinkingLevel);
    multi.rpush(k.sessions(threadKey), header.id);
    const results = await multi.exec();
    for (const [err] of results ?? []) if (err) throw err;
    // After the MULTI, not in it: the thread index is outside the thread's hash slot (Redis Cluster).
    await this.redis.zadd(k.threads(), now, threadKey);
  }

  async append(
    threadKey: string,
    sessionId: string,
    entries: SessionEntry[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    assertEntries(entries);
    if (entries.length === 0) throw new InvalidEntryError("append() needs at least one entry.");
    const keys = this.sessionScriptKeys(threadKey, sessionId, options);
    const usage = usageOf(entries);
    const settings = settingsOf(entries);
    let batch = renameTakenIds(entries, () => false);
    for (let attempt = 0; ; attempt++) {
      const args: (string | number)[] = [
        sessionId,
        options.fence?.token ?? "",
        usage.input,
        usage.output,
        usage.cacheRead,
        usage.cacheWrite,
        usage.cost.toFixed(12),
        settings.model ?? "",
        settings.thinkingLevel ?? "",
        this.now(),
        batch.length,
      ];
      for (const e of batch) {
        args.push(
          JSON.stringify(e),
          e.id,
          e.parentId ?? "",
          e.type === "compaction" ? e.firstKeptEntryId : "",
          kindOf(e),
        );
      }
      const reply = await runList(this.redis, scripts.append, keys, args);
      const code = Number(reply[0]);
      if (code === 1) {
        await this.touchAfterAppend(threadKey);
        return { entries: batch, leafId: replyStr(reply[1]) };
      }
      if (code === -1) throw new LeaseLostError(threadKey, options.fence?.key ?? "");
      if (code === -2) throw new SessionNotFoundError(threadKey, sessionId);
      if (code === -4) throw new EntryNotFoundError(threadKey, sessionId, replyStr(reply[2]));
      if (code === -3 && attempt < 5) {
        const ids = batch.map((e) => e.id);
        const found = await this.redis.hmget(this.keys.index(threadKey, sessionId), ...ids);
        // The script is atomic, so a batch is stored whole or not at all. When Redis dies after
        // running it but before replying, ioredis resends the command on reconnect: every id is
        // then taken by the very same line, and the append already happened.
        if (await this.alreadyStored(threadKey, sessionId, batch, found)) {
          await this.touchAfterAppend(threadKey);
          return { entries: batch, leafId: batch[batch.length - 1]?.id ?? "" };
        }
        // Otherwise an id collides with another entry: rename, try again (8 hex ids rarely collide).
        const taken = new Set(ids.filter((_, i) => found[i] !== null));
        batch = renameTakenIds(batch, (id) => taken.has(id));
        continue;
      }
      throw new InvalidEntryError(
        `Could not append to session ${sessionId}: entry id ${replyStr(reply[1])} stays taken.`,
      );
    }
  }

  /** True when every entry of `batch` is stored under its id with exactly the same JSON line. */
  private async alreadyStored(
    threadKey: string,
    sessionId: string,
    batch: SessionEntry[],
    indexValues: (string | null)[],
  ): Promise<boolean> {
    if (indexValues.some((v) => v === null)) return false;
    const list = this.keys.session(threadKey, sessionId);
    const lines = await Promise.all(
      indexValues.map((v) => this.redis.lindex(list, Number((v as string).split("\t")[0]))),
    );
    return batch.every((e, i) => lines[i] === JSON.stringify(e));
  }

  async readBranch(threadKey: string, sessionId?: string, leafId?: string): Promise<BranchRead | undefined> {
    return readBranch(this.reads, threadKey, sessionId, leafId);
  }

  async readAll(threadKey: string, sessionId: string): Promise<SessionRead> {
    return readAll(this.reads, threadKey, sessionId);
  }

  async setLeaf(
    threadKey: string,
    sessionId: string,
    entryId: string | null,
    options: AppendOptions = {},
  ): Promise<void> {
    const keys = this.sessionScriptKeys(threadKey, sessionId, options);
    const reply = await runList(this.redis, scripts.setLeaf, keys, [
      sessionId,
      entryId ?? "",
      options.fence?.token ?? "",
      this.now(),
    ]);
    const code = Number(reply[0]);
    if (code === -1) throw new LeaseLostError(threadKey, options.fence?.key ?? "");
    if (code === -2) throw new SessionNotFoundError(threadKey, sessionId);
    if (code === -5) throw new EntryNotFoundError(threadKey, sessionId, entryId ?? "");
  }

  async listThreads(options: { limit?: number } = {}): Promise<ThreadSummary[]> {
    return listThreads(this.reads, options);
  }

  async listSessions(threadKey: string): Promise<SessionSummary[]> {
    return listSessions(this.reads, threadKey);
  }

  async exportJsonl(threadKey: string, sessionId: string): Promise<string> {
    const { header, entries } = await this.readAll(threadKey, sessionId);
    return serializeSession(header, entries);
  }

  async importJsonl(text: string, threadKey?: string): Promise<ImportResult> {
    const prepared = prepareImport(text, threadKey, this.logger);
    let header = prepared.header;
    if ((await this.redis.exists(this.keys.session(prepared.threadKey, header.id))) === 1) {
      header = { ...header, id: createSessionHeader(prepared.threadKey).id };
    }
    await this.writeNewSession(prepared.threadKey, header, prepared.entries);
    return { threadKey: prepared.threadKey, sessionId: header.id, entryCount: prepared.entries.length };
  }

  async getThreadMeta(threadKey: string): Promise<ThreadMeta | undefined> {
    return readThreadMeta(this.redis, this.keys, threadKey);
  }

  async updateThreadMeta(threadKey: string, patch: ThreadMetaPatch): Promise<void> {
    await patchThreadMeta(this.redis, this.keys, threadKey, patch, this.now());
  }

  async addUsage(threadKey: string, usage: Partial<UsageTotals>): Promise<void> {
    await addThreadUsage(this.redis, this.keys, threadKey, usage, this.now());
  }

  async close(): Promise<void> {
    // The connection belongs to the caller.
  }
}
