/**
 * `ThreadState` and `EventClaimStore` on Redis: every step is one Lua script on the keys of one thread (see scripts.ts),
 * plus the `pending` sorted set that the sweeper uses as a safety net. Item times and the collect
 * window come from the given `Clock`; a lease expires on Redis's own clock (`PX`), one time source
 * for every process whatever their clocks say.
 */

import { type Clock, systemClock } from "../../agent/clock.js";
import { SwitchboardError } from "../../agent/errors.js";
import type { RuntimeKeys } from "../../redis-keys.js";
import { parseItem, parseItems } from "../inbox-item.js";
import { RedisLeaseStore } from "../lease/redis-store.js";
import type { LeaseAcquire } from "../lease/store.js";
import type {
  AppendOptions,
  AppendOutcome,
  ControlState,
  FinishOutcome,
  ReleaseOutcome,
  StopOutcome,
  TakeAhead,
  TakeOutcome,
  TakeRule,
  ThreadProbe,
  ThreadState,
  WakeAcquire,
} from "../state/types.js";
import type { InboxItem } from "../types.js";
import type { RedisClient } from "./client.js";
import { runScript, type ScriptReply } from "./run-script.js";
import { APPEND, FINISH, PROBE, RELEASE, SETTLE, STOP, TAKE, WAKE_ACQUIRE } from "./scripts.js";

export interface RedisThreadStateOptions {
  /** How long a delivered event id is remembered (and an appended one, per thread). Default 24 h. */
  dedupeTtlMs?: number;
  /** Default: the system clock. It also times event claims (each claim stores its expiry). */
  clock?: Clock;
  /**
   * Replicas that must confirm an inbox append (`WAIT`) before it counts as stored; fewer within
   * `waitTimeoutMs` fail the append, so the delivery is refused and the platform redelivers. Default
   * 0: an append is stored once its primary has it (asynchronous replication).
   */
  waitReplicas?: number;
  /** How long an append waits for `waitReplicas`. Default 500 ms. */
  waitTimeoutMs?: number;
}

/** An inbox append that fewer replicas than required confirmed in time (it may still be on the primary). */
class ReplicaWaitError extends SwitchboardError {
  constructor(threadKey: string, acked: number, wanted: number, ms: number) {
    super(
      "queue.replica_wait",
      `The inbox append of thread ${threadKey} was confirmed by ${acked} of ${wanted} replicas within ${ms} ms, ` +
        "so the delivery is refused and the platform redelivers. Check the replicas of the Redis primary " +
        "that holds the thread, or lower runtime.waitReplicas.",
    );
  }
}

function num(reply: ScriptReply | undefined): number {
  return typeof reply === "number" ? reply : Number(reply ?? 0);
}

function rest(reply: ScriptReply[], from: number): string[] {
  return reply.slice(from).filter((r): r is string => typeof r === "string");
}

/** The control state a script appended after its status: {status, abortAt, ver, stops, ...}. */
function controlOf(r: ScriptReply[]): ControlState {
  return { abortAt: num(r[1]), ver: num(r[2]), stops: num(r[3]) };
}

/** A take's reply with the control state after its status (TAKE, and FINISH's next take). */
function takeOutcome(r: ScriptReply[]): Exclude<TakeOutcome, { status: "lost" }> {
  return takeOf(r[0], r.slice(4), controlOf(r));
}

/** `take_items`'s status ({0, waitMs} or {1, items...}), its rest, and the control state it goes with. */
function takeOf(
  status: ScriptReply | undefined,
  after: ScriptReply[],
  control: ControlState,
): Exclude<TakeOutcome, { status: "lost" }> {
  if (num(status) === 0) return { status: "wait", waitMs: Math.max(1, num(after[0])), control };
  return { status: "taken", items: parseItems(rest(after, 0)), control };
}

