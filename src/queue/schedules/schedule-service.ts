/**
 * Scheduled prompts, end to end on the runtime's side: making, listing, pausing, resuming and
 * removing schedules (what `/schedule` and the config call), firing each occurrence once (the
 * timer calls back; the store's fence decides), delivering it into its thread as a message, and
 * following its answer to the chat: the run's outcome and whether the chat shows it are recorded
 * on the schedule, and an answer the platform refused is retried without running the prompt again.
 * docs/scheduling.md is the user's view of all of this.
 */
import { randomUUID } from "node:crypto";
import type { Clock } from "../../agent/clock.js";
import type { StructuredLogger } from "../../agent/logger.js";
import { countRunsBetween, nextRuns } from "../../extensions/schedules/next-runs.js";
import type { ParsedSchedule, ScheduleSpec } from "../../extensions/schedules/spec.js";
import { formatInstant } from "../../extensions/schedules/time-zone.js";
import type { RunObserver, RunReport, Runtime } from "../types.js";
import { parseScheduledEventId, scheduledMessage } from "./scheduled-message.js";
import type { ScheduleSettings } from "./settings.js";
import type { ScheduleTimer } from "./timer.js";
import type { ScheduleOwner, ScheduleRecord, ScheduleRun, ScheduleStore, ScheduleTarget } from "./types.js";

export interface ScheduleServiceOptions {
  store: ScheduleStore;
  timer: ScheduleTimer;
  runtime: Pick<Runtime, "deliver" | "status" | "control">;
  settings: ScheduleSettings;
  clock: Clock;
  logger: StructuredLogger;
}

/** What `create` did: the new schedule and its next instants, or why there is none. */
export type CreateResult =
  | { ok: true; record: ScheduleRecord; next: number[] }
  | { ok: false; error: string };

/** Most occurrences counted as missed in one go (a minutely schedule down for a year stays cheap). */
const MISSED_COUNT_CAP = 10_000;

export class ScheduleService implements RunObserver {
  private readonly retries = new Set<Promise<void>>();
  /** Schedules this process is retrying an answer of (one chain each, whatever runs meanwhile). */
  private readonly retrying = new Set<string>();
  private readonly closing = new AbortController();

  constructor(private readonly o: ScheduleServiceOptions) {}

  get settings(): ScheduleSettings {
    return this.o.settings;
  }

  /** The time on the service's clock (what "in 2h" counts from). */
  now(): number {
    return this.o.clock.now();
  }

  /** Begins firing (a process that runs workers): arms every schedule and catches up on missed ones. */
  async start(): Promise<void> {
    await this.o.timer.start((id, occurrence) => this.fire(id, occurrence), await this.o.store.listAll());
  }

  /** Stops firing and retrying; resolves once a fire in progress ended. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.o.timer.close();
    await this.drain();
  }

  /**
   * Resolves once the reports of ended runs are recorded. Runs still end (and report) while the
   * runtime stops after `close`, so the store is closed only after the runtime and this.
   */
  async drain(): Promise<void> {
    while (this.retries.size > 0) await Promise.all([...this.retries]);
  }

  /** Makes a chat schedule in `target`'s thread, within the per-thread and per-user limits, and arms it. */
  async create(target: ScheduleTarget, owner: ScheduleOwner, parsed: ParsedSchedule): Promise<CreateResult> {
    const now = this.o.clock.now();
    const next = nextRuns(parsed.spec, now, 3);
    if (next.length === 0) return { ok: false, error: "That schedule has no run after now." };
    const record: ScheduleRecord = {
      id: randomUUID().replaceAll("-", "").slice(0, 8),
      origin: "chat",
      target,
      owner,
      spec: parsed.spec,
      prompt: parsed.prompt,
      description: parsed.description,
      createdAt: now,
      paused: false,
      missed: 0,
      runs: 0,
    };
    const out = await this.o.store.create(record, this.o.settings.limits);
    if (!out.ok) {
      if (out.reason === "exists") return this.create(target, owner, parsed);
      const whose = out.reason === "thread" ? "This conversation has" : "You have";
      return {
        ok: false,
        error: `${whose} ${out.limit} schedules already (the limit). Remove one with /schedule rm <id> first.`,
      };
    }
    await this.o.timer.arm(record);
    this.o.logger.info(
      { scheduleId: record.id, threadKey: target.threadKey, spec: record.spec },
      "schedule created",
    );
    return { ok: true, record, next };
  }

