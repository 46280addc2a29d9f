/**
 * The runtime's one dedupe point (`EventClaims` over an `EventClaimStore`), on both runtimes' stores and
 * the Redis Cluster, on a manual clock: a redelivery whose first attempt died is handled, one that
 * meets a live attempt waits for its outcome, and "done" is written only after the handler (the
 * inbox append) resolved.
 */
import { afterAll, describe, expect, it } from "vitest";
import { MemoryEventClaimStore } from "../../src/queue/embedded/memory-event-claims.js";
import { EventBusyError, EventClaims } from "../../src/queue/event-claims.js";
import type { RedisClient } from "../../src/queue/redis/client.js";
import { RedisEventClaimStore } from "../../src/queue/redis/redis-event-claims.js";
import type { EventClaimStore } from "../../src/queue/state/types.js";
import { RuntimeKeys } from "../../src/redis-keys.js";
import { until } from "../adapters/support/drive.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectBackend, redisBackends, uniquePrefix } from "../support/redis.js";

const redisConnections: RedisClient[] = [];
afterAll(async () => {
  for (const r of redisConnections) await r.quit();
});

const states: [string, (clock: ManualClock) => EventClaimStore][] = [
  ["memory", (clock) => new MemoryEventClaimStore({ clock })],
  ...redisBackends().map((backend): [string, (clock: ManualClock) => EventClaimStore] => [
    backend,
    (clock) => {
      const redis = connectBackend(backend);
      redisConnections.push(redis);
      return new RedisEventClaimStore(redis, new RuntimeKeys(uniquePrefix()), { clock });
    },
  ]),
];

/** Two gateway processes over one store: each has its own claims (instance) on the same clock. */
function setup(make: (clock: ManualClock) => EventClaimStore) {
  const clock = new ManualClock();
  const state = make(clock);
  const claims = (instanceId: string) =>
    new EventClaims({ store: state, clock, instanceId, ttlMs: 3000, waitMs: 6000, pollMs: 250 });
  return { clock, state, a: claims("gw-a"), b: claims("gw-b") };
}

/** A handler that runs until `finish()` or `fail()` is called. */
function pending<T>(value: T) {
  let finish!: () => void;
  let fail!: (e: Error) => void;
  let started = false;
  const done = new Promise<T>((resolve, reject) => {
    finish = () => resolve(value);
    fail = reject;
  });
  return {
    handle: () => {
      started = true;
      return done;
    },
    started: () => started,
    finish: () => finish(),
    fail: (e: Error) => fail(e),
  };
}

