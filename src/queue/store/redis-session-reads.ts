/**
 * Reading a thread's sessions from Redis (layout in redis-store.ts): a session's branch to its leaf,
 * a whole session, the thread's sessions and the `threads` index. `RedisSessionStore` answers its
 * reads here; what it writes (appends, new sessions, leaf moves, imports) stays in the store.
 */
import { NO_SETTINGS, pathToLeaf, resolveSettings } from "../../agent/session/context.js";
import { createSessionHeader } from "../../agent/session/entries.js";
import {
  isSessionEntry,
  isSessionHeader,
  repairEntries,
  type WarnLogger,
} from "../../agent/session/jsonl.js";
import type { SessionEntry, SessionHeader, SessionSettings } from "../../agent/session/types.js";
import type { SessionKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";
import { EntryNotFoundError, SessionNotFoundError } from "./errors.js";
import { replyStr, runList, scripts } from "./lua.js";
import type { BranchRead, SessionRead, SessionSummary, ThreadSummary } from "./types.js";

/** What the reads use of the store: its connection, key layout, logger and read counter. */
export interface SessionReadContext {
  readonly redis: RedisClient;
  readonly keys: SessionKeys;
  readonly logger: WarnLogger;
  /** Counts list elements read from Redis (the store's `stats`). */
  readonly stats: { elementsFetched: number };
}

/** The branch from the session's start (or last compaction) to `leafId`, default its leaf. */
export async function readBranch(
  ctx: SessionReadContext,
  threadKey: string,
  sessionId?: string,
  leafId?: string,
): Promise<BranchRead | undefined> {
  const sid = sessionId ?? (await ctx.redis.hget(ctx.keys.meta(threadKey), "currentSessionId"));
  if (!sid) return undefined;
  const k = ctx.keys;
  const reply = await runList(
    ctx.redis,
    scripts.readBranch,
    [k.session(threadKey, sid), k.index(threadKey, sid), k.leaves(threadKey)],
    [sid, leafId ?? ""],
  );
  const code = Number(reply[0]);
  if (code === -2) throw new SessionNotFoundError(threadKey, sid);
  if (code === -5) throw new EntryNotFoundError(threadKey, sid, replyStr(reply[1]));
  ctx.stats.elementsFetched += Number(reply[2]);
  const header = parseHeader(ctx, replyStr(reply[3]), threadKey, sid);
  const entries = parseEntries(ctx, reply.slice(6).map(replyStr), threadKey, sid);
  const leaf = replyStr(reply[1]);
  const carried = [replyStr(reply[4]), replyStr(reply[5])];
  const inherited = carried.includes("?")
    ? await inheritedFromAll(ctx, threadKey, sid, entries[0])
    : resolveSettings(
        parseEntries(
          ctx,
          carried.filter((l) => l !== ""),
          threadKey,
          sid,
        ),
      );
  return { header, entries, leafId: leaf === "" ? null : leaf, inherited };
}

/**
 * The settings set before `first` on its path, from the whole session: for sessions whose index
 * predates the settings carriers (written by an older version), so their reads stay correct.
 */
async function inheritedFromAll(
  ctx: SessionReadContext,
  threadKey: string,
  sessionId: string,
  first: SessionEntry | undefined,
): Promise<SessionSettings> {
  if (!first?.parentId) return NO_SETTINGS;
  const all = await readAll(ctx, threadKey, sessionId);
  return resolveSettings(pathToLeaf(all.entries, first.parentId));
}

/** Every entry of the session (repaired), its header and leaf. */
export async function readAll(
  ctx: SessionReadContext,
  threadKey: string,
  sessionId: string,
): Promise<SessionRead> {
  const k = ctx.keys;
  const [lines, leaf] = await Promise.all([
    ctx.redis.lrange(k.session(threadKey, sessionId), 0, -1),
    ctx.redis.hget(k.leaves(threadKey), sessionId),
  ]);
  const [first, ...rest] = lines;
  if (first === undefined) throw new SessionNotFoundError(threadKey, sessionId);
  ctx.stats.elementsFetched += lines.length;
  const source = `${threadKey}/${sessionId}`;
  const entries = repairEntries(parseEntries(ctx, rest, threadKey, sessionId), ctx.logger, source);
  return { header: parseHeader(ctx, first, threadKey, sessionId), entries, leafId: leaf ? leaf : null };
}

/** Threads by last activity, newest first. */
export async function listThreads(
  ctx: SessionReadContext,
  options: { limit?: number } = {},
): Promise<ThreadSummary[]> {
  const stop = options.limit === undefined ? -1 : Math.max(0, options.limit) - 1;
  if (stop < -1 || options.limit === 0) return [];
  const flat = await ctx.redis.zrevrange(ctx.keys.threads(), 0, stop, "WITHSCORES");
  const out: ThreadSummary[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2)
    out.push({ threadKey: flat[i] as string, lastActivityAt: Number(flat[i + 1]) });
  return out;
}

/** The thread's sessions in creation order: header, entry count, leaf; one pipeline. */
export async function listSessions(ctx: SessionReadContext, threadKey: string): Promise<SessionSummary[]> {
  const k = ctx.keys;
  const ids = await ctx.redis.lrange(k.sessions(threadKey), 0, -1);
  if (ids.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const id of ids) {
    pipeline.lindex(k.session(threadKey, id), 0);
    pipeline.llen(k.session(threadKey, id));
  }
  pipeline.hgetall(k.leaves(threadKey));
  const results = (await pipeline.exec()) ?? [];
  const leaves = (results[results.length - 1]?.[1] ?? {}) as Record<string, string>;
  return ids.map((id, i) => {
    const headerLine = results[2 * i]?.[1];
    const length = Number(results[2 * i + 1]?.[1] ?? 0);
    const leaf = leaves[id];
    return {
      header: parseHeader(ctx, typeof headerLine === "string" ? headerLine : "", threadKey, id),
      entryCount: Math.max(0, length - 1),
      leafId: leaf ? leaf : null,
    };
  });
}

function parseHeader(
  ctx: SessionReadContext,
  line: string,
  threadKey: string,
  sessionId: string,
): SessionHeader {
  let parseError: unknown;
  try {
    const v: unknown = JSON.parse(line);
    if (isSessionHeader(v)) return v;
  } catch (err) {
    parseError = err;
  }
  ctx.logger.warn(
    { threadKey, sessionId, ...(parseError ? { err: parseError } : {}) },
    "Session header is unreadable; using a substitute",
  );
  return { ...createSessionHeader(threadKey, { id: sessionId }), timestamp: new Date(0).toISOString() };
}

function parseEntries(
  ctx: SessionReadContext,
  lines: readonly string[],
  threadKey: string,
  sessionId: string,
): SessionEntry[] {
  const out: SessionEntry[] = [];
  for (const line of lines) {
    let v: unknown;
    let parseError: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      parseError = err;
    }
    if (isSessionEntry(v)) out.push(v);
    else
      ctx.logger.warn(
        { threadKey, sessionId, preview: line.slice(0, 80), ...(parseError ? { err: parseError } : {}) },
        "Skipping an unreadable session entry in Redis",
      );
  }
  return out;
}