  /** Adds or updates an operator's schedule from the config, keeping its history; arms it. */
  async putConfigured(id: string, target: ScheduleTarget, parsed: ParsedSchedule): Promise<void> {
    const existing = await this.o.store.get(id);
    if (
      existing &&
      sameWhen(existing.spec, parsed.spec) &&
      JSON.stringify([existing.prompt, existing.target]) === JSON.stringify([parsed.prompt, target])
    )
      return;
    const record: ScheduleRecord = {
      id,
      origin: "config",
      target,
      owner: { id: "config", name: "Scheduled" },
      spec: alignedForConfig(parsed.spec),
      prompt: parsed.prompt,
      description: parsed.description,
      createdAt: existing?.createdAt ?? this.o.clock.now(),
      paused: existing?.paused ?? false,
      ...(existing?.pausedReason ? { pausedReason: existing.pausedReason } : {}),
      ...(existing?.lastOccurrence !== undefined ? { lastOccurrence: existing.lastOccurrence } : {}),
      ...(existing?.lastRun ? { lastRun: existing.lastRun } : {}),
      missed: existing?.missed ?? 0,
      runs: existing?.runs ?? 0,
    };
    await this.o.store.put(record);
    if (!record.paused) await this.o.timer.arm(record);
  }

  /** Removes the config schedules whose ids `keep` no longer lists. */
  async pruneConfigured(keep: ReadonlySet<string>): Promise<void> {
    for (const r of await this.o.store.listAll())
      if (r.origin === "config" && !keep.has(r.id)) await this.remove(r.id, r.target.threadKey);
  }

  list(threadKey: string): Promise<ScheduleRecord[]> {
    return this.o.store.listByThread(threadKey);
  }

  /** Schedule `id` when it belongs to `threadKey`'s thread (a thread sees and changes only its own). */
  async find(id: string, threadKey: string): Promise<ScheduleRecord | undefined> {
    const r = await this.o.store.get(id);
    return r?.target.threadKey === threadKey ? r : undefined;
  }

  async pause(id: string, threadKey: string): Promise<ScheduleRecord | undefined> {
    if (!(await this.find(id, threadKey))) return undefined;
    const r = await this.o.store.setPaused(id, true);
    await this.o.timer.disarm(id);
    return r;
  }

  async resume(id: string, threadKey: string): Promise<ScheduleRecord | undefined> {
    if (!(await this.find(id, threadKey))) return undefined;
    const r = await this.o.store.setPaused(id, false);
    if (r) await this.o.timer.arm(r);
    return r;
  }

  async remove(id: string, threadKey: string): Promise<boolean> {
    if (!(await this.find(id, threadKey))) return false;
    await this.o.timer.disarm(id);
    return this.o.store.remove(id);
  }

  /** The next `count` instants of `record` after now (none while paused). */
  nextOf(record: ScheduleRecord, count: number): number[] {
    return record.paused ? [] : nextRuns(record.spec, this.o.clock.now(), count);
  }