/** The Redis implementation of the coordination primitives. Uses (does not own) `redis`. */
export class RedisThreadState implements ThreadState {
  private readonly dedupeTtlMs: number;
  private readonly clock: Clock;
  private readonly waitReplicas: number;
  private readonly waitTimeoutMs: number;
  /** The threads' leases (`sb:{T}:lease`), taken, renewed and force-released by their owner. */
  private readonly leases: RedisLeaseStore;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RuntimeKeys,
    options: RedisThreadStateOptions = {},
  ) {
    this.dedupeTtlMs = options.dedupeTtlMs ?? 24 * 3600_000;
    this.clock = options.clock ?? systemClock;
    this.waitReplicas = options.waitReplicas ?? 0;
    this.waitTimeoutMs = options.waitTimeoutMs ?? 500;
    this.leases = new RedisLeaseStore(redis);
  }

  async append(
    threadKey: string,
    item: Pick<InboxItem, "mode" | "kind" | "message" | "instructions">,
    options: AppendOptions,
  ): Promise<AppendOutcome> {
    const k = this.keys.thread(threadKey);
    const body = JSON.stringify({
      mode: item.mode,
      kind: item.kind,
      message: item.message,
      instructions: item.instructions,
    });
    // The pending entry goes first: a thread with a queued item is always in the sweeper's set,
    // whatever happens to this process next. (Awaited, not pipelined: on a cluster the two keys
    // live on different nodes.)
    const now = this.clock.now();
    await this.redis.zadd(this.keys.pending, now, threadKey);
    const eventId = item.kind === "message" ? (item.message?.eventId ?? "") : "";
    const reply = await runScript(
      this.redis,
      APPEND,
      [k.inbox, k.wake, k.seq, k.control, k.lease, this.keys.appended(threadKey, eventId)],
      [body, Math.max(1, options.cap), options.dropPolicy, item.mode, now, eventId, this.dedupeTtlMs],
    );
    const r = reply as ScriptReply[];
    if (num(r[0]) === 0) return { accepted: false, depth: num(r[1]), active: num(r[2]) === 1 };
    if (this.waitReplicas > 0) await this.replicated(threadKey, k.inbox);
    if (num(r[0]) === 2) {
      const active = num(r[3]) === 1;
      return {
        accepted: true,
        seq: num(r[1]),
        depth: num(r[2]),
        woke: false,
        active,
        wakeMarker: "",
        dropped: [],
        repeated: true,
      };
    }
    return {
      accepted: true,
      seq: num(r[1]),
      depth: num(r[2]),
      woke: num(r[3]) === 1,
      active: num(r[4]) === 1,
      wakeMarker: String(r[5]),
      dropped: parseItems(rest(r, 6)),
    };
  }

  /**
   * `WAIT` for the replicas on the connection that wrote `key` (a pipeline goes to the node of its
   * keys' slot, and WAIT counts that connection's writes); too few in time → `ReplicaWaitError`.
   */
  private async replicated(threadKey: string, key: string): Promise<void> {
    const replies = await this.redis
      .pipeline()
      .exists(key)
      .wait(this.waitReplicas, this.waitTimeoutMs)
      .exec();
    const [err, acked] = replies?.[1] ?? [new Error("WAIT got no reply"), 0];
    if (err) throw err;
    if (Number(acked) < this.waitReplicas)
      throw new ReplicaWaitError(threadKey, Number(acked), this.waitReplicas, this.waitTimeoutMs);
  }

  async stop(threadKey: string): Promise<StopOutcome> {
    const k = this.keys.thread(threadKey);
    const r = (await runScript(this.redis, STOP, [k.inbox, k.seq, k.control, k.lease], [])) as ScriptReply[];
    return { abortAt: num(r[0]), active: num(r[1]) === 1, discarded: parseItems(rest(r, 2)) };
  }

  async touchControl(threadKey: string): Promise<void> {
    await this.redis.hincrby(this.keys.thread(threadKey).control, "ver", 1);
  }

  async readControl(threadKey: string): Promise<ControlState> {
    const [abortAt, ver, stops] = await this.redis.hmget(
      this.keys.thread(threadKey).control,
      "abortAt",
      "ver",
      "stops",
    );
    return { abortAt: Number(abortAt ?? 0), ver: Number(ver ?? 0), stops: Number(stops ?? 0) };
  }

  async probe(threadKey: string): Promise<ThreadProbe> {
    const { inboxDepth, inflightDepth, active } = await probeThread(this.redis, this.keys, threadKey);
    return { inboxDepth, inflightDepth, active };
  }

  async clearWake(threadKey: string): Promise<void> {
    await this.redis.del(this.keys.thread(threadKey).wake);
  }

  async acquire(threadKey: string, token: string, ttlMs: number): Promise<LeaseAcquire> {
    return this.leases.acquire(this.keys.lease(threadKey), token, ttlMs);
  }

  async wakeAcquire(
    threadKey: string,
    token: string,
    ttlMs: number,
    ahead?: TakeAhead,
  ): Promise<WakeAcquire> {
    const k = this.keys.thread(threadKey);
    const r = (await runScript(
      this.redis,
      WAKE_ACQUIRE,
      [k.wake, k.lease, k.control, k.inflight, k.inbox, this.keys.renderJournal(threadKey)],
      [token, ttlMs, ahead ? "1" : "", ahead?.debounceMs ?? 0, this.clock.now(), ahead?.journal ? "1" : ""],
    )) as ScriptReply[];
    if (num(r[0]) !== 1) return { acquired: false, holder: String(r[1] ?? ""), pttl: num(r[2]) };
    const control = controlOf(r);
    if (r.length <= 4) return { acquired: true, control };
    const n = num(r[4]);
    const inflight = parseItems(rest(r.slice(0, 5 + n), 5));
    const take = r.slice(5 + n);
    if (take.length === 0) return { acquired: true, control, inflight };
    return { acquired: true, control, inflight, ahead: takeOf(take[0], take.slice(1), control) };
  }

  async renew(threadKey: string, token: string, ttlMs: number): Promise<boolean> {
    return this.leases.renew(this.keys.lease(threadKey), token, ttlMs);
  }

  async release(threadKey: string, token: string): Promise<ReleaseOutcome> {
    const k = this.keys.thread(threadKey);
    const r = num(await runScript(this.redis, RELEASE, [k.lease, k.inbox, k.inflight], [token]));
    return r === 1 ? "released" : r === 0 ? "busy" : "lost";
  }

  async forceRelease(threadKey: string, token: string): Promise<void> {
    await this.leases.release(this.keys.lease(threadKey), token);
  }

  async take(threadKey: string, token: string, rule: TakeRule, debounceMs: number): Promise<TakeOutcome> {
    const k = this.keys.thread(threadKey);
    const r = (await runScript(
      this.redis,
      TAKE,
      [k.inbox, k.inflight, k.lease, k.control],
      [token, rule, debounceMs, this.clock.now()],
    )) as ScriptReply[];
    const status = num(r[0]);
    if (status === -1) return { status: "lost" };
    return takeOutcome(r);
  }

  async inflight(threadKey: string): Promise<InboxItem[]> {
    const raw = await this.redis.lrange(this.keys.thread(threadKey).inflight, 0, -1);
    return raw.map(parseItem).filter((i): i is InboxItem => i !== undefined);
  }

  async settle(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    dropPersisted: boolean,
  ): Promise<boolean> {
    const k = this.keys.thread(threadKey);
    const r = num(
      await runScript(
        this.redis,
        SETTLE,
        [k.inflight, k.inbox, k.lease],
        [token, dropPersisted ? "1" : "0", ...persisted],
      ),
    );
    return r !== -1;
  }

  async finish(
    threadKey: string,
    token: string,
    persisted: readonly number[],
    debounceMs: number,
    contextTokens?: number,
  ): Promise<FinishOutcome> {
    const k = this.keys.thread(threadKey);
    const tokens = contextTokens === undefined ? "" : String(Math.round(contextTokens));
    const r = (await runScript(
      this.redis,
      FINISH,
      [k.inbox, k.inflight, k.lease, k.control],
      [token, debounceMs, this.clock.now(), tokens, ...persisted],
    )) as ScriptReply[];
    const status = num(r[0]);
    if (status === -1) return { status: "lost" };
    if (status === 2) return { status: "released" };
    if (status === 3) return { status: "kept", next: { status: "taken", items: [] } };
    return { status: "kept", next: takeOutcome(r) };
  }

  async setContextTokens(threadKey: string, tokens: number): Promise<void> {
    await this.redis.hset(this.keys.thread(threadKey).control, "contextTokens", String(Math.round(tokens)));
  }

  async contextTokens(threadKey: string): Promise<number | undefined> {
    const v = await this.redis.hget(this.keys.thread(threadKey).control, "contextTokens");
    const n = v === null ? Number.NaN : Number(v);
    return Number.isFinite(n) ? n : undefined;
  }

  async close(): Promise<void> {
    // The connection belongs to the caller.
  }
}

/**
 * One thread's queue depths, whether a lease is held and its wake flag ("" when unset), in one
 * atomic read (the `PROBE` script): `probe` and the waker's lost-wake sweep both read it.
 */
export async function probeThread(
  redis: RedisClient,
  keys: RuntimeKeys,
  threadKey: string,
): Promise<ThreadProbe & { wakeFlag: string }> {
  const k = keys.thread(threadKey);
  const r = (await runScript(redis, PROBE, [k.inbox, k.inflight, k.lease, k.wake], [])) as ScriptReply[];
  return {
    inboxDepth: num(r[0]),
    inflightDepth: num(r[1]),
    active: num(r[2]) === 1,
    wakeFlag: String(r[3] ?? ""),
  };
}
