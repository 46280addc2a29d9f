/**
 * Making headers and entries: ids, timestamps and parent links.
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  CURRENT_SESSION_VERSION,
  type SessionEntry,
  type SessionEntryInput,
  type SessionHeader,
} from "./types.js";

/** Something that knows which ids are taken (a Set, a Map, a store's index). */
export interface IdSet {
  has(id: string): boolean;
}

const EMPTY: IdSet = { has: () => false };

/**
 * A new entry id: 8 hex characters, like pi's, and not in `taken`. After 100 collisions (a
 * session would need billions of entries) it falls back to a full UUID, which is still valid.
 */
export function newEntryId(taken: IdSet = EMPTY): string {
  for (let i = 0; i < 100; i++) {
    const id = randomBytes(4).toString("hex");
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/** A new session id (a UUID, as pi uses). */
export function newSessionId(): string {
  return randomUUID();
}

/** Entry ids must be non-empty, at most 128 characters, without whitespace (stores use them as keys). */
export function isValidEntryId(id: unknown): id is string {
  return typeof id === "string" && id.length > 0 && id.length <= 128 && !/\s/.test(id);
}

export interface CreateHeaderOptions {
  id?: string;
  parentSession?: string;
  timestamp?: Date;
}

/** The header of a new session for `threadKey` (stored in both `cwd` and `threadKey`). */
export function createSessionHeader(threadKey: string, options: CreateHeaderOptions = {}): SessionHeader {
  const header: SessionHeader = {
    type: "session",
    version: CURRENT_SESSION_VERSION,
    id: options.id ?? newSessionId(),
    timestamp: (options.timestamp ?? new Date()).toISOString(),
    cwd: threadKey,
    threadKey,
  };
  if (options.parentSession !== undefined) header.parentSession = options.parentSession;
  return header;
}

/** The thread key a header belongs to: `threadKey`, else pi's `cwd`. */
export function headerThreadKey(header: SessionHeader): string {
  return header.threadKey ?? header.cwd;
}

/**
 * Builds a chain of entries from a leaf: each `add` gives the entry a fresh id, links it to the
 * previous leaf and becomes the new leaf. Use it to prepare the entries of one `append`.
 *
 * ```ts
 * const chain = new EntryChain(branch.leafId);
 * chain.add({ type: "message", message: userMessage });
 * chain.add({ type: "message", message: assistantMessage });
 * await store.append(threadKey, sessionId, chain.entries);
 * ```
 */
export class EntryChain {
  readonly entries: SessionEntry[] = [];
  private readonly ids = new Set<string>();

  constructor(
    private leaf: string | null,
    private readonly taken: IdSet = EMPTY,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Id of the last entry added, or the starting leaf. */
  get leafId(): string | null {
    return this.leaf;
  }

  add<T extends SessionEntryInput>(input: T): T & { id: string; parentId: string | null; timestamp: string } {
    const id = newEntryId({ has: (x) => this.ids.has(x) || this.taken.has(x) });
    const entry = { ...input, id, parentId: this.leaf, timestamp: this.now().toISOString() };
    this.ids.add(id);
    this.entries.push(entry as unknown as SessionEntry);
    this.leaf = id;
    return entry;
  }
}