  /**
   * One occurrence fell due (the timer's callback; it may come twice, or late). Runs it once: the
   * store's fence admits each occurrence once, a late one follows the missed-run policy, a busy
   * thread the busy policy; the prompt goes into the thread as a message from the schedule's owner.
   * A fence passed but whose delivery may not have happened (the process died in between) is
   * delivered again: the message's event id makes a second delivery a duplicate.
   */
  async fire(id: string, occurrence: number): Promise<void> {
    const record = await this.o.store.get(id);
    if (!record || record.paused) return;
    const last = record.lastOccurrence;
    if (last !== undefined && occurrence <= last) {
      const run = record.lastRun;
      if (occurrence === last && run?.status === "queued" && run.runId === undefined)
        await this.deliver(record, occurrence);
      return;
    }
    if (record.lastRun?.delivery === "owed") {
      // The last answer is not in the chat yet: running again would pay the model for a second
      // answer the chat cannot show either. This occurrence is held back (not run, not counted)
      // and the owed answer is tried once more now.
      this.o.logger.warn(
        { scheduleId: id, occurrence, threadKey: record.target.threadKey },
        "scheduled run held back: its previous answer is not posted yet",
      );
      await this.o.runtime.control(record.target.threadKey, { type: "finishRenders" });
      return;
    }
    const now = this.o.clock.now();
    const late = now - occurrence > this.o.settings.graceMs;
    const since = last ?? record.createdAt;
    const missedBefore = late ? countRunsBetween(record.spec, since, occurrence - 1, MISSED_COUNT_CAP) : 0;
    let skipped: string | undefined;
    if (late && this.o.settings.missed === "skip")
      skipped = `missed: nothing was running at ${formatInstant(occurrence, record.spec.tz)}`;
    else if (
      this.o.settings.ifBusy === "skip" &&
      (await this.o.runtime.status(record.target.threadKey)).active
    )
      skipped = "the conversation was busy";
    const run: ScheduleRun = skipped
      ? { occurrence, firedAt: now, status: "skipped", detail: skipped }
      : { occurrence, firedAt: now, status: "queued", delivery: "pending" };
    const before = await this.o.store.claimOccurrence(
      id,
      occurrence,
      run,
      skipped ? missedBefore + 1 : missedBefore,
    );
    if (!before) return;
    if (skipped) {
      this.o.logger.info({ scheduleId: id, occurrence, reason: skipped }, "scheduled run skipped");
      return;
    }
    await this.deliver(record, occurrence);
  }

  private async deliver(record: ScheduleRecord, occurrence: number): Promise<void> {
    const now = this.o.clock.now();
    const out = await this.o.runtime.deliver(
      scheduledMessage(record, occurrence, this.o.settings.quietMarker, now),
      "followUp",
    );
    if (out.status === "refused") {
      await this.o.store.updateRun(record.id, occurrence, {
        status: "skipped",
        detail: "the conversation's queue was full",
        delivery: "none",
      });
      this.o.logger.warn(
        { scheduleId: record.id, occurrence },
        "scheduled run skipped: the thread's inbox is full",
      );
      return;
    }
    this.o.logger.info(
      { scheduleId: record.id, occurrence, threadKey: record.target.threadKey },
      "scheduled run queued",
    );
  }

  /** `RunObserver`: records how the run answering a scheduled prompt went, and follows an owed answer. */
  runEnded(report: RunReport): void {
    for (const m of report.inbound) {
      const ref = parseScheduledEventId(m.eventId);
      if (ref) this.track(this.recordRun(ref.id, ref.occurrence, report), `recording run ${report.runId}`);
    }
  }

  /** `RunObserver`: an answer that was owed is shown now. */
  renderFinished(threadKey: string, runId: string): void {
    this.track(
      (async () => {
        const r = await this.o.store.findByRun(threadKey, runId);
        const run = r?.lastRun;
        if (!r || run?.delivery !== "owed") return;
        await this.o.store.updateRun(r.id, run.occurrence, {
          delivery: "shown",
          deliveredAt: this.o.clock.now(),
        });
        this.o.logger.info({ scheduleId: r.id, runId }, "scheduled answer delivered after a retry");
        if (r.spec.kind === "once") await this.finishOnce(r);
      })(),
      `recording the delivery of run ${runId}`,
    );
  }

