/**
 * The Redis key layout of the runtime. Every key lives under a configurable prefix (default `sb:`)
 * so deployments can share one Redis; the keys of one thread share the hash tag `{<threadKey>}` so
 * that each Lua step touches a single slot and also works on Redis Cluster. docs/runtime.md lists
 * what each key holds.
 */

/** The default key prefix. */
const DEFAULT_PREFIX = "sb:";

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

/** Whether `text` holds a Redis Cluster hash tag: `{…}` with something between the braces. */
export function hasHashTag(text: string): boolean {
  const open = text.indexOf("{");
  if (open === -1) return false;
  const close = text.indexOf("}", open + 1);
  return close > open + 1;
}

/**
 * The runs queue's BullMQ prefix by default: the key prefix without its colon (`sb`) on one server;
 * on a cluster a hash tag of its own (`{sb-runs}`), since BullMQ's scripts touch every key of a
 * queue at once and a cluster runs a script only on keys of one hash slot.
 */
export function defaultQueuePrefix(prefix: string, cluster: boolean): string {
  const bare = prefix.endsWith(":") ? prefix.slice(0, -1) : prefix;
  return cluster ? `{${bare}-runs}` : bare;
}

/** Builds every key name of the runtime from one prefix. */
export class RuntimeKeys {
  /** BullMQ's own prefix for the runs queue (it adds `:<queue>:…`). */
  readonly bullPrefix: string;

  constructor(
    readonly prefix: string = DEFAULT_PREFIX,
    queue: { queuePrefix?: string | undefined; cluster?: boolean } = {},
  ) {
    this.bullPrefix = queue.queuePrefix ?? defaultQueuePrefix(prefix, queue.cluster ?? false);
  }

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

  /** Hash of a thread's render journal: run id → what the run still owes the chat (JSON). */
  renderJournal(threadKey: string): string {
    return `${this.prefix}{${threadKey}}:render`;
  }

  /** The claim (owner and expiry, then `done`) of one platform event id; see event-claim-scripts.ts. */
  dedupe(eventId: string): string {
    return `${this.prefix}dedupe:${eventId}`;
  }

  /** The seq an event id was appended as, in the thread's slot (the append is idempotent per event). */
  appended(threadKey: string, eventId: string): string {
    return `${this.prefix}{${threadKey}}:appended:${eventId}`;
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
}
