/**
 * The store side of a lease: a named key that one owner holds until its TTL runs out, taken only
 * when free, renewed and released only by its owner. `RedisLeaseStore` (redis-store.ts) keeps it
 * in Redis (`SET NX PX`, compare-and-renew, compare-and-delete; the TTL runs on Redis's clock);
 * `MemoryLeaseStore` keeps it in one process on a `Clock`. Holding a taken lease (renewals, when it
 * counts as lost) is `holdLease`'s job (hold.ts).
 *
 * The thread lease's steps that also read the inbox (take, settle, release when idle) are combined
 * with it in the thread state's own scripts; they only read the same key.
 */
import type { Clock } from "../../agent/clock.js";

/** What an acquire found: taken (or already the caller's, now renewed), or someone else's. */
export type LeaseAcquire = { acquired: true } | { acquired: false; holder: string; pttl: number };

/** Leases by name. Every method is atomic on its own. */
export interface LeaseStore {
  /**
   * Takes `name` for `owner` for `ttlMs` if nobody holds it; one `owner` already holds is renewed
   * (acquired). Otherwise returns the holder and the time left on its lease.
   */
  acquire(name: string, owner: string, ttlMs: number): Promise<LeaseAcquire>;
  /** Extends `owner`'s lease to `ttlMs` from now; false when `owner` no longer holds it. */
  renew(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Deletes `owner`'s lease; false (nothing changed) when `owner` does not hold it. */
  release(name: string, owner: string): Promise<boolean>;
}

/**
 * Leases in one process, expiring on `clock`. Besides the `LeaseStore` methods it answers
 * synchronously (`holder`, `drop`), so a caller can combine a lease check with its own state in one
 * step without an await between them (the embedded runtime's thread state does).
 */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, { owner: string; expiresAt: number }>();

  constructor(private readonly clock: Clock) {}

  /** The owner holding `name` now, if any. */
  holder(name: string): string | undefined {
    const lease = this.leases.get(name);
    if (lease && lease.expiresAt <= this.clock.now()) this.leases.delete(name);
    return this.leases.get(name)?.owner;
  }

  /** `release`, synchronously. */
  drop(name: string, owner: string): boolean {
    if (this.holder(name) !== owner) return false;
    this.leases.delete(name);
    return true;
  }

  async acquire(name: string, owner: string, ttlMs: number): Promise<LeaseAcquire> {
    const holder = this.holder(name);
    const now = this.clock.now();
    if (holder === undefined || holder === owner) {
      this.leases.set(name, { owner, expiresAt: now + ttlMs });
      return { acquired: true };
    }
    return { acquired: false, holder, pttl: (this.leases.get(name)?.expiresAt ?? now) - now };
  }

  async renew(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const lease = this.leases.get(name);
    if (this.holder(name) !== owner || !lease) return false;
    lease.expiresAt = this.clock.now() + ttlMs;
    return true;
  }

  async release(name: string, owner: string): Promise<boolean> {
    return this.drop(name, owner);
  }
}
