/**
 * Connections that must be unique across gateway processes (Telegram long polling, each Discord
 * shard), held through a Redis lease (`RedisLeaseStore`: `SET NX PX` to take it, compare-and-renew,
 * compare-and-delete). A holder that dies stops renewing, the key expires after `ttlMs`, and a
 * standby process takes over within `ttlMs + retryMs`.
 *
 * The lease is held through `holdLease` (queue/lease/hold.ts), the one rule for every lease: renewed
 * every fifth of the TTL, and counted lost when a renewal is refused or ⅔ of the TTL after the send
 * time of the last confirmed renewal, whatever its renewal calls are doing (a call that hangs on an
 * unreachable Redis cannot delay it). The key lives at least the whole TTL after that send, so the
 * old holder has given up at least ⅓ TTL before a standby can take the lease: two processes never
 * both believe they hold it.
 *
 * The new holder may be handed events the old one handled but had not confirmed to the platform;
 * the runtime's event claim (queue/event-claims.ts) handles each event id once.
 */
import { randomUUID } from "node:crypto";
import type { ConnectionLease } from "../adapters/types.js";
import { type Clock, systemClock } from "../agent/clock.js";
import { type StructuredLogger, silentLogger } from "../agent/logger.js";
import { holdLease, type LeaseLoss } from "../queue/lease/hold.js";
import { RedisLeaseStore } from "../queue/lease/redis-store.js";
import type { RedisClient } from "../queue/redis/client.js";
import { connectionLeaseKey, DEFAULT_KEY_PREFIX } from "../redis-keys.js";

export interface RedisConnectionLeaseOptions {
  redis: RedisClient;
  /** What is leased, unique per bot and connection: `telegram:polling:<bot id>`, `discord:<app>:shard:0`. */
  name: string;
  /** Key prefix (default `DEFAULT_KEY_PREFIX`). */
  prefix?: string;
  /**
   * Lease time-to-live (default 5000 ms); renewed every fifth of it, and counted as lost ⅔ of it
   * after the last confirmed renewal (`holdLease`'s rule).
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
  private readonly store: RedisLeaseStore;

  constructor(o: RedisConnectionLeaseOptions) {
    this.name = o.name;
    this.key = connectionLeaseKey(o.prefix ?? DEFAULT_KEY_PREFIX, o.name);
    this.holderId = o.holderId ?? randomUUID();
    this.ttlMs = o.ttlMs ?? 5000;
    this.retryMs = o.retryMs ?? Math.max(50, Math.floor(this.ttlMs / 5));
    this.clock = o.clock ?? systemClock;
    this.log = o.logger ?? silentLogger;
    this.store = new RedisLeaseStore(o.redis);
  }

  /** Take the lease if free, or renew it if it is already ours. */
  async tryAcquire(): Promise<boolean> {
    return (await this.store.acquire(this.key, this.holderId, this.ttlMs)).acquired;
  }

  /** Extends the lease; false when it is no longer ours. */
  async renew(): Promise<boolean> {
    return this.store.renew(this.key, this.holderId, this.ttlMs);
  }

  async release(): Promise<void> {
    await this.store.release(this.key, this.holderId);
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
      if (signal.aborted) {
        // Stopped while the acquire was on the wire: give the lease back without starting a session.
        await this.release().catch((err: unknown) =>
          this.log.warn({ lease: this.name, err }, "could not release the connection lease"),
        );
        break;
      }
      announcedStandby = false;
      opts.onState?.("held");
      this.log.info({ lease: this.name }, "connection lease taken");
      // Aborted when the lease is lost or the caller stops: the session ends either way.
      const lost = new AbortController();
      const onStop = () => lost.abort(signal.reason);
      signal.addEventListener("abort", onStop, { once: true });
      const holding = holdLease({
        clock: this.clock,
        ttlMs: this.ttlMs,
        acquiredAt: sentAt,
        signal: lost.signal,
        renew: () => this.renew(),
        onLost: (loss) => this.giveUp(lost, loss),
        onError: (err) => this.log.warn({ lease: this.name, err }, "lease renewal failed"),
      });
      try {
        await session(lost.signal);
      } catch (err) {
        this.log.error({ lease: this.name, err }, "leased connection failed");
      }
      signal.removeEventListener("abort", onStop);
      lost.abort();
      if ((await holding) === "stopped") {
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

  /** The lease is lost: the session is told through `lost`. */
  private giveUp(lost: AbortController, loss: LeaseLoss): void {
    const why =
      loss.reason === "refused"
        ? "another process holds it"
        : `no renewal was confirmed since ${loss.lastConfirmedAt} (clock ms)`;
    this.log.warn({ lease: this.name, why }, "treating the connection lease as lost");
    lost.abort(new Error(`connection lease ${this.name} lost (${why})`));
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
