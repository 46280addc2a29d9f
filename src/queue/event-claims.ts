/**
 * The runtime's one dedupe point for platform events (Telegram update ids, Slack event ids and
 * retries, Discord interactions, web chat events). Whatever the platform, a gateway handles an
 * event through `EventClaims.once`:
 *
 * - the claim is a short lease owned by this handling attempt (`<instance>#<n>`), held through
 *   `holdLease` (queue/lease/hold.ts, the one rule for every lease) while the handler works; a
 *   process that dies stops renewing, so its claim expires within `ttlMs`;
 * - `done` is written only after the handler resolved, i.e. after its message is durable in the
 *   inbox; a handler that throws releases the claim, so the platform's retry is handled;
 * - a redelivery that meets an expired claim (its owner died) takes it over and handles the event;
 *   one that meets a live claim waits for the outcome (at most `waitMs`): done → duplicate,
 *   released → handled here, still held → `EventBusyError`, so the platform retries later.
 *
 * Times are the injected clock's, so tests run on a manual clock.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../agent/clock.js";
import { holdLease, type LeaseLoss } from "./lease/hold.js";
import type { EventClaimStore } from "./state/types.js";
import type { EventHandler, EventOutcome } from "./types.js";

export interface EventClaimsOptions {
  /** Where the claims live (one store shared by every gateway process). */
  store: EventClaimStore;
  /** Default: the system clock. */
  clock?: Clock;
  /** Names this process in claim owners (diagnostics). Default: a random id. */
  instanceId?: string;
  /** How long a claim lasts without renewal. Default 15 s. */
  ttlMs?: number;
  /** How long a redelivery waits for a live claim's outcome. Default: `ttlMs`. */
  waitMs?: number;
  /** How often a waiting redelivery looks at the claim again. Default 250 ms. */
  pollMs?: number;
  onError?: (error: unknown, context: string) => void;
}

/** A live claim of another handling attempt outlasted the wait; the platform should retry later. */
export class EventBusyError extends Error {
  constructor(eventId: string, waitedMs: number) {
    super(
      `Event ${eventId} is still being handled by another attempt after ${waitedMs} ms; ` +
        "it is not acknowledged, so the platform delivers it again later.",
    );
    this.name = "EventBusyError";
  }
}

/** Runs each platform event's handler once across every gateway process. */
export class EventClaims {
  private readonly clock: Clock;
  private readonly instanceId: string;
  private readonly ttlMs: number;
  private readonly waitMs: number;
  private readonly pollMs: number;
  private readonly onError: (error: unknown, context: string) => void;
  private attempts = 0;
  /** This process's attempts in progress: a concurrent redelivery here awaits one, without polling. */
  private readonly local = new Map<string, Promise<unknown>>();
  /** The event ids the current async context holds, so a nested `once` (deliver inside a handler) runs through. */
  private readonly held = new AsyncLocalStorage<ReadonlySet<string>>();

  constructor(private readonly o: EventClaimsOptions) {
    this.clock = o.clock ?? systemClock;
    this.instanceId = o.instanceId ?? randomUUID().slice(0, 8);
    this.ttlMs = Math.max(1, o.ttlMs ?? 15_000);
    this.waitMs = Math.max(0, o.waitMs ?? this.ttlMs);
    this.pollMs = Math.max(1, o.pollMs ?? 250);
    this.onError = o.onError ?? (() => {});
  }

  /**
   * Runs `handle` unless the event was handled already (`duplicate`). Rejects with what `handle`
   * threw (the claim is released), with `EventBusyError`, or when the store is unreachable; in
   * every such case the event must not be acknowledged to the platform. `handle` is told whether
   * the claim waited for another attempt first.
   */
  async once<T>(eventId: string, handle: EventHandler<T>): Promise<EventOutcome<T>> {
    const outer = this.held.getStore();
    if (outer?.has(eventId)) return { status: "handled", value: await handle({ waited: false }) };
    const started = this.clock.now();
    let waited = false;
    for (let running = this.local.get(eventId); running; running = this.local.get(eventId)) {
      waited = true;
      const left = this.waitMs - (this.clock.now() - started);
      if (left <= 0 || !(await this.settlesWithin(running, left)))
        throw new EventBusyError(eventId, this.clock.now() - started);
    }
    const attempt = this.attempt(eventId, handle, outer, started, waited);
    const tracked = attempt.then(
      () => {},
      () => {},
    );
    this.local.set(eventId, tracked);
    try {
      return await attempt;
    } finally {
      if (this.local.get(eventId) === tracked) this.local.delete(eventId);
    }
  }

  private async attempt<T>(
    eventId: string,
    handle: EventHandler<T>,
    outer: ReadonlySet<string> | undefined,
    started: number,
    waitedLocally: boolean,
  ): Promise<EventOutcome<T>> {
    const owner = `${this.instanceId}#${++this.attempts}`;
    const { store } = this.o;
    let claimedAt: number;
    let waited = waitedLocally;
    for (; ; waited = true) {
      claimedAt = this.clock.now();
      const claim = await store.claimEvent(eventId, owner, this.ttlMs);
      if (claim.status === "done") return { status: "duplicate" };
      if (claim.status === "claimed") break;
      const waited = this.clock.now() - started;
      if (waited >= this.waitMs) throw new EventBusyError(eventId, waited);
      await this.clock.sleep(Math.min(this.pollMs, claim.remainingMs, this.waitMs - waited));
    }
    const renewing = new AbortController();
    const renewer = this.hold(eventId, owner, claimedAt, renewing.signal);
    let value: T;
    try {
      value = await this.held.run(new Set([...(outer ?? []), eventId]), () => handle({ waited }));
    } catch (e) {
      renewing.abort();
      await renewer;
      await store
        .releaseEvent(eventId, owner)
        .catch((err: unknown) => this.onError(err, "releasing an event claim"));
      throw e;
    }
    renewing.abort();
    await renewer;
    // The message is durable now; failing to record that only lets a redelivery append it again,
    // which the inbox's per-event append turns into nothing.
    await store.confirmEvent(eventId).catch((err: unknown) => this.onError(err, "confirming an event id"));
    return { status: "handled", value };
  }

  /** Whether `running` settles within `ms` on the clock. */
  private async settlesWithin(running: Promise<unknown>, ms: number): Promise<boolean> {
    const timeout = new AbortController();
    const timer = this.clock.sleep(ms, timeout.signal).then(
      () => false,
      () => true,
    );
    const settled = await Promise.race([running.then(() => true), timer]);
    timeout.abort();
    return settled;
  }

  /**
   * Holds the claim while the handler works, until `signal` aborts. A lost claim (taken over, or not
   * renewed for ⅔ of its ttl) is reported; the handler runs on (its append is idempotent per event
   * id), so a redelivery that took the claim over finds its message stored.
   */
  private async hold(eventId: string, owner: string, claimedAt: number, signal: AbortSignal): Promise<void> {
    const context = "renewing an event claim";
    await holdLease({
      clock: this.clock,
      ttlMs: this.ttlMs,
      acquiredAt: claimedAt,
      signal,
      renew: () => this.o.store.renewEvent(eventId, owner, this.ttlMs),
      onError: (err) => this.onError(err, context),
      onLost: (loss: LeaseLoss) =>
        this.onError(
          new Error(
            loss.reason === "refused"
              ? `The claim on event ${eventId} was taken over while it was being handled`
              : `The claim on event ${eventId} could not be renewed; a redelivery may handle the event too`,
          ),
          context,
        ),
    });
  }
}
