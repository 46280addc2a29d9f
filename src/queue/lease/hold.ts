/**
 * The one way Switchboard keeps a lease it has taken: the thread lease of a worker's tenure, the
 * connection lease of a Telegram poller or a Discord shard, and the event claim of a handling
 * attempt all hold theirs through `holdLease`. What differs between them is only the store's
 * renewal step (`renew`) and what a loss means to its user.
 *
 * The rule, the same for all three, on the injected `Clock`:
 *
 * - **Renew every fifth of the TTL** (`RENEW_EVERY`), counted from the send time of the acquire.
 *   Renewals do not wait for each other: one that hangs on an unreachable store does not hold up the
 *   next, and the replies of one connection come back in order anyway.
 * - **Lost ⅔ of the TTL after the send time of the last confirmed renewal** (`LOST_AFTER`; the
 *   acquire counts as the first), checked by a timer of its own, so a renewal that never answers
 *   cannot delay it; and lost at once when a renewal is refused (the owner no longer holds it).
 *   A renewal that fails (the store unreachable) is reported and tried again at the next tick.
 *
 * Why these fractions. The store extends the lease by a whole TTL when it runs the renewal, which is
 * no earlier than its send, so the lease lives at least a TTL after the send time this side
 * remembers. Counting it lost at ⅔ of the TTL leaves ⅓ of the TTL in which the holder has given up
 * while nobody else can have taken it yet: room for a late timer (an event loop busy for a moment),
 * for clocks that run at slightly different rates, and for the holder to stop what it does. A holder
 * that gives up early costs only a re-wake or a reconnect; two holders at once cost duplicates, and
 * the connection lease has no fencing token to catch them. Renewing every fifth leaves three
 * renewals (at ⅕, ⅖ and ⅗ of the TTL) before the deadline, so two lost or slow renewals in a row
 * are tolerated and one may take up to 7/15 of the TTL to answer. A lease that is renewed is
 * therefore never seen with less than ⅘ of its TTL left, which is what the tenure's takeover rule
 * ("renewed within half its TTL" means alive) relies on.
 */
import type { Clock } from "../../agent/clock.js";

/** Renewals are sent every this fraction of the TTL. */
const RENEW_EVERY = 1 / 5;
/** A lease without a confirmed renewal for this fraction of the TTL (from its send time) is lost. */
const LOST_AFTER = 2 / 3;

/** Why a lease was lost: a renewal was refused, or none was confirmed for ⅔ of the TTL. */
export type LeaseLoss = { reason: "refused" } | { reason: "unconfirmed"; lastConfirmedAt: number };

export interface HoldLeaseOptions {
  clock: Clock;
  /** The lease's time-to-live, as given to the store's acquire and renew. */
  ttlMs: number;
  /** Send time of the acquire (or claim) that took the lease: the first loss deadline counts from it. */
  acquiredAt: number;
  /**
   * Sends one renewal to the store. Resolves true when the store extended the lease, false when the
   * owner no longer holds it (a loss). A rejection is an unknown outcome: reported to `onError` and
   * tried again at the next tick. Returns `undefined` to skip this tick (nothing is sent, and the
   * loss deadline does not move), e.g. while a release of the lease is on the wire.
   */
  renew: () => Promise<boolean> | undefined;
  /** Aborting it ends the hold (the lease is released or given up); nothing is reported after. */
  signal: AbortSignal;
  /** A renewal was confirmed; `sentAt` is its send time (the lease lasts at least a TTL from it). */
  onRenewed?: (sentAt: number) => void;
  /** The lease is lost; called once, before the hold resolves, at the clock time the loss was found. */
  onLost?: (loss: LeaseLoss) => void;
  /** A renewal failed (the store was unreachable); it is tried again at the next tick. */
  onError?: (error: unknown) => void;
}

/**
 * Holds a taken lease: renews it on the clock every fifth of its TTL and counts it lost ⅔ of the TTL
 * after the send time of the last confirmed renewal, or at once when a renewal is refused (see the
 * file's comment for why). Resolves `lost` or `stopped` (the signal aborted first); never rejects.
 * Replies that arrive after it resolved are ignored.
 */
export async function holdLease(o: HoldLeaseOptions): Promise<"lost" | "stopped"> {
  const { clock } = o;
  const every = Math.max(1, Math.floor(o.ttlMs * RENEW_EVERY));
  const lostAfter = Math.max(1, Math.floor(o.ttlMs * LOST_AFTER));
  let confirmedAt = o.acquiredAt;
  let nextAt = o.acquiredAt + every;
  let refused = false;
  let over = false;
  // Wakes the loop's sleep early: a refusal, or the signal.
  const wake = new AbortController();
  const onStop = () => wake.abort();
  o.signal.addEventListener("abort", onStop, { once: true });

  const send = (sentAt: number) => {
    let reply: Promise<boolean> | undefined;
    try {
      reply = o.renew();
    } catch (e) {
      o.onError?.(e);
      return;
    }
    reply?.then(
      (ok) => {
        if (over) return;
        if (!ok) {
          refused = true;
          wake.abort();
          return;
        }
        confirmedAt = Math.max(confirmedAt, sentAt);
        o.onRenewed?.(sentAt);
      },
      (e: unknown) => {
        if (!over) o.onError?.(e);
      },
    );
  };
  const lose = (loss: LeaseLoss): "lost" => {
    over = true;
    o.onLost?.(loss);
    return "lost";
  };

  try {
    for (;;) {
      if (o.signal.aborted) return "stopped";
      if (refused) return lose({ reason: "refused" });
      const now = clock.now();
      const deadline = confirmedAt + lostAfter;
      if (now >= deadline) return lose({ reason: "unconfirmed", lastConfirmedAt: confirmedAt });
      if (now >= nextAt) {
        nextAt = now + every;
        send(now);
        continue;
      }
      await clock.sleep(Math.min(nextAt, deadline) - now, wake.signal).catch(() => {});
    }
  } finally {
    over = true;
    o.signal.removeEventListener("abort", onStop);
    wake.abort();
  }
}
