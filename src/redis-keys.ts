/**
 * Every Redis key name Switchboard writes, and the one default prefix they live under. Nothing else
 * in src/ spells a key or the prefix (test/docs/key-registry.test.ts checks it): a new key gets a
 * builder here, beside the others of its owner. Every key lives under a configurable prefix
 * (default {@link DEFAULT_KEY_PREFIX}) so deployments can share one Redis; the keys of one thread
 * share the hash tag `{<threadKey>}` so that each Lua step touches a single slot and also works on
 * Redis Cluster. Names must stay byte for byte as they are: data already in Redis is found by them.
 * docs/runtime.md lists what the runtime's keys hold. It sits at the top of src/ so that every layer
 * (adapters included) may import it; it imports nothing.
 */

/** The default key prefix of every Redis key and queue (`runtime.keyPrefix` in the config). */
export const DEFAULT_KEY_PREFIX = "sb:";

/** `<prefix>{<tag>}:<name>`: a key in the hash slot of `tag` (a thread key, `connection:<name>`, …). */
function tagged(prefix: string, tag: string, name: string): string {
  return `${prefix}{${tag}}:${name}`;
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

/** The keys of one thread in the runtime. */
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

/** Builds every key name of the runtime (queue/redis) from one prefix. */
export class RuntimeKeys {
  /** BullMQ's own prefix for the runs queue (it adds `:<queue>:…`). */
  readonly bullPrefix: string;

  constructor(
    readonly prefix: string = DEFAULT_KEY_PREFIX,
    queue: { queuePrefix?: string | undefined; cluster?: boolean } = {},
  ) {
    this.bullPrefix = queue.queuePrefix ?? defaultQueuePrefix(prefix, queue.cluster ?? false);
  }

  thread(threadKey: string): ThreadKeys {
    return {
      inbox: tagged(this.prefix, threadKey, "inbox"),
      inflight: tagged(this.prefix, threadKey, "inflight"),
      lease: this.lease(threadKey),
      wake: tagged(this.prefix, threadKey, "wake"),
      seq: tagged(this.prefix, threadKey, "seq"),
      control: tagged(this.prefix, threadKey, "control"),
    };
  }

  /** The lease key alone (what H4's store reads for fencing). */
  lease(threadKey: string): string {
    return threadLease(this.prefix, threadKey);
  }

  /** Hash of a thread's render journal: run id → what the run still owes the chat (JSON). */
  renderJournal(threadKey: string): string {
    return tagged(this.prefix, threadKey, "render");
  }

  /** The claim (owner and expiry, then `done`) of one platform event id; see event-claim-scripts.ts. */
  dedupe(eventId: string): string {
    return `${this.prefix}dedupe:${eventId}`;
  }

  /** The seq an event id was appended as, in the thread's slot (the append is idempotent per event). */
  appended(threadKey: string, eventId: string): string {
    return tagged(this.prefix, threadKey, `appended:${eventId}`);
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

/** String: the holder's token of a thread's lease; the runtime writes it, the session store reads it. */
function threadLease(prefix: string, threadKey: string): string {
  return tagged(prefix, threadKey, "lease");
}

/** Keys of the session store (queue/store/redis-store.ts), all in the thread's hash slot but one. */
export class SessionKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** Hash: currentSessionId, leafId, model, thinkingLevel, input, output, cacheRead, cacheWrite, cost, updatedAt. */
  meta(threadKey: string): string {
    return tagged(this.prefix, threadKey, "meta");
  }

  /** List: element 0 is the header, then one JSON entry per element (RPUSH only). */
  session(threadKey: string, sessionId: string): string {
    return tagged(this.prefix, threadKey, `s:${sessionId}`);
  }

  /** Hash: entryId → `<list index>\t<parentId>\t<firstKeptEntryId>`. */
  index(threadKey: string, sessionId: string): string {
    return tagged(this.prefix, threadKey, `s:${sessionId}:idx`);
  }

  /** Hash: sessionId → leaf entry id ("" before the first entry). */
  leaves(threadKey: string): string {
    return tagged(this.prefix, threadKey, "leaves");
  }

  /** List: the thread's session ids in creation order. */
  sessions(threadKey: string): string {
    return tagged(this.prefix, threadKey, "sessions");
  }

  /** String: the lease holder's token (written by the queue runtime; the store only reads it). */
  lease(threadKey: string): string {
    return threadLease(this.prefix, threadKey);
  }

  /** Sorted set: thread keys scored by last activity (ms). */
  threads(): string {
    return `${this.prefix}threads`;
  }
}

/**
 * Keys of the web chat on Redis (queue/store/web-*): a conversation's keys carry its thread key's
 * hash tag (`web:<id>`, passed in as `threadKey`); the rest are single-key commands.
 */
export class WebChatKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** Hash: the conversation (`id`, `title`, `kind`, `createdAt`, `updatedAt`, `titled`, `seq`). */
  chat(threadKey: string): string {
    return tagged(this.prefix, threadKey, "chat");
  }

  /** Hash: message id → the message as JSON. */
  messages(threadKey: string): string {
    return tagged(this.prefix, threadKey, "chat:msgs");
  }

  /** List: message ids, oldest first. */
  order(threadKey: string): string {
    return tagged(this.prefix, threadKey, "chat:order");
  }

  /** Hash: client request id → `{messageId, delivered}`. */
  clients(threadKey: string): string {
    return tagged(this.prefix, threadKey, "chat:clients");
  }

  /** String: one uploaded file's bytes. */
  file(threadKey: string, fileId: string): string {
    return tagged(this.prefix, threadKey, `file:${fileId}`);
  }

  /** Sorted set: conversation ids scored by `updatedAt`. */
  get conversations(): string {
    return `${this.prefix}web:conversations`;
  }

  /** Sorted set: conversation ids scored by the time the typing indicator ends. */
  get typing(): string {
    return `${this.prefix}web:typing`;
  }

  /** Pub/sub channel: every change as a `WebChatEvent` JSON. */
  get events(): string {
    return `${this.prefix}web:events`;
  }

  /** The name of the change feed's subscriber connection. */
  get feed(): string {
    return `${this.prefix}web-feed`;
  }

  /** String + PX: a one-time sign-in token's digest. */
  signIn(digest: string): string {
    return `${this.prefix}web:signin:${digest}`;
  }

  /** String + PX: a browser session's digest. */
  session(digest: string): string {
    return `${this.prefix}web:session:${digest}`;
  }
}

/** Keys of the approval store (queue/approvals/redis-store.ts). */
export class ApprovalKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** Pub/sub channel: ids of settled requests. */
  get channel(): string {
    return `${this.prefix}approvals`;
  }

  /** Hash: one request (JSON), status, decision, message ref. */
  request(threadKey: string, id: string): string {
    return tagged(this.prefix, threadKey, `approval:${id}`);
  }

  /** Set: ids of the thread's pending requests. */
  pending(threadKey: string): string {
    return tagged(this.prefix, threadKey, "approvals");
  }

  /** Set: fingerprints of calls approved with "approved_always". */
  grants(threadKey: string): string {
    return tagged(this.prefix, threadKey, "approval-grants");
  }

  /** String: the thread key of request `id`. */
  threadOf(id: string): string {
    return `${this.prefix}approval-id:${id}`;
  }

  /** String: the id of the request posted as that message. */
  byMessage(messageRef: string): string {
    return `${this.prefix}approval-msg:${messageRef}`;
  }
}

