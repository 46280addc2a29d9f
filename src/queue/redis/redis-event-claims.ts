/**
 * `EventClaimStore` on Redis, shared by every gateway: one key per event id, each step one script
 * (src/queue/lua/event-claim.1.lua, event-renew, event-release) timed by the caller's clock.
 */
import { type Clock, systemClock } from "../../agent/clock.js";
import type { RuntimeKeys } from "../../redis-keys.js";
import type { EventClaim, EventClaimStore } from "../state/types.js";
import type { RedisClient } from "./client.js";
import { CLAIM_EVENT, RELEASE_EVENT, RENEW_EVENT } from "./event-claim-scripts.js";
import type { RedisThreadStateOptions } from "./redis-thread-state.js";
import { runScript, type ScriptReply } from "./run-script.js";

/**
 * The event claim store on Redis: one key per event id (`keys.dedupe`), a claim's owner and expiry
 * on the given clock, or `done` for the dedupe window. Uses (does not own) `redis`.
 */
export class RedisEventClaimStore implements EventClaimStore {
  private readonly dedupeTtlMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RuntimeKeys,
    options: Pick<RedisThreadStateOptions, "dedupeTtlMs" | "clock"> = {},
  ) {
    this.dedupeTtlMs = options.dedupeTtlMs ?? 24 * 3600_000;
    this.clock = options.clock ?? systemClock;
  }

  async claimEvent(eventId: string, owner: string, ttlMs: number): Promise<EventClaim> {
    const r = (await runScript(
      this.redis,
      CLAIM_EVENT,
      [this.keys.dedupe(eventId)],
      [owner, this.clock.now(), ttlMs, this.dedupeTtlMs],
    )) as ScriptReply[];
    if (r[0] === "claimed") return { status: "claimed" };
    if (r[0] === "done") return { status: "done" };
    return { status: "held", remainingMs: Math.max(0, Number(r[1] ?? 0)) };
  }

  async renewEvent(eventId: string, owner: string, ttlMs: number): Promise<boolean> {
    const r = await runScript(
      this.redis,
      RENEW_EVENT,
      [this.keys.dedupe(eventId)],
      [owner, this.clock.now(), ttlMs, this.dedupeTtlMs],
    );
    return Number(r) === 1;
  }

  async confirmEvent(eventId: string): Promise<void> {
    await this.redis.set(this.keys.dedupe(eventId), "done", "PX", this.dedupeTtlMs);
  }

  async releaseEvent(eventId: string, owner: string): Promise<void> {
    await runScript(this.redis, RELEASE_EVENT, [this.keys.dedupe(eventId)], [owner]);
  }
}
