/**
 * Redis keys of the session store. Every key of a thread carries the hash tag `{threadKey}`, so
 * one Lua script may touch them all (also on Redis Cluster).
 */
export class SessionKeys {
  constructor(readonly prefix: string = "sb:") {}

  private thread(threadKey: string, name: string): string {
    return `${this.prefix}{${threadKey}}:${name}`;
  }

  /** Hash: currentSessionId, leafId, model, thinkingLevel, input, output, cacheRead, cacheWrite, cost, updatedAt. */
  meta(threadKey: string): string {
    return this.thread(threadKey, "meta");
  }

  /** List: element 0 is the header, then one JSON entry per element (RPUSH only). */
  session(threadKey: string, sessionId: string): string {
    return this.thread(threadKey, `s:${sessionId}`);
  }

  /** Hash: entryId → `<list index>\t<parentId>\t<firstKeptEntryId>`. */
  index(threadKey: string, sessionId: string): string {
    return this.thread(threadKey, `s:${sessionId}:idx`);
  }

  /** Hash: sessionId → leaf entry id ("" before the first entry). */
  leaves(threadKey: string): string {
    return this.thread(threadKey, "leaves");
  }

  /** List: the thread's session ids in creation order. */
  sessions(threadKey: string): string {
    return this.thread(threadKey, "sessions");
  }

  /** String: the lease holder's token (written by the queue runtime; the store only reads it). */
  lease(threadKey: string): string {
    return this.thread(threadKey, "lease");
  }

  /** Sorted set: thread keys scored by last activity (ms). */
  threads(): string {
    return `${this.prefix}threads`;
  }
}
