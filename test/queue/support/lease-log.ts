/**
 * Every lease event of a runtime (its `onLease`), with a way to wait for the next one that
 * matches: the runtime tests wait on what the runtime does, never on time.
 */
import type { LeaseEvent } from "../../../src/queue/worker/tenure.js";

export class LeaseLog {
  readonly events: LeaseEvent[] = [];
  private waiters: { match: (e: LeaseEvent) => boolean; resolve: (e: LeaseEvent) => void }[] = [];

  /** Give this to the runtime as `onLease`. */
  readonly record = (e: LeaseEvent): void => {
    this.events.push(e);
    for (const w of this.waiters.filter((x) => x.match(e))) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(e);
    }
  };

  /** The next event from now on that matches (only events after the call count). */
  next(match: (e: LeaseEvent) => boolean = () => true): Promise<LeaseEvent> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The first event so far that matches, or the next one. */
  seen(match: (e: LeaseEvent) => boolean): Promise<LeaseEvent> {
    const e = this.events.find(match);
    return e ? Promise.resolve(e) : this.next(match);
  }

  /** The event types of one thread, in order (renewals left out unless asked for). */
  typesOf(threadKey: string, withRenewals = false): string[] {
    return this.events
      .filter((e) => e.threadKey === threadKey && (withRenewals || e.type !== "renewed"))
      .map((e) => e.type);
  }
}