describe.each(states)("event claims on %s", (_name, make) => {
  it("handles an event once; a later redelivery is a duplicate", async () => {
    const { a, b } = setup(make);
    expect(await a.once("e", async () => "first")).toEqual({ status: "handled", value: "first" });
    expect(await b.once("e", async () => "second")).toEqual({ status: "duplicate" });
    expect(await a.once("e", async () => "third")).toEqual({ status: "duplicate" });
  });

  it("a redelivery that meets a dead owner's claim handles the event once the claim expired", async () => {
    const { clock, state, b } = setup(make);
    // Gateway A claimed the update and was SIGKILLed: the claim stays, nobody renews it.
    expect(await state.claimEvent("e", "gw-a#1", 3000)).toEqual({ status: "claimed" });
    let ran = 0;
    const redelivery = b.once("e", async () => ++ran);
    await until(() => clock.pending > 0, 30_000, "the redelivery waiting");
    expect(ran).toBe(0);
    for (let t = 0; t < 3000 && ran === 0; t += 250) {
      await clock.advance(250);
      await until(() => clock.pending > 0 || ran > 0, 30_000, "the next look at the claim");
    }
    expect(await redelivery).toEqual({ status: "handled", value: 1 });
    expect(await b.once("e", async () => ++ran)).toEqual({ status: "duplicate" });
  });

  it("a redelivery that meets a live claim waits for its outcome: done → duplicate", async () => {
    const { clock, a, b } = setup(make);
    const first = pending("stored");
    const handling = a.once("e", first.handle);
    await until(first.started, 30_000, "A handling");
    let ran = false;
    const retry = b.once("e", async () => {
      ran = true;
    });
    // Longer than a claim's ttl: A renews it while it works, so B keeps waiting.
    for (let i = 0; i < 16; i++) {
      await until(() => clock.pending >= 2, 30_000, "A renewing and B waiting");
      await clock.advance(250);
    }
    expect(ran).toBe(false);
    first.finish();
    expect(await handling).toEqual({ status: "handled", value: "stored" });
    await until(() => clock.pending > 0, 30_000, "B waiting");
    await clock.advance(250);
    expect(await retry).toEqual({ status: "duplicate" });
    expect(ran).toBe(false);
  });

  it("a redelivery that meets a live claim whose handler fails handles the event itself", async () => {
    const { clock, a, b } = setup(make);
    const first = pending("never");
    const handling = a.once("e", first.handle);
    await until(first.started, 30_000, "A handling");
    const retry = b.once("e", async () => "handled by B");
    await until(() => clock.pending >= 2, 30_000, "B waiting");
    first.fail(new Error("Redis refused the append"));
    await expect(handling).rejects.toThrow("Redis refused the append");
    await clock.advance(250);
    expect(await retry).toEqual({ status: "handled", value: "handled by B" });
  });

  it("tells the handler whether its claim waited for another attempt", async () => {
    const { clock, a, b } = setup(make);
    expect(await a.once("fresh", async (claim) => claim.waited)).toEqual({ status: "handled", value: false });
    // B meets A's live claim, waits, and handles the event once A's handler failed: what B read
    // before its claim may be stale, and it is told so.
    const first = pending("never");
    const handling = a.once("e", first.handle);
    await until(first.started, 30_000, "A handling");
    const retry = b.once("e", async (claim) => claim.waited);
    await until(() => clock.pending >= 2, 30_000, "B waiting");
    first.fail(new Error("Redis refused the append"));
    await expect(handling).rejects.toThrow("Redis refused the append");
    await clock.advance(250);
    expect(await retry).toEqual({ status: "handled", value: true });
  });

  it("a live claim that outlasts the wait is not confirmed as a duplicate: the platform retries later", async () => {
    const { clock, a, b } = setup(make);
    const first = pending("slow");
    const handling = a.once("e", first.handle);
    await until(first.started, 30_000, "A handling");
    const retry = b.once("e", async () => "never");
    const outcome = retry.then(
      () => "resolved",
      (e: unknown) => e,
    );
    let settled: unknown;
    void outcome.then((v) => {
      settled = v;
    });
    for (let i = 0; i < 40 && settled === undefined; i++) {
      await until(() => clock.pending >= 2 || settled !== undefined, 30_000, "B waiting");
      await clock.advance(250);
    }
    expect(await outcome).toBeInstanceOf(EventBusyError);
    first.finish();
    expect(await handling).toEqual({ status: "handled", value: "slow" });
  });

  it("a redelivery to the same process waits for the attempt in progress there, bounded too", async () => {
    const { clock, a } = setup(make);
    const first = pending("stored");
    const handling = a.once("e", first.handle);
    await until(first.started, 30_000, "A handling");
    const quick = a.once("e", async () => "never");
    await until(() => clock.pending >= 2, 30_000, "the retry waiting");
    first.finish();
    expect(await handling).toEqual({ status: "handled", value: "stored" });
    expect(await quick).toEqual({ status: "duplicate" });

    const slow = pending("slow");
    const slowHandling = a.once("f", slow.handle);
    await until(slow.started, 30_000, "A handling f");
    const late = a.once("f", async () => "never").catch((e: unknown) => e);
    await until(() => clock.pending >= 2, 30_000, "the retry of f waiting");
    await clock.advance(6000);
    expect(await late).toBeInstanceOf(EventBusyError);
    slow.finish();
    await slowHandling;
  });

  it("done is written only after the handler resolved; a failed handler leaves the event to its retry", async () => {
    const { state, a, b } = setup(make);
    const first = pending("durable");
    const handling = a.once("e", first.handle);
    await until(first.started, 30_000, "A handling");
    // While the message is not yet durable, the claim is a live claim, not "done".
    expect((await state.claimEvent("e", "probe#1", 3000)).status).toBe("held");
    first.finish();
    await handling;
    expect((await state.claimEvent("e", "probe#2", 3000)).status).toBe("done");

    await expect(
      a.once("f", async () => {
        throw new Error("not stored");
      }),
    ).rejects.toThrow("not stored");
    expect(await b.once("f", async () => "retried")).toEqual({ status: "handled", value: "retried" });
  });

  it("a nested claim of the same event in the same handling runs through (deliver inside a handler)", async () => {
    const { a } = setup(make);
    const out = await a.once("e", async () => a.once("e", async () => "inner"));
    expect(out).toEqual({ status: "handled", value: { status: "handled", value: "inner" } });
  });
});
