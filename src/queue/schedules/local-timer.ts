/**
 * The embedded mode's firing engine: one loop on the injected `Clock` that sleeps until the
 * earliest armed occurrence and calls back for every schedule due then. The records it arms come
 * from the data directory (`FileScheduleStore`), so a restart re-arms them; occurrences that fell
 * due while the process was down get one callback each schedule (the latest), and the service's
 * missed-run policy decides whether it runs.
 */
import type { Clock } from "../../agent/clock.js";
import { lastRunAtOrBefore, nextRuns } from "../../extensions/schedules/next-runs.js";
import type { ScheduleSpec } from "../../extensions/schedules/spec.js";
import type { FireFn, ScheduleTimer } from "./timer.js";
import type { ScheduleRecord } from "./types.js";

/**
 * The longest single sleep: a far occurrence is reached in steps, so a timer never overflows
 * (`setTimeout` holds at most 24.8 days) and a clock that jumped is noticed within the hour.
 */
const MAX_SLEEP_MS = 60 * 60_000;

interface Armed {
  spec: ScheduleSpec;
  /** The next instant to fire, undefined when the schedule has no more occurrences. */
  next: number | undefined;
}

export class LocalScheduleTimer implements ScheduleTimer {
  private readonly armed = new Map<string, Armed>();
  private fire: FireFn | undefined;
  private wakeUp = new AbortController();
  private readonly closed = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  async start(fire: FireFn, records: readonly ScheduleRecord[]): Promise<void> {
    this.fire = fire;
    const now = this.clock.now();
    const due: [string, number][] = [];
    for (const r of records) {
      if (r.paused) continue;
      const since = r.lastOccurrence ?? r.createdAt;
      const latest = lastRunAtOrBefore(r.spec, now);
      if (latest !== undefined && latest > since) due.push([r.id, latest]);
      // A run whose delivery into the thread may not have happened (the process died between the
      // fence and the inbox): the service delivers it again, once (the delivery is idempotent).
      else if (r.lastRun?.status === "queued" && r.lastRun.runId === undefined)
        due.push([r.id, r.lastRun.occurrence]);
      this.armed.set(r.id, { spec: r.spec, next: nextRuns(r.spec, now, 1)[0] });
    }
    for (const [id, occurrence] of due) await this.call(id, occurrence);
    this.loop ??= this.run();
  }

  async arm(record: ScheduleRecord): Promise<void> {
    this.armed.set(record.id, { spec: record.spec, next: nextRuns(record.spec, this.clock.now(), 1)[0] });
    this.reschedule();
  }

  async disarm(id: string): Promise<void> {
    this.armed.delete(id);
    this.reschedule();
  }

  async close(): Promise<void> {
    this.closed.abort();
    this.wakeUp.abort();
    await this.loop;
  }

  /** Wakes the loop so it sleeps until the new earliest occurrence. */
  private reschedule(): void {
    this.wakeUp.abort();
  }

  private earliest(): number | undefined {
    let min: number | undefined;
    for (const a of this.armed.values())
      if (a.next !== undefined && (min === undefined || a.next < min)) min = a.next;
    return min;
  }

  private async run(): Promise<void> {
    while (!this.closed.signal.aborted) {
      this.wakeUp = new AbortController();
      const next = this.earliest();
      const now = this.clock.now();
      if (next === undefined || next > now) {
        const wait = next === undefined ? MAX_SLEEP_MS : Math.min(next - now, MAX_SLEEP_MS);
        try {
          await this.clock.sleep(wait, AbortSignal.any([this.wakeUp.signal, this.closed.signal]));
        } catch {
          // Re-armed or closed: look again.
        }
        continue;
      }
      for (const [id, a] of [...this.armed]) {
        if (a.next === undefined || a.next > now || this.closed.signal.aborted) continue;
        const occurrence = a.next;
        a.next = nextRuns(a.spec, Math.max(occurrence, now), 1)[0];
        await this.call(id, occurrence);
      }
    }
  }

  private async call(id: string, occurrence: number): Promise<void> {
    try {
      await this.fire?.(id, occurrence);
    } catch (e) {
      this.onError(e, `firing schedule ${id}`);
    }
  }
}
