/**
 * `EventClaimStore` in one process (so one gateway: the embedded runtime's). Each method runs
 * synchronously, as atomic as the Lua step it mirrors (src/queue/lua/event-claim.1.lua); claims
 * expire on the given `Clock`, so tests move time by hand.
 */
import { systemClock } from "../../agent/clock.js";
import type { EventClaim, EventClaimStore } from "../state/types.js";
import type { MemoryThreadStateOptions } from "./memory-thread-state.js";

/** One event id's claim: an owner until `expiresAt`, or done (kept until `expiresAt`). */
type EventEntry = { owner: string; expiresAt: number } | { done: true; expiresAt: number };

/** The in-process event claim store (one process, so one gateway: the embedded runtime's). */
export class MemoryEventClaimStore implements EventClaimStore {
  private readonly events = new Map<string, EventEntry>();
  private readonly dedupeTtlMs: number;
  private readonly now: () => number;
  private lastSweep = 0;

  constructor(options: MemoryThreadStateOptions = {}) {
    this.dedupeTtlMs = options.dedupeTtlMs ?? 24 * 3600_000;
    const clock = options.clock ?? systemClock;
    this.now = () => clock.now();
  }

  /** Forgets claims past their expiry (at most once a minute). */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, entry] of this.events) if (entry.expiresAt <= now) this.events.delete(id);
  }

  async claimEvent(eventId: string, owner: string, ttlMs: number): Promise<EventClaim> {
    this.sweep();
    const now = this.now();
    const entry = this.events.get(eventId);
    if (entry && "done" in entry && entry.expiresAt > now) return { status: "done" };
    if (entry && !("done" in entry) && entry.expiresAt > now)
      return { status: "held", remainingMs: entry.expiresAt - now };
    this.events.set(eventId, { owner, expiresAt: now + ttlMs });
    return { status: "claimed" };
  }

  async renewEvent(eventId: string, owner: string, ttlMs: number): Promise<boolean> {
    const entry = this.events.get(eventId);
    if (!entry || "done" in entry || entry.owner !== owner) return false;
    entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  async confirmEvent(eventId: string): Promise<void> {
    this.events.set(eventId, { done: true, expiresAt: this.now() + this.dedupeTtlMs });
  }

  async releaseEvent(eventId: string, owner: string): Promise<void> {
    const entry = this.events.get(eventId);
    if (entry && !("done" in entry) && entry.owner === owner) this.events.delete(eventId);
  }
}
