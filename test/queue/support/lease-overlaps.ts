/**
 * The "never two holders" check of the multi-process tests, over lease events written as they
 * happen (one JSON line each, synchronously, so a SIGKILL loses at most the event in progress).
 */
import type { LeaseEvent } from "../../../src/queue/worker/tenure.js";

export type LoggedLeaseEvent = LeaseEvent & { worker: string };

interface Tenure {
  token: string;
  worker: string;
  thread: string;
  /** When the acquire reply arrived: the lease was set no later than this. */
  start: number;
  /** Latest send time of the acquire or a confirmed renewal, plus the TTL: it expires no earlier. */
  expiresNoEarlier: number;
  /** Send time of a release not answered `kept`: it deletes the lease no earlier than this. */
  releaseSent?: number;
}

/**
 * Finds two tenures of one thread that certainly overlapped. A tenure starts no later than its
 * `acquired` reply and ends no earlier than the sooner of (a) its last confirmed renewal (or its
 * acquire) sent plus the TTL and (b) the send time of a release it did not see answered "busy"
 * (`releasing` without `kept`). Releases are reported before they are sent, so (b) holds even for
 * a process killed with its release on the wire, whose `released` line never got written: such a
 * tenure may have ended as early as that send, and a successor from then on is not an overlap.
 * Every overlap reported is real; a tenure whose `acquired` line was lost is not seen at all.
 */
export function findLeaseOverlaps(events: readonly LoggedLeaseEvent[], ttlMs: number): string[] {
  const tenures = new Map<string, Tenure>();
  for (const e of events) {
    const t = tenures.get(e.token);
    if (e.type === "acquired") {
      tenures.set(e.token, {
        token: e.token,
        worker: e.worker,
        thread: e.threadKey,
        start: e.at,
        expiresNoEarlier: (e.sentAt ?? e.at) + ttlMs,
      });
    } else if (!t) {
    } else if (e.type === "renewed") {
      t.expiresNoEarlier = Math.max(t.expiresNoEarlier, e.at + ttlMs);
    } else if (e.type === "releasing") {
      t.releaseSent ??= e.at;
    } else if (e.type === "kept") {
      t.releaseSent = undefined;
    }
  }
  const byThread = new Map<string, Tenure[]>();
  for (const t of tenures.values()) byThread.set(t.thread, [...(byThread.get(t.thread) ?? []), t]);
  const overlaps: string[] = [];
  for (const [thread, list] of byThread) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 0; i < list.length; i++) {
      const a = list[i] as Tenure;
      const end = Math.min(a.expiresNoEarlier, a.releaseSent ?? Number.POSITIVE_INFINITY);
      for (let j = i + 1; j < list.length; j++) {
        const b = list[j] as Tenure;
        if (b.start < end) {
          overlaps.push(
            `${thread}: ${a.worker}/${a.token} until ≥${end}, ${b.worker}/${b.token} from ≤${b.start}`,
          );
        }
      }
    }
  }
  return overlaps;
}
