/**
 * The `SessionStore` contract: where threads keep their sessions and metadata. Redis
 * (`RedisSessionStore`) and JSONL files (`FileSessionStore`) implement it; one contract test
 * suite runs against both.
 */
import type { SessionEntry, SessionHeader, SessionSettings } from "../../agent/session/types.js";

/**
 * Proof that the caller still holds the thread's lease: an append with a fence is written only
 * while the lease key holds `token`, and otherwise fails with `LeaseLostError` writing nothing.
 */
export interface Fence {
  /** The lease key, `${prefix}{${threadKey}}:lease` in Redis. */
  key: string;
  /** The holder's token stored in that key. */
  token: string;
}

/** Token and cost totals of a thread, summed over the assistant messages appended to any of its sessions. */
export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** US dollars. */
  cost: number;
}

export interface ThreadMeta {
  threadKey: string;
  /** The session new messages go to; undefined before the first session. */
  currentSessionId?: string;
  /** Leaf of the current session: the entry new entries attach to; null when it has no entries. */
  leafId: string | null;
  /** `provider/modelId`, kept in step with the current session's model changes. */
  model?: string;
  thinkingLevel?: string;
  usage: UsageTotals;
  /** Milliseconds since the epoch of the last write to the thread. */
  updatedAt: number;
}

/** Fields to set (a string) or remove (null). The store itself keeps the rest of the metadata. */
export interface ThreadMetaPatch {
  model?: string | null;
  thinkingLevel?: string | null;
}

export interface CreateSessionOptions {
  /** The session this one continues from (pi's `parentSession`). */
  parentSession?: string;
  /** `provider/modelId`; recorded as the session's first `model_change` entry. */
  model?: string;
  /** Recorded as a `thinking_level_change` entry. */
  thinkingLevel?: string;
  /** Write only while the caller holds the thread's lease; otherwise `LeaseLostError`, nothing written. */
  fence?: Fence;
}

export interface NewSessionOptions {
  /** Write only while the caller holds the thread's lease; otherwise `LeaseLostError`, nothing written. */
  fence?: Fence;
}

export interface AppendOptions {
  fence?: Fence;
}

export interface AppendResult {
  /**
   * The entries as stored. An id already taken in the session is replaced by a fresh one (and
   * `parentId`s in the same batch follow), so use these, not the input, from here on.
   */
  entries: SessionEntry[];
  /** The session's leaf after the append: the last entry's id. */
  leafId: string;
}

export interface BranchRead {
  header: SessionHeader;
  /**
   * Root→leaf entries of the branch, starting at the first entry the model still sees: the
   * latest compaction's `firstKeptEntryId`, or the root when the branch has no compaction.
   * `branchContext(read)` turns it into the model's context.
   */
  entries: SessionEntry[];
  leafId: string | null;
  /**
   * The model and thinking level set on the path before `entries[0]` (a thinking level change
   * made before the compaction's kept range still counts, as in pi). `NO_SETTINGS` when nothing
   * before it set them.
   */
  inherited: SessionSettings;
}

export interface SessionRead {
  header: SessionHeader;
  /** Every entry in append order. */
  entries: SessionEntry[];
  leafId: string | null;
}

export interface ThreadSummary {
  threadKey: string;
  /**
   * Milliseconds since the epoch. The Redis store may lag up to a second behind a thread's last
   * append (it writes the index once per second of activity, `ACTIVITY_RESOLUTION_MS`).
   */
  lastActivityAt: number;
}

export interface SessionSummary {
  header: SessionHeader;
  entryCount: number;
  leafId: string | null;
}

export interface ImportResult {
  threadKey: string;
  sessionId: string;
  entryCount: number;
}

/**
 * Storage of a thread's sessions (append-only JSONL trees) and metadata.
 *
 * All methods are async and safe to call concurrently. Nothing is rewritten in place: entries
 * are only appended, and branching or starting a new session only moves pointers. A thread's
 * sessions are listed in creation order; the newest created or imported one is current.
 *
 * Returned entries may be shared with the store's cache: treat them as read-only.
 *
 * Errors: `SessionNotFoundError` for an unknown thread/session, `EntryNotFoundError` for an
 * unknown entry id (a leaf or parent), `LeaseLostError` for a failed fence check,
 * `InvalidEntryError` for malformed input. Damaged stored lines are skipped with a warning.
 */
export interface SessionStore {
  /**
   * Starts a session and makes it current. Records `model`/`thinkingLevel` as its first entries.
   * With `fence`, it is written only while the lease holds the fence's token (`LeaseLostError`
   * otherwise, nothing written).
   */
  createSession(threadKey: string, options?: CreateSessionOptions): Promise<SessionHeader>;

  /**
   * `createSession`, returning the new session as `readBranch` would read it right after (its
   * header, the settings entries it starts with, their leaf; nothing inherited) without reading it
   * back: whoever created it knows what it holds. Same fence and errors as `createSession`.
   */
  startSession(threadKey: string, options?: CreateSessionOptions): Promise<BranchRead>;

  /**
   * Appends entries (each `parentId` must be null, an existing entry of the session, or an earlier
   * entry of the batch) and moves the session's leaf to the last one. Atomically with the write it
   * adds the usage of appended assistant messages to the thread's totals and, for the current
   * session, updates the thread's leaf, model and thinking level.
   */
  append(
    threadKey: string,
    sessionId: string,
    entries: SessionEntry[],
    options?: AppendOptions,
  ): Promise<AppendResult>;

  /**
   * The branch ending at `leafId` (default: the session's leaf) of `sessionId` (default: the
   * current session), from the latest compaction's kept range on; its cost is proportional to the
   * entries since the last compaction. Undefined when the thread has no session.
   */
  readBranch(threadKey: string, sessionId?: string, leafId?: string): Promise<BranchRead | undefined>;

  /** The whole session, every entry in append order. */
  readAll(threadKey: string, sessionId: string): Promise<SessionRead>;

  /** Moves the session's leaf (branching: the next append attaches there). `null` = before the first entry. */
  setLeaf(
    threadKey: string,
    sessionId: string,
    entryId: string | null,
    options?: AppendOptions,
  ): Promise<void>;

  /**
   * Starts a fresh current session with the thread's model and thinking level; older sessions stay.
   * Fenced like `createSession` when `options.fence` is given.
   */
  newSession(threadKey: string, options?: NewSessionOptions): Promise<SessionHeader>;

  /** Threads by last activity, newest first. */
  listThreads(options?: { limit?: number }): Promise<ThreadSummary[]>;

  /** The thread's sessions in creation order. */
  listSessions(threadKey: string): Promise<SessionSummary[]>;

  /** The session as a pi v3 JSONL file. */
  exportJsonl(threadKey: string, sessionId: string): Promise<string>;

  /**
   * Stores a JSONL session (pi v3, or this store's export) as a new current session of
   * `threadKey` (default: the file's thread key). Keeps the file's session id unless the thread
   * already has it. Damaged lines are skipped with a warning. Usage totals are not changed.
   */
  importJsonl(text: string, threadKey?: string): Promise<ImportResult>;

  /** The thread's metadata, or undefined for a thread never written. */
  getThreadMeta(threadKey: string): Promise<ThreadMeta | undefined>;

  /** Sets or removes `model` / `thinkingLevel`. */
  updateThreadMeta(threadKey: string, patch: ThreadMetaPatch): Promise<void>;

  /** Adds usage that has no assistant entry (e.g. the summary requests of a compaction). */
  addUsage(threadKey: string, usage: Partial<UsageTotals>): Promise<void>;

  /** Releases connections and file handles. */
  close(): Promise<void>;
}
