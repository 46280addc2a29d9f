/**
 * Pending approvals in Redis, so that a reaction or `/approve` received by any gateway process
 * reaches the worker waiting for it.
 *
 * Keys: `ApprovalKeys` (src/redis-keys.ts); the keys of one thread share its hash tag, so the
 * settling step touches one slot and works on Redis Cluster. ♾️ grants are kept 30 days after the
 * last one of the thread.
 *
 * Decisions are durable state first: a waiter subscribes, then reads the record, so a decision made
 * before it subscribed (or while its connection was down) is seen too.
 */
import {
  type ApprovalRecord,
  type ApprovalRequest,
  type ApprovalStatus,
  type ApprovalStore,
  type DecideResult,
  type Decision,
  newApprovalId,
} from "../../extensions/approval/types.js";
import type { ThreadUser } from "../../extensions/types.js";
import { ApprovalKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";
import { runScript } from "../redis/run-script.js";
import { RedisSubscriber } from "../redis/subscriber.js";
import { DECIDE } from "./scripts.js";

export interface RedisApprovalStoreOptions {
  /** Key prefix. Default `DEFAULT_KEY_PREFIX`. */
  prefix?: string;
  /** How long settled requests stay readable after their expiry. Default one day. */
  retentionMs?: number;
  /** How long ♾️ grants are kept after the last one of the thread. Default 30 days. */
  grantTtlMs?: number;
}

const DAY = 24 * 60 * 60 * 1000;

type Waiter = { check: () => void };

export class RedisApprovalStore implements ApprovalStore {
  private readonly keys: ApprovalKeys;
  private readonly retentionMs: number;
  private readonly grantTtlMs: number;
  private subscriber: RedisSubscriber | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private closed = false;

  /** `redis` is used for commands and is not closed by `close()`; a subscriber is duplicated from it. */
  constructor(
    private readonly redis: RedisClient,
    options: RedisApprovalStoreOptions = {},
  ) {
    this.keys = new ApprovalKeys(options.prefix);
    this.retentionMs = options.retentionMs ?? DAY;
    this.grantTtlMs = options.grantTtlMs ?? 30 * DAY;
  }

  async create(request: ApprovalRequest): Promise<ApprovalRecord> {
    const ttl = Math.max(1, request.expiresAt - request.createdAt) + this.retentionMs;
    let id = "";
    for (let attempt = 0; ; attempt++) {
      id = newApprovalId();
      if ((await this.redis.set(this.keys.threadOf(id), request.threadKey, "PX", ttl, "NX")) === "OK") break;
      if (attempt >= 10)
        throw new Error("Could not find a free approval id after 10 attempts; is Redis full of stale ids?");
    }
    const key = this.keys.request(request.threadKey, id);
    await this.redis
      .multi()
      .hset(key, {
        request: JSON.stringify(request),
        status: "pending",
        expiresAt: String(request.expiresAt),
        fingerprint: request.fingerprint,
      })
      .pexpire(key, ttl)
      .sadd(this.keys.pending(request.threadKey), id)
      .pexpire(this.keys.pending(request.threadKey), ttl)
      .exec();
    return { ...structuredClone(request), id, status: "pending" };
  }

  async attachMessage(id: string, messageRef: string): Promise<void> {
    const threadKey = await this.redis.get(this.keys.threadOf(id));
    if (!threadKey) throw new Error(`Unknown approval "${id}": create it before attaching its message.`);
    const key = this.keys.request(threadKey, id);
    const ttl = await this.redis.pttl(key);
    // Two commands, not a MULTI: the message key is outside the thread's hash slot (Redis Cluster).
    await this.redis.hset(key, "messageRef", messageRef);
    await this.redis.set(this.keys.byMessage(messageRef), id, "PX", ttl > 0 ? ttl : this.retentionMs);
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const threadKey = await this.redis.get(this.keys.threadOf(id));
    if (!threadKey) return undefined;
    return this.read(threadKey, id);
  }

  async findByMessage(messageRef: string): Promise<ApprovalRecord | undefined> {
    const id = await this.redis.get(this.keys.byMessage(messageRef));
    return id ? this.get(id) : undefined;
  }

  async decide(id: string, decision: Decision): Promise<DecideResult> {
    const threadKey = await this.redis.get(this.keys.threadOf(id));
    if (!threadKey) return { applied: false, record: undefined };
    const reply = (await this.runDecide(
      [this.keys.request(threadKey, id), this.keys.pending(threadKey), this.keys.grants(threadKey)],
      [
        id,
        decision.outcome,
        decision.by ? JSON.stringify(decision.by) : "",
        String(decision.at),
        this.keys.channel,
        String(this.grantTtlMs),
      ],
    )) as [number, string?];
    const code = reply[0];
    if (code === 0) return { applied: false, record: undefined };
    return { applied: code === 1, record: await this.read(threadKey, id) };
  }

  waitForDecision(id: string, signal?: AbortSignal): Promise<ApprovalRecord> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason ?? new Error("aborted"));
        return;
      }
      let settled = false;
      const set = this.waiters.get(id) ?? new Set<Waiter>();
      this.waiters.set(id, set);
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        set.delete(waiter);
        if (set.size === 0) this.waiters.delete(id);
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      const read = async (first: boolean) => {
        try {
          const record = await this.get(id);
          if (!record) finish(() => reject(new Error(`Unknown approval "${id}".`)));
          else if (record.status !== "pending") finish(() => resolve(record));
        } catch (e) {
          // A failed re-read is retried by the next notice; a failed first read fails the wait.
          if (first) finish(() => reject(e));
        }
      };
      const waiter: Waiter = { check: () => void read(false) };
      const onAbort = () => finish(() => reject(signal?.reason ?? new Error("aborted")));
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(waiter);
      this.ensureSubscribed().then(
        () => read(true),
        (e: unknown) => finish(() => reject(e)),
      );
    });
  }

  async pendingIn(threadKey: string): Promise<ApprovalRecord[]> {
    const ids = await this.redis.smembers(this.keys.pending(threadKey));
    const records = await Promise.all(ids.map((id) => this.read(threadKey, id)));
    return records
      .filter((r): r is ApprovalRecord => r !== undefined && r.status === "pending")
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  async isRemembered(threadKey: string, fingerprint: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.grants(threadKey), fingerprint)) === 1;
  }

  /** Stops the subscriber; waiting calls reject. The command connection stays open (the caller owns it). */
  async close(): Promise<void> {
    this.closed = true;
    const sub = this.subscriber;
    this.subscriber = undefined;
    this.waiters.clear();
    await sub?.close();
  }

  private async read(threadKey: string, id: string): Promise<ApprovalRecord | undefined> {
    const h = await this.redis.hgetall(this.keys.request(threadKey, id));
    if (!h.request) return undefined;
    const record: ApprovalRecord = {
      ...(JSON.parse(h.request) as ApprovalRequest),
      id,
      status: (h.status ?? "pending") as ApprovalStatus,
    };
    if (h.messageRef) record.messageRef = h.messageRef;
    if (h.decidedBy) record.decidedBy = JSON.parse(h.decidedBy) as ThreadUser;
    if (h.decidedAt) record.decidedAt = Number(h.decidedAt);
    return record;
  }

  /** Runs DECIDE (by its SHA1; the runner sends the text when the server does not know it). */
  private async runDecide(keys: string[], args: string[]): Promise<unknown> {
    return runScript(this.redis, DECIDE, keys, args);
  }

  private ensureSubscribed(): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error("The approval store is closed."));
    // Back from a drop (or, on a cluster, on another node): decisions published meanwhile were
    // missed, so every waiter re-reads its record. Errors: the subscriber reconnects by itself.
    this.subscriber ??= new RedisSubscriber(this.redis, [this.keys.channel], {
      message: (channel, id) => {
        if (channel !== this.keys.channel) return;
        for (const w of [...(this.waiters.get(id) ?? [])]) w.check();
      },
      resubscribed: () => {
        for (const set of this.waiters.values()) for (const w of [...set]) w.check();
      },
    });
    return this.subscriber.ready;
  }
}
