/**
 * Keeps a holder's thread lease alive: renews it every third of its TTL and reports a loss (a
 * refused renewal, or no confirmed renewal for a whole TTL while renewals fail). The session
 * writes are fenced by the lease anyway; this only makes the holder stop early.
 */
import type { ThreadState } from "../state/types.js";

/** A lease event, for observability and for the multi-process test's overlap check. */
export interface LeaseEvent {
  type: "acquired" | "renewed" | "released" | "lost" | "handoff";
  threadKey: string;
  token: string;
  /** `acquired`: when the reply arrived; others: when the request was sent (ms, `Date.now()`). */
  at: number;
  /** `acquired`: when the request was sent. */
  sentAt?: number;
}

export interface LeaseRenewerEnv {
  state: ThreadState;
  leaseTtlMs: number;
  onError: (error: unknown, context: string) => void;
  onLease?: (event: LeaseEvent) => void;
}

export class LeaseRenewer {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastRenewOk = Date.now();

  constructor(
    private readonly threadKey: string,
    private readonly token: string,
    private readonly env: LeaseRenewerEnv,
    private readonly onLost: () => void,
  ) {}

  start(): void {
    const { state, leaseTtlMs } = this.env;
    this.timer = setInterval(
      () => {
        const sentAt = Date.now();
        state.renew(this.threadKey, this.token, leaseTtlMs).then(
          (ok) => {
            if (!ok) return this.onLost();
            this.lastRenewOk = sentAt;
            this.env.onLease?.({ type: "renewed", threadKey: this.threadKey, token: this.token, at: sentAt });
          },
          (e: unknown) => {
            // Without a confirmed renewal for a whole TTL the lease may be gone: stop writing.
            if (Date.now() - this.lastRenewOk >= leaseTtlMs) this.onLost();
            this.env.onError(e, "renewing a lease");
          },
        );
      },
      Math.max(10, Math.floor(leaseTtlMs / 3)),
    );
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
