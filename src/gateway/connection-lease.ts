/**
 * Connections that must be unique across gateway processes (Telegram long polling, each Discord
 * shard), held through a Redis lease: `SET NX PX` to take it, a compare-and-renew while holding it,
 * a compare-and-delete to give it up. A holder that dies stops renewing, the key expires after
 * `ttlMs`, and a standby process takes over within `ttlMs + retryMs`.
 *
 * A holder counts its lease as lost ⅔ of the TTL after the last renewal that succeeded (measured
 * from when that renewal was sent, which is no later than when Redis extended the key), whatever
 * its renewal calls are doing (a call that hangs on an unreachable Redis cannot delay it). The key
 * lives at least the whole TTL after that send, so the old holder has given up at least ⅓ TTL
 * before a standby can take the lease: two processes never both believe they hold it.
 *
 * The new holder may be handed events the old one handled but had not confirmed to the platform;
 * the runtime's event claim (queue/event-claims.ts) handles each event id once.
 */
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../adapters/render/clock.js";
import type { ConnectionLease } from "../adapters/types.js";
import { type StructuredLogger, silentLogger } from "../agent/logger.js";
import type { RedisClient } from "../queue/redis/client.js";

/**
 * KEYS[1] lease key
 * ARGV[1] holder id
 * ARGV[2] ttl in ms
 * Returns 1 when renewed, 0 when the lease is no longer the caller's (expired or taken over).
 */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/**
 * KEYS[1] lease key
 * ARGV[1] holder id
 * Returns 1 when deleted, 0 when it was not the caller's (nothing changed).
 */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

export interface RedisConnectionLeaseOptions {
  redis: RedisClient;
  /** What is leased, unique per bot and connection: `telegram:polling:<bot id>`, `discord:<app>:shard:0`. */
  name: string;
  /** Key prefix (default `sb:`). */
  prefix?: string;
  /**
   * Lease time-to-live (default 5000 ms); renewed every fifth of it, and counted as lost ⅔ of it
   * after the last successful renewal.
   */
  ttlMs?: number;
  /** How often a standby process tries to take the lease (default ttlMs / 5). */
  retryMs?: number;
  /** Identifies this holder in Redis (default random). */
  holderId?: string;
  clock?: Clock;
  logger?: StructuredLogger;
}

export class RedisConnectionLease implements ConnectionLease {
  readonly name: string;
  readonly key: string;
  readonly holderId: string;
  private readonly ttlMs: number;
  private readonly retryMs: number;
  private readonly clock: Clock;
  private readonly log: StructuredLogger;

  constructor(private readonly o: RedisConnectionLeaseOptions) {
    this.name = o.name;
    this.key = `${o.prefix ?? "sb:"}{connection:${o.name}}:lease`;
    this.holderId = o.holderId ?? randomUUID();
    this.ttlMs = o.ttlMs ?? 5000;
    this.retryMs = o.retryMs ?? Math.max(50, Math.floor(this.ttlMs / 5));
    this.clock = o.clock ?? systemClock;
    this.log = o.logger ?? silentLogger;
  }

  /** Take the lease if free (`SET NX PX`), or renew it if it is already ours. */
  async tryAcquire(): Promise<boolean> {
    const set = await this.o.redis.set(this.key, this.holderId, "PX", this.ttlMs, "NX");
    return set === "OK" || (await this.renew());
  }

  async renew(): Promise<boolean> {
    return (await this.o.redis.eval(RENEW, 1, this.key, this.holderId, this.ttlMs)) === 1;
  }

  async release(): Promise<void> {
    await this.o.redis.eval(RELEASE, 1, this.key, this.holderId);
  }

  async hold(
    session: (lost: AbortSignal) => Promise<void>,
    opts: { signal: AbortSignal; onState?: (state: "standby" | "held") => void },
  ): Promise<void> {
    const { signal } = opts;
    let announcedStandby = false;
    while (!signal.aborted) {
      let got = false;
      const sentAt = this.clock.now();
      try {
        got = await this.tryAcquire();
      } catch (err) {
        this.log.warn({ lease: this.name, err }, "could not reach Redis for the connection lease");
      }
      if (!got) {
        if (!announcedStandby) opts.onState?.("standby");
        announcedStandby = true;
        if (!(await this.pause(this.retryMs, signal))) break;
        continue;
      }
      announcedStandby = false;
      opts.onState?.("held");
      this.log.info({ lease: this.name }, "connection lease taken");
      const lost = new AbortController();
      const onStop = () => lost.abort(signal.reason);
      signal.addEventListener("abort", onStop, { once: true });
      const renewing = this.keepRenewed(lost, sentAt);
      try {
        await session(lost.signal);
      } catch (err) {
        this.log.error({ lease: this.name, err }, "leased connection failed");
      }
      signal.removeEventListener("abort", onStop);
      lost.abort();
      const leaseLost = await renewing;
      if (!leaseLost) {
        try {
          await this.release();
        } catch (err) {
          this.log.warn({ lease: this.name, err }, "could not release the connection lease");
        }
      } else {
        this.log.warn({ lease: this.name }, "connection lease lost; another process took over");
      }
      if (!signal.aborted && !(await this.pause(this.retryMs, signal))) break;
    }
  }

  /**
   * Renews every fifth of the TTL until `lost` aborts. The lease counts as lost when a renewal is
   * refused, or ⅔ of the TTL after the last renewal that succeeded was sent (`acquiredAt` for the
   * first), checked by a watchdog of its own so that a renewal stuck on an unreachable Redis cannot
   * hold it up; then `lost` is aborted. Resolves true when the lease was lost, false when stopped
   * while held.
   */
  private async keepRenewed(lost: AbortController, acquiredAt: number): Promise<boolean> {
    const limit = Math.floor((this.ttlMs * 2) / 3);
    let lastOkSentAt = acquiredAt;
    let wasLost = false;
    const giveUp = (why: string) => {
      if (lost.signal.aborted) return;
      wasLost = true;
      this.log.warn({ lease: this.name, why }, "treating the connection lease as lost");
      lost.abort(new Error(`connection lease ${this.name} lost (${why})`));
    };
    const watchdog = (async () => {
      while (!lost.signal.aborted) {
        const left = lastOkSentAt + limit - this.clock.now();
        if (left <= 0) return giveUp(`no renewal succeeded for ${limit} ms`);
        if (!(await this.pause(left, lost.signal))) return;
      }
    })();
    while (!lost.signal.aborted) {
      if (!(await this.pause(Math.max(1, Math.floor(this.ttlMs / 5)), lost.signal))) break;
      const sentAt = this.clock.now();
      let ok: boolean | undefined;
      try {
        ok = await untilAborted(this.renew(), lost.signal);
      } catch (err) {
        this.log.warn({ lease: this.name, err }, "lease renewal failed");
      }
      if (lost.signal.aborted) break;
      if (ok === true) lastOkSentAt = Math.max(lastOkSentAt, sentAt);
      else if (ok === false) giveUp("another process holds it");
    }
    await watchdog;
    return wasLost;
  }

  /** Sleep; false when the signal aborted. */
  private async pause(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** `promise`'s value, or undefined as soon as `signal` aborts (the promise is left to settle alone). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      promise.catch(() => {});
      resolve(undefined);
      return;
    }
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) resolve(undefined);
        else reject(e);
      },
    );
  });
}
