/**
 * The Redis key layout of the runtime. Every key lives under a configurable prefix (default `sb:`)
 * so deployments can share one Redis; the keys of one thread share the hash tag `{<threadKey>}` so
 * that each Lua step touches a single slot and also works on Redis Cluster. docs/runtime.md lists
 * what each key holds.
 */

/** The default key prefix. */
export const DEFAULT_PREFIX = "sb:";

/** The keys of one thread. */
export interface ThreadKeys {
  /** List of queued inbox items (JSON), oldest first. */
  inbox: string;
  /** List of items taken by the holder for the run in progress and not yet settled. */
  inflight: string;
  /** String: the holder's token, with a PX expiry. H4's session store fences appends on it. */
  lease: string;
  /** String: set (NX) when a wake job is due; cleared by the job when it starts. */
  wake: string;
  /** Counter: the sequence number of the last item appended (never reset). */
  seq: string;
  /** Hash: durable control state (`abortAt`, `ver`) the holder re-reads at each checkpoint. */
  control: string;
}

/** Builds every key name of the runtime from one prefix. */
export class RuntimeKeys {
  constructor(readonly prefix: string = DEFAULT_PREFIX) {}

  thread(threadKey: string): ThreadKeys {
    const base = `${this.prefix}{${threadKey}}:`;
    return {
      inbox: `${base}inbox`,
      inflight: `${base}inflight`,
      lease: `${base}lease`,
      wake: `${base}wake`,
      seq: `${base}seq`,
      control: `${base}control`,
    };
  }

  /** The lease key alone (what H4's store reads for fencing). */
  lease(threadKey: string): string {
    return `${this.prefix}{${threadKey}}:lease`;
  }

  /** `SET NX EX` marker of one platform event id. */
  dedupe(eventId: string): string {
    return `${this.prefix}dedupe:${eventId}`;
  }

  /** Sorted set of threads that may have work (score: last delivery, ms); swept as a safety net. */
  get pending(): string {
    return `${this.prefix}pending`;
  }

  /** Short lock so that one process at a time sweeps `pending`. */
  get sweepLock(): string {
    return `${this.prefix}sweep-lock`;
  }

  /** Pub/sub channel carrying control notices for every thread (`{"thread": …}`). */
  get controlChannel(): string {
    return `${this.prefix}control`;
  }

  /** BullMQ's own prefix (it adds `:<queue>:…`), kept under ours without the trailing colon. */
  get bullPrefix(): string {
    return this.prefix.endsWith(":") ? this.prefix.slice(0, -1) : this.prefix;
  }
}