  private async recordRun(id: string, occurrence: number, report: RunReport): Promise<void> {
    const marker = this.o.settings.quietMarker;
    const quiet =
      report.outcome === "answered" && (report.answer === "" || (marker !== "" && report.answer === marker));
    const status: ScheduleRun["status"] = quiet
      ? "quiet"
      : report.outcome === "answered"
        ? "answered"
        : "failed";
    const delivery: ScheduleRun["delivery"] = quiet ? "none" : report.shown ? "shown" : "owed";
    const patch: Partial<ScheduleRun> = {
      status,
      runId: report.runId,
      delivery,
      ...(report.shown ? { deliveredAt: this.o.clock.now() } : {}),
      ...(report.outcome === "failed" ? { detail: report.error ?? "the run failed" } : {}),
      ...(report.outcome === "stopped" ? { detail: "the run was stopped" } : {}),
    };
    if (!(await this.o.store.updateRun(id, occurrence, patch))) return;
    this.o.logger.info(
      { scheduleId: id, occurrence, status, delivery, runId: report.runId },
      "scheduled run ended",
    );
    const record = await this.o.store.get(id);
    if (!record) return;
    if (delivery === "owed") {
      if (this.retrying.has(id)) return;
      this.retrying.add(id);
      this.track(
        this.retryDelivery(record, report.runId).finally(() => this.retrying.delete(id)),
        `retrying the answer of ${id}`,
      );
    } else if (record.spec.kind === "once") await this.finishOnce(record);
  }

  /** A one-off schedule whose run ended and whose answer is shown has nothing left to do. */
  private async finishOnce(record: ScheduleRecord): Promise<void> {
    await this.o.timer.disarm(record.id);
    await this.o.store.remove(record.id);
    this.o.logger.info({ scheduleId: record.id }, "one-off schedule done");
  }

  /**
   * Retries showing an answer the platform refused: wakes the thread after each wait so that a
   * tenure finishes what its render journal owes (the prompt is not run again). One chain per
   * schedule: a later occurrence that runs meanwhile and is refused too does not start the count
   * again (else an hourly schedule into a deleted channel would retry forever). Still owed after
   * the last wait, the schedule is paused: its thread or channel is likely gone.
   */
  private async retryDelivery(record: ScheduleRecord, runId: string): Promise<void> {
    const waits = this.o.settings.deliveryRetryMs;
    for (const [n, wait] of waits.entries()) {
      try {
        await this.o.clock.sleep(wait, this.closing.signal);
      } catch {
        return;
      }
      const now = await this.o.store.get(record.id);
      if (now?.lastRun?.delivery !== "owed") return;
      if (n < waits.length - 1) {
        await this.o.runtime.control(record.target.threadKey, { type: "finishRenders" });
        continue;
      }
      const reason = `its answers could not be posted ${waits.length} times (is the conversation or channel gone?)`;
      await this.o.store.setPaused(record.id, true, reason);
      await this.o.timer.disarm(record.id);
      this.o.logger.warn(
        { scheduleId: record.id, threadKey: record.target.threadKey, runId },
        `schedule paused: ${reason}`,
      );
    }
  }

  private track(work: Promise<void>, what: string): void {
    const p = work.catch((err: unknown) => this.o.logger.error({ err }, `schedules: ${what} failed`));
    this.retries.add(p);
    void p.finally(() => this.retries.delete(p));
  }
}

/**
 * Whether two specs fire alike. An interval's start is left out: the config is read at every
 * start, and "every 6h" read later is the same schedule.
 */
function sameWhen(a: ScheduleSpec, b: ScheduleSpec): boolean {
  if (a.kind === "every" && b.kind === "every") return a.everyMs === b.everyMs && a.tz === b.tz;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A configured interval starts at a multiple of itself since the epoch, so every process that
 * reads the config arms the same instants (a chat schedule counts from when it was made).
 */
function alignedForConfig(spec: ScheduleSpec): ScheduleSpec {
  if (spec.kind !== "every") return spec;
  return { ...spec, startAt: Math.ceil(spec.startAt / spec.everyMs) * spec.everyMs };
}
