/**
 * Where the web chat keeps who is signed in: one-time sign-in tokens and browser sessions, each by
 * the SHA-256 digest of its secret only, so whoever reads the store (a Redis dump, a debugger) learns
 * nothing that signs in. Two implementations run one contract suite
 * (test/adapters/web/auth-store-contract.ts): `MemoryWebAuthStore` (one process: sign-ins last until
 * it stops) and `RedisWebAuthStore` in src/queue/store/web-auth-redis.ts (shared by every gateway,
 * so a session started through one gateway works through the others and survives their restarts).
 */

export interface WebAuthStore {
  /** Records a sign-in token that `redeemSignIn` accepts once within `ttlMs`. */
  addSignIn(digest: string, ttlMs: number): Promise<void>;
  /** True exactly once for a token that was added and has not expired; false for anything else. */
  redeemSignIn(digest: string): Promise<boolean>;
  /** Records a session that `touchSession` accepts for `ttlMs` after its last use. */
  addSession(digest: string, ttlMs: number): Promise<void>;
  /** True when the session exists; it then lasts `ttlMs` from now. */
  touchSession(digest: string, ttlMs: number): Promise<boolean>;
  endSession(digest: string): Promise<void>;
}

/** Sign-ins in this process's memory, with expiry checked on use. */
export class MemoryWebAuthStore implements WebAuthStore {
  private readonly signIns = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async addSignIn(digest: string, ttlMs: number): Promise<void> {
    this.prune(this.signIns);
    this.signIns.set(digest, this.now() + ttlMs);
  }

  async redeemSignIn(digest: string): Promise<boolean> {
    const until = this.signIns.get(digest);
    this.signIns.delete(digest);
    return until !== undefined && until > this.now();
  }

  async addSession(digest: string, ttlMs: number): Promise<void> {
    this.prune(this.sessions);
    this.sessions.set(digest, this.now() + ttlMs);
  }

  async touchSession(digest: string, ttlMs: number): Promise<boolean> {
    const until = this.sessions.get(digest);
    if (until === undefined || until <= this.now()) {
      this.sessions.delete(digest);
      return false;
    }
    this.sessions.set(digest, this.now() + ttlMs);
    return true;
  }

  async endSession(digest: string): Promise<void> {
    this.sessions.delete(digest);
  }

  private prune(map: Map<string, number>): void {
    const now = this.now();
    for (const [k, until] of map) if (until <= now) map.delete(k);
  }
}