/** The one hash tag of every schedule key. */
const SCHEDULES = "schedules";

/**
 * Keys of the schedule store (queue/schedules/redis-store.ts). They all share the hash tag
 * `{schedules}`, not a thread's: creating a schedule counts its person's schedules over every
 * thread in the same step, so every key a schedule step touches must sit in one slot.
 */
export class ScheduleKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** String: one schedule's record (JSON). */
  record(id: string): string {
    return tagged(this.prefix, SCHEDULES, `rec:${id}`);
  }

  /** Hash: the ids of one thread's schedules → their origin (`chat` or `config`). */
  thread(threadKey: string): string {
    return tagged(this.prefix, SCHEDULES, `thread:${threadKey}`);
  }

  /** Set: the ids of one person's chat schedules; `user` is `<platform>:<owner id>`. */
  user(user: string): string {
    return tagged(this.prefix, SCHEDULES, `user:${user}`);
  }

  /** Set: every schedule's id. */
  get all(): string {
    return tagged(this.prefix, SCHEDULES, "all");
  }
}

/** The one hash tag of every budget key. */
const BUDGETS = "budgets";

/**
 * Keys of the budget ledger (queue/budgets/redis-ledger.ts). They all share the hash tag
 * `{budgets}`: one reservation checks and counts against every cap of a call (user, channel,
 * thread, deployment) in one step, so every key a budget step touches must sit in one slot.
 * Counters are fields of a few hashes rather than keys of their own, so each script takes a fixed
 * set of keys (src/queue/lua/budget-sweep.lua lists them in order).
 */
