/**
 * `SessionStore` on JSONL files, the embedded default (one process owns the data directory):
 *
 * - `${dataDir}/sessions/<encoded thread key>/<sessionId>.jsonl`: header line, then one entry per
 *   line, append-only, fsync on every append
 * - `${dataDir}/sessions/<encoded thread key>/meta.json`: session list, current session, usage
 *   totals, model, thinking level, leaf overrides; replaced atomically (temp file + rename)
 *
 * A session's leaf is its last entry unless `setLeaf` moved it (recorded in meta.json until the
 * next append), so a crash between an append and the meta write never loses the new leaf. Writes
 * to one thread run one at a time; loaded sessions stay indexed in memory (least recently used
 * dropped beyond `maxOpenSessions`), so reads after the first cost no file I/O.
 */
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { NO_SETTINGS, settingsOfCarriers } from "../../agent/session/context.js";
import { createSessionHeader } from "../../agent/session/entries.js";
import { consoleWarnLogger, serializeSession, type WarnLogger } from "../../agent/session/jsonl.js";
import type { SessionEntry, SessionHeader } from "../../agent/session/types.js";
import { EntryNotFoundError, InvalidEntryError, LeaseLostError, SessionNotFoundError } from "./errors.js";
import { KeyedQueue } from "./keyed-queue.js";
import { emptyMetaFile, type MetaFile, parseMetaFile, writeMetaFile } from "./meta-file.js";
import { appendDurably, createDurably, loadSessionFile, SessionIndex, syncDir } from "./session-file.js";
import {
  assertEntries,
  carriedOverSettings,
  isSafeSessionId,
  leafSettingsOf,
  newSessionStart,
  prepareImport,
  renameTakenIds,
  settingsOf,
  usageOf,
  walkBranch,
} from "./shared.js";
import { decodeThreadKey, encodeThreadKey } from "./thread-dir.js";
import type {
  AppendOptions,
  AppendResult,
  BranchRead,
  CreateSessionOptions,
  Fence,
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

export interface FileSessionStoreOptions {
  /** Sessions live under `${dataDir}/sessions`. */
  dataDir: string;
  /** Receives warnings about damaged lines and files. Default: console.warn. */
  logger?: WarnLogger;
  /**
   * Decides a fenced append or leaf move: false → `LeaseLostError`, nothing written. The embedded
   * runtime passes its in-memory lease table. Without it, fences are accepted.
   */
  fenceCheck?: (threadKey: string, fence: Fence) => boolean;
  /** Sessions kept indexed in memory. Default 64. */
  maxOpenSessions?: number;
  /** Clock for activity times, in ms. Default `Date.now`. */
  now?: () => number;
}

export class FileSessionStore implements SessionStore {
  private readonly root: string;
  private readonly logger: WarnLogger;
  private readonly fenceCheck: ((threadKey: string, fence: Fence) => boolean) | undefined;
  private readonly maxOpen: number;
  private readonly now: () => number;
  /** Writes (and cache-miss loads) of a thread, one at a time. */
  private readonly queue = new KeyedQueue();
  private readonly metas = new Map<string, MetaFile>();
  private readonly indexes = new Map<string, SessionIndex>();

  constructor(options: FileSessionStoreOptions) {
    this.root = join(options.dataDir, "sessions");
    this.logger = options.logger ?? consoleWarnLogger;
    this.fenceCheck = options.fenceCheck;
    this.maxOpen = options.maxOpenSessions ?? 64;
    this.now = options.now ?? Date.now;
  }

  // ---- paths --------------------------------------------------------------------------------

  private threadDir(threadKey: string): string {
    return join(this.root, encodeThreadKey(threadKey));
  }

  private sessionPath(threadKey: string, sessionId: string): string {
    if (!isSafeSessionId(sessionId)) throw new SessionNotFoundError(threadKey, sessionId);
    return join(this.threadDir(threadKey), `${sessionId}.jsonl`);
  }

  // ---- meta ---------------------------------------------------------------------------------

  private async loadMeta(threadKey: string): Promise<MetaFile | undefined> {
    const cached = this.metas.get(threadKey);
    if (cached) return cached;
    const path = join(this.threadDir(threadKey), "meta.json");
    let meta: MetaFile | undefined;
    try {
      meta = parseMetaFile(threadKey, JSON.parse(await readFile(path, "utf8")));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
        this.logger.warn({ path, err }, "Thread meta file is unreadable; rebuilding it from the sessions");
        meta = await this.rebuildMeta(threadKey);
      } else if (await this.hasSessionFiles(threadKey)) {
        meta = await this.rebuildMeta(threadKey);
      }
    }
    if (meta) this.metas.set(threadKey, meta);
    return meta;
  }

  private async hasSessionFiles(threadKey: string): Promise<boolean> {
    try {
      return (await readdir(this.threadDir(threadKey))).some((f) => f.endsWith(".jsonl"));
    } catch {
      return false;
    }
  }

  /** A meta file from the session files alone (oldest header first; usage totals start at zero). */
  private async rebuildMeta(threadKey: string): Promise<MetaFile> {
    const names = (await readdir(this.threadDir(threadKey))).filter((f) => f.endsWith(".jsonl"));
    const sessions: { id: string; time: number }[] = [];
    for (const name of names) {
      const id = name.slice(0, -".jsonl".length);
      if (!isSafeSessionId(id)) continue;
      const index = await this.loadIndex(threadKey, id);
      if (index) sessions.push({ id, time: Date.parse(index.header.timestamp) || 0 });
    }
    sessions.sort((a, b) => a.time - b.time);
    const meta: MetaFile = { ...emptyMetaFile(threadKey, this.now()), sessions: sessions.map((s) => s.id) };
    const current = sessions[sessions.length - 1];
    if (current) meta.currentSessionId = current.id;
    return meta;
  }

  private async writeMeta(meta: MetaFile): Promise<void> {
    await writeMetaFile(this.threadDir(meta.threadKey), meta);
    this.metas.set(meta.threadKey, meta);
  }

  private emptyMeta(threadKey: string): MetaFile {
    return emptyMetaFile(threadKey, this.now());
  }

  // ---- session indexes ----------------------------------------------------------------------

  private cacheKey(threadKey: string, sessionId: string): string {
    return `${threadKey}\u0000${sessionId}`;
  }

  /** The session's index, from memory or loaded from its file. Call inside the thread's queue. */
  /** Inside the thread's queue: the thread's metadata and the index of its session `sessionId`, or `SessionNotFoundError`. */
  private async loadSession(
    threadKey: string,
    sessionId: string,
  ): Promise<{ meta: MetaFile; index: SessionIndex }> {
    const meta = await this.loadMeta(threadKey);
    const index = meta?.sessions.includes(sessionId) ? await this.loadIndex(threadKey, sessionId) : undefined;
    if (!meta || !index) throw new SessionNotFoundError(threadKey, sessionId);
    return { meta, index };
  }

  private async loadIndex(threadKey: string, sessionId: string): Promise<SessionIndex | undefined> {
    const key = this.cacheKey(threadKey, sessionId);
    const cached = this.indexes.get(key);
    if (cached) {
      this.indexes.delete(key);
      this.indexes.set(key, cached);
      return cached;
    }
    const index = await loadSessionFile(
      this.sessionPath(threadKey, sessionId),
      threadKey,
      sessionId,
      this.logger,
    );
    if (index) this.remember(key, index);
    return index;
  }

  private remember(key: string, index: SessionIndex): void {
    this.indexes.set(key, index);
    while (this.indexes.size > this.maxOpen) {
      const oldest = this.indexes.keys().next().value;
      if (oldest === undefined) break;
      this.indexes.delete(oldest);
    }
  }

  /** Like `loadIndex`, for callers outside the queue: a cache miss loads inside it, never beside a write. */
  private async index(threadKey: string, sessionId: string): Promise<SessionIndex> {
    const cached = this.indexes.get(this.cacheKey(threadKey, sessionId));
    const index = cached ?? (await this.queue.run(threadKey, () => this.loadIndex(threadKey, sessionId)));
    if (!index) throw new SessionNotFoundError(threadKey, sessionId);
    return index;
  }

  private leafOf(meta: MetaFile | undefined, sessionId: string, index: SessionIndex): string | null {
    const overrides = meta?.leafOverrides ?? {};
    return sessionId in overrides ? (overrides[sessionId] ?? null) : index.lastId;
  }

  // ---- SessionStore -------------------------------------------------------------------------

  async createSession(threadKey: string, options: CreateSessionOptions = {}): Promise<SessionHeader> {
    return (await this.startSession(threadKey, options)).header;
  }

  async startSession(threadKey: string, options: CreateSessionOptions = {}): Promise<BranchRead> {
    const { header, entries } = newSessionStart(threadKey, options);
    await this.queue.run(threadKey, () => {
      this.checkFence(threadKey, options.fence);
      return this.writeNewSession(threadKey, header, entries);
    });
    return { header, entries: [...entries], leafId: entries.at(-1)?.id ?? null, inherited: NO_SETTINGS };
  }

  async newSession(threadKey: string, options: NewSessionOptions = {}): Promise<SessionHeader> {
    const meta = await this.queue.run(threadKey, () => this.loadMeta(threadKey));
    return this.createSession(threadKey, carriedOverSettings(meta, options));
  }

  /** Inside the thread's queue: writes a new session file and makes it current. */
  private async writeNewSession(
    threadKey: string,
    header: SessionHeader,
    entries: SessionEntry[],
  ): Promise<void> {
    const dir = this.threadDir(threadKey);
    await mkdir(dir, { recursive: true });
    const meta = (await this.loadMeta(threadKey)) ?? this.emptyMeta(threadKey);
    await createDurably(this.sessionPath(threadKey, header.id), serializeSession(header, entries));
    await syncDir(dir);
    this.remember(this.cacheKey(threadKey, header.id), new SessionIndex(header, [...entries], false));
    const settings = leafSettingsOf(entries);
    const next: MetaFile = {
      ...meta,
      sessions: [...meta.sessions, header.id],
      currentSessionId: header.id,
      updatedAt: this.now(),
    };
    if (settings.model) next.model = settings.model;
    if (settings.thinkingLevel) next.thinkingLevel = settings.thinkingLevel;
    await this.writeMeta(next);
  }

  private checkFence(threadKey: string, fence: Fence | undefined): void {
    if (fence && this.fenceCheck && !this.fenceCheck(threadKey, fence))
      throw new LeaseLostError(threadKey, fence.key);
  }

  async append(
    threadKey: string,
    sessionId: string,
    entries: SessionEntry[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    assertEntries(entries);
    if (entries.length === 0) throw new InvalidEntryError("append() needs at least one entry.");
    return this.queue.run(threadKey, async () => {
      this.checkFence(threadKey, options.fence);
      const { meta, index } = await this.loadSession(threadKey, sessionId);
      const batch = renameTakenIds(entries, (id) => index.byId.has(id));
      const inBatch = new Set<string>();
      for (const e of batch) {
        if (e.parentId !== null && !index.byId.has(e.parentId) && !inBatch.has(e.parentId))
          throw new EntryNotFoundError(threadKey, sessionId, e.parentId);
        inBatch.add(e.id);
      }
      const text = (index.needsNewline ? "\n" : "") + batch.map((e) => `${JSON.stringify(e)}\n`).join("");
      await appendDurably(this.sessionPath(threadKey, sessionId), text);
      index.needsNewline = false;
      index.add(batch);

      const usage = usageOf(batch);
      const settings = settingsOf(batch);
      const next: MetaFile = {
        ...meta,
        usage: {
          input: meta.usage.input + usage.input,
          output: meta.usage.output + usage.output,
          cacheRead: meta.usage.cacheRead + usage.cacheRead,
          cacheWrite: meta.usage.cacheWrite + usage.cacheWrite,
          cost: meta.usage.cost + usage.cost,
        },
        updatedAt: this.now(),
      };
      if (sessionId in meta.leafOverrides) {
        const { [sessionId]: _dropped, ...rest } = meta.leafOverrides;
        next.leafOverrides = rest;
      }
      if (meta.currentSessionId === sessionId) {
        if (settings.model) next.model = settings.model;
        if (settings.thinkingLevel) next.thinkingLevel = settings.thinkingLevel;
      }
      await this.writeMeta(next);
      return { entries: batch, leafId: index.lastId as string };
    });
  }

  async readBranch(threadKey: string, sessionId?: string, leafId?: string): Promise<BranchRead | undefined> {
    const meta = await this.queue.run(threadKey, () => this.loadMeta(threadKey));
    const sid = sessionId ?? meta?.currentSessionId;
    if (!sid) return undefined;
    if (!meta?.sessions.includes(sid)) throw new SessionNotFoundError(threadKey, sid);
    const index = await this.index(threadKey, sid);
    let leaf = leafId ?? this.leafOf(meta, sid, index);
    if (leaf !== null && !index.byId.has(leaf)) {
      if (leafId !== undefined) throw new EntryNotFoundError(threadKey, sid, leaf);
      // The stored leaf's line was lost to damage: continue from the last readable entry.
      this.logger.warn(
        { threadKey, sessionId: sid, leafId: leaf },
        "Stored leaf entry is unreadable; using the last entry",
      );
      leaf = index.lastId;
    }
    const entries = leaf === null ? [] : walkBranch((id) => index.byId.get(id), leaf);
    const before = entries[0]?.parentId ?? null;
    const inherited = settingsOfCarriers(index.carriersAt(before), (id) => index.byId.get(id));
    return { header: index.header, entries, leafId: leaf, inherited };
  }

  async readAll(threadKey: string, sessionId: string): Promise<SessionRead> {
    const meta = await this.queue.run(threadKey, () => this.loadMeta(threadKey));
    if (!meta?.sessions.includes(sessionId)) throw new SessionNotFoundError(threadKey, sessionId);
    const index = await this.index(threadKey, sessionId);
    return { header: index.header, entries: [...index.entries], leafId: this.leafOf(meta, sessionId, index) };
  }

  async setLeaf(
    threadKey: string,
    sessionId: string,
    entryId: string | null,
    options: AppendOptions = {},
  ): Promise<void> {
    await this.queue.run(threadKey, async () => {
      this.checkFence(threadKey, options.fence);
      const { meta, index } = await this.loadSession(threadKey, sessionId);
      if (entryId !== null && !index.byId.has(entryId))
        throw new EntryNotFoundError(threadKey, sessionId, entryId);
      await this.writeMeta({
        ...meta,
        leafOverrides: { ...meta.leafOverrides, [sessionId]: entryId },
        updatedAt: this.now(),
      });
    });
  }

  async listThreads(options: { limit?: number } = {}): Promise<ThreadSummary[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return [];
    }
    const out: ThreadSummary[] = [];
    for (const name of names) {
      const threadKey = decodeThreadKey(name);
      if (threadKey === undefined) continue;
      const meta = await this.queue.run(threadKey, () => this.loadMeta(threadKey));
      if (meta) out.push({ threadKey, lastActivityAt: meta.updatedAt });
    }
    out.sort((a, b) => b.lastActivityAt - a.lastActivityAt || a.threadKey.localeCompare(b.threadKey));
    return options.limit === undefined ? out : out.slice(0, Math.max(0, options.limit));
  }

  async listSessions(threadKey: string): Promise<SessionSummary[]> {
    const meta = await this.queue.run(threadKey, () => this.loadMeta(threadKey));
    if (!meta) return [];
    const out: SessionSummary[] = [];
    for (const id of meta.sessions) {
      const index = await this.queue.run(threadKey, () => this.loadIndex(threadKey, id));
      if (!index) {
        this.logger.warn({ threadKey, sessionId: id }, "A listed session file is missing; skipping it");
        continue;
      }
      out.push({
        header: index.header,
        entryCount: index.entries.length,
        leafId: this.leafOf(meta, id, index),
      });
    }
    return out;
  }

  async exportJsonl(threadKey: string, sessionId: string): Promise<string> {
    const { header, entries } = await this.readAll(threadKey, sessionId);
    return serializeSession(header, entries);
  }

  async importJsonl(text: string, threadKey?: string): Promise<ImportResult> {
    const prepared = prepareImport(text, threadKey, this.logger);
    return this.queue.run(prepared.threadKey, async () => {
      const meta = await this.loadMeta(prepared.threadKey);
      let header = prepared.header;
      if (meta?.sessions.includes(header.id) || (await this.loadIndex(prepared.threadKey, header.id))) {
        header = { ...header, id: createSessionHeader(prepared.threadKey).id };
      }
      await this.writeNewSession(prepared.threadKey, header, prepared.entries);
      return { threadKey: prepared.threadKey, sessionId: header.id, entryCount: prepared.entries.length };
    });
  }

  async getThreadMeta(threadKey: string): Promise<ThreadMeta | undefined> {
    const meta = await this.queue.run(threadKey, () => this.loadMeta(threadKey));
    if (!meta) return undefined;
    const out: ThreadMeta = { threadKey, leafId: null, usage: { ...meta.usage }, updatedAt: meta.updatedAt };
    if (meta.currentSessionId) {
      out.currentSessionId = meta.currentSessionId;
      const index = await this.queue.run(threadKey, () =>
        this.loadIndex(threadKey, meta.currentSessionId as string),
      );
      if (index) out.leafId = this.leafOf(meta, meta.currentSessionId, index);
    }
    if (meta.model) out.model = meta.model;
    if (meta.thinkingLevel) out.thinkingLevel = meta.thinkingLevel;
    return out;
  }

  async updateThreadMeta(threadKey: string, patch: ThreadMetaPatch): Promise<void> {
    await this.queue.run(threadKey, async () => {
      await mkdir(this.threadDir(threadKey), { recursive: true });
      const meta = (await this.loadMeta(threadKey)) ?? this.emptyMeta(threadKey);
      const next: MetaFile = { ...meta, updatedAt: this.now() };
      for (const field of ["model", "thinkingLevel"] as const) {
        const value = patch[field];
        if (value === null) delete next[field];
        else if (value !== undefined) next[field] = value;
      }
      await this.writeMeta(next);
    });
  }

  async addUsage(threadKey: string, usage: Partial<UsageTotals>): Promise<void> {
    await this.queue.run(threadKey, async () => {
      await mkdir(this.threadDir(threadKey), { recursive: true });
      const meta = (await this.loadMeta(threadKey)) ?? this.emptyMeta(threadKey);
      const add = (field: keyof UsageTotals) => {
        const v = usage[field] ?? 0;
        return Number.isFinite(v) ? v : 0;
      };
      await this.writeMeta({
        ...meta,
        usage: {
          input: meta.usage.input + Math.round(add("input")),
          output: meta.usage.output + Math.round(add("output")),
          cacheRead: meta.usage.cacheRead + Math.round(add("cacheRead")),
          cacheWrite: meta.usage.cacheWrite + Math.round(add("cacheWrite")),
          cost: meta.usage.cost + add("cost"),
        },
        updatedAt: this.now(),
      });
    });
  }

  async close(): Promise<void> {
    this.indexes.clear();
    this.metas.clear();
  }
}