export class BudgetKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** Hash: `usd:<period id>` and `tokens:<period id>` → spent (whole micro-dollars, tokens). */
  get spent(): string {
    return tagged(this.prefix, BUDGETS, "spent");
  }

  /** Hash: the same fields as `spent` → the sums of the live reservations. */
  get reserved(): string {
    return tagged(this.prefix, BUDGETS, "reserved");
  }

  /** Hash: call id → its reservation (amount and period ids, JSON). */
  get reservations(): string {
    return tagged(this.prefix, BUDGETS, "res");
  }

  /** Sorted set: call ids of the reservations scored by their expiry (ms). */
  get expiries(): string {
    return tagged(this.prefix, BUDGETS, "res-expiry");
  }

  /** Sorted set: settled call ids scored by when they may be forgotten (ms). */
  get settled(): string {
    return tagged(this.prefix, BUDGETS, "settled");
  }

  /** Sorted set: period ids scored by when their spent counters and stored limits may go (ms). */
  get periods(): string {
    return tagged(this.prefix, BUDGETS, "periods");
  }

  /**
   * Hash: `usd:<period id>` and `tokens:<period id>` → the limit `setLimit` stored for that cap
   * period (whole micro-dollars, tokens); dropped with the period's spent counters.
   */
  get limits(): string {
    return tagged(this.prefix, BUDGETS, "limits");
  }

  /** Sorted set: ids held by `claimOnce`, scored by until when they are held (ms). */
  get claims(): string {
    return tagged(this.prefix, BUDGETS, "claims");
  }

  /** Hash: one day's usage rows (`usd:<row>`, `tokens:<row>`, `calls:<row>`); `day` is `YYYY-MM-DD`. */
  usage(day: string): string {
    return tagged(this.prefix, BUDGETS, `usage:${day}`);
  }
}

/** String: a channel's rate budget (its theoretical arrival time, ms). */
export function rateLimitKey(prefix: string, channel: string): string {
  return `${prefix}ratelimit:${channel}`;
}

/** String: the lease of one platform connection (`name` like `telegram:polling:<bot id>`). */
export function connectionLeaseKey(prefix: string, name: string): string {
  return tagged(prefix, `connection:${name}`, "lease");
}

/** String (NX PX): the access notice already given in a thread. */
export function accessNoticeKey(prefix: string, threadKey: string): string {
  return tagged(prefix, threadKey, "access-notice");
}

/** String: an MCP server's shared tool list; `what` is a digest of what it runs or reaches. */
export function mcpToolListKey(prefix: string, server: string, what: string): string {
  return `${prefix}mcp:tools:v1:${server}:${what}`;
}

/** String: a Discord thread's fact `name` (through the adapters' KeyValueStore). */
export function discordThreadKey(prefix: string, threadKey: string, name: string): string {
  return tagged(prefix, threadKey, name);
}

/** String: what the Discord adapter remembers of one message. */
export function discordMessageKey(prefix: string, channel: string, message: string): string {
  return `${prefix}discord:msg:${channel}:${message}`;
}

/** String: what the Telegram adapter remembers of one message. */
export function telegramMessageKey(prefix: string, chatId: number, messageId: number): string {
  return `${prefix}telegram:msg:${chatId}:${messageId}`;
}

/** String: the ts from which on the bot takes part in a Slack thread. */
export function slackBotThreadKey(prefix: string, threadKey: string): string {
  return tagged(prefix, threadKey, "slack-bot-thread");
}
