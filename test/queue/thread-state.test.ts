/**
 * The coordination primitives, step by step, on Redis (the Lua scripts) and in memory: both must
 * give the same answers, since the runtime's correctness argument is written against them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { MemoryEventClaimStore } from "../../src/queue/embedded/memory-event-claims.js";
import { MemoryThreadState } from "../../src/queue/embedded/memory-thread-state.js";
import type { RedisClient } from "../../src/queue/redis/client.js";
import { RedisEventClaimStore } from "../../src/queue/redis/redis-event-claims.js";
import { RedisThreadState } from "../../src/queue/redis/redis-thread-state.js";
import { RedisRenderJournal } from "../../src/queue/redis/render-journal.js";
import type { AppendOptions, EventClaimStore, ThreadState } from "../../src/queue/state/types.js";
import type { DeliveryMode, InboxItem } from "../../src/queue/types.js";
import { RuntimeKeys } from "../../src/redis-keys.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectBackend, redisBackends, uniquePrefix } from "../support/redis.js";
import { inbound } from "./support/harness.js";

const redisConnections: RedisClient[] = [];
afterAll(async () => {
  for (const r of redisConnections) await r.quit();
});

// Redis on one server and on the Redis Cluster, where a step touching two hash slots fails.
// Every state runs on the manual clock (it also times event claims).
const clock = new ManualClock();
const implementations: [string, () => ThreadState][] = [
  ["memory", () => new MemoryThreadState({ clock })],
  ...redisBackends().map((backend): [string, () => ThreadState] => [
    backend,
    () => {
      const redis = connectBackend(backend);
      redisConnections.push(redis);
      return new RedisThreadState(redis, new RuntimeKeys(uniquePrefix()), { clock });
    },
  ]),
];

const T = "web:state";
const texts = (items: InboxItem[]) => items.map((i) => (i.kind === "newSession" ? "/new" : i.message?.text));
const opts = { cap: 20, dropPolicy: "new" as const };

async function put(s: ThreadState, text: string, mode: DeliveryMode = "steer") {
  return s.append(T, { mode, kind: "message", message: inbound(T, text) }, opts);
}

describe.each(implementations)("%s thread state", (_name, make) => {
  it("numbers items, sets the wake flag once until a job clears it, and never while a lease is held", async () => {
    const s = make();
    expect(await put(s, "a")).toMatchObject({ accepted: true, seq: 1, depth: 1, woke: true, active: false });
    expect(await put(s, "b")).toMatchObject({ seq: 2, depth: 2, woke: false });
    await s.clearWake(T);
    expect(await s.acquire(T, "tok", 5000)).toEqual({ acquired: true });
    // The holder takes it itself: no wake job while the lease is held.
    expect(await put(s, "c")).toMatchObject({ seq: 3, woke: false, active: true });
    expect((await s.probe(T)).inboxDepth).toBe(3);
    expect(await s.release(T, "tok")).toBe("busy");
    await s.take(T, "tok", "next", 0);
    await s.settle(T, "tok", [1, 2, 3], true);
    expect(await s.release(T, "tok")).toBe("released");
    expect(await put(s, "d")).toMatchObject({ seq: 4, woke: true, active: false });
  });

  it("takes by rule from the head only, and never out of order", async () => {
    const s = make();
    await put(s, "f1", "followUp");
    await put(s, "s2", "steer");
    await put(s, "s3", "steer");
    await put(s, "c4", "collect");
    await put(s, "c5", "collect");
    await s.append(T, { mode: "followUp", kind: "newSession" }, opts);
    await put(s, "s7", "steer");
    await s.acquire(T, "tok", 5000);
    const take = async (rule: "steer" | "followUp" | "next", debounce = 0) => {
      const r = await s.take(T, "tok", rule, debounce);
      return r.status === "taken" ? texts(r.items) : r.status;
    };
    expect(await take("steer")).toEqual([]);
    expect(await take("next")).toEqual(["f1"]);
    expect(await take("steer")).toEqual(["s2", "s3"]);
    expect(await take("followUp", 60_000)).toBe("wait");
    expect(await take("followUp")).toEqual(["c4", "c5"]);
    expect(await take("followUp")).toEqual([]);
    expect(await take("next")).toEqual(["/new"]);
    expect(await take("next")).toEqual(["s7"]);
    expect(texts(await s.inflight(T))).toEqual(["f1", "s2", "s3", "c4", "c5", "/new", "s7"]);
    expect(await s.take(T, "other", "next", 0)).toEqual({ status: "lost" });
  });

  it("settles: unsaved items return to the inbox head in order; saved ones are kept or removed", async () => {
    const s = make();
    for (const t of ["a", "b", "c", "d"]) await put(s, t, "steer");
    await s.acquire(T, "tok", 5000);
    await s.take(T, "tok", "next", 0);
    await put(s, "e");
    expect(await s.settle(T, "tok", [1, 2], false)).toBe(true);
    expect(texts(await s.inflight(T))).toEqual(["a", "b"]);
    const r = await s.take(T, "tok", "steer", 0);
    expect(r.status === "taken" && texts(r.items)).toEqual(["c", "d", "e"]);
    expect(await s.settle(T, "tok", [1, 2, 3, 4, 5], true)).toBe(true);
    expect(await s.inflight(T)).toEqual([]);
    expect(await s.settle(T, "other", [], true)).toBe(false);
  });

  it("releases only with an empty inbox and inflight list, and only for the holder", async () => {
    const s = make();
    await s.acquire(T, "tok", 5000);
    expect(await s.acquire(T, "other", 5000)).toMatchObject({ acquired: false, holder: "tok" });
    await put(s, "a");
    expect(await s.release(T, "tok")).toBe("busy");
    await s.take(T, "tok", "next", 0);
    expect(await s.release(T, "tok")).toBe("busy");
    await s.settle(T, "tok", [1], true);
    expect(await s.release(T, "other")).toBe("lost");
    expect(await s.renew(T, "other", 5000)).toBe(false);
    expect(await s.renew(T, "tok", 5000)).toBe(true);
    expect(await s.release(T, "tok")).toBe("released");
    expect(await s.acquire(T, "other", 5000)).toEqual({ acquired: true });
  });

  it("finish settles, takes the next items and releases only when nothing is left, for the holder only", async () => {
    const s = make();
    for (const t of ["a", "b"]) await put(s, t, "followUp");
    await s.acquire(T, "tok", 5000);
    await s.take(T, "tok", "next", 0);
    await put(s, "c", "steer");
    expect(await s.finish(T, "other", [1], 0, 99)).toEqual({ status: "lost" });
    expect(await s.contextTokens(T)).toBeUndefined();
    expect(texts(await s.inflight(T))).toEqual(["a"]);
    // "a" is saved and removed; "b" (followUp) is the next item.
    const kept = await s.finish(T, "tok", [1], 0, 4321);
    expect(kept.status === "kept" && kept.next.status === "taken" && texts(kept.next.items)).toEqual(["b"]);
    // The holder's context estimate is recorded in the same step (for `status`).
    expect(await s.contextTokens(T)).toBe(4321);
    // "b" is not saved: it goes back to the head and is taken again, before "c".
    const again = await s.finish(T, "tok", [], 0);
    expect(again.status === "kept" && again.next.status === "taken" && texts(again.next.items)).toEqual([
      "b",
    ]);
    const last = await s.finish(T, "tok", [2], 0);
    expect(last.status === "kept" && last.next.status === "taken" && texts(last.next.items)).toEqual(["c"]);
    expect(await s.finish(T, "tok", [3], 0)).toEqual({ status: "released" });
    expect(await s.inflight(T)).toEqual([]);
    expect(await s.acquire(T, "other", 5000)).toEqual({ acquired: true });
    // A collect group inside its window: settled, the lease kept, the wait returned.
    await put(s, "d", "collect");
    const wait = await s.finish(T, "other", [], 60_000);
    expect(wait.status === "kept" && wait.next.status).toBe("wait");
    expect(await s.release(T, "other")).toBe("busy");
  });

  it("a full inbox refuses the new item (policy new) or drops the oldest (policy old)", async () => {
    const s = make();
    const cap: AppendOptions = { cap: 2, dropPolicy: "new" };
    const add = (text: string, o: AppendOptions = cap) =>
      s.append(T, { mode: "followUp", kind: "message", message: inbound(T, text) }, o);
    await add("a");
    await add("b");
    expect(await add("c")).toEqual({ accepted: false, depth: 2, active: false });
    const r = await add("d", { cap: 2, dropPolicy: "old" });
    expect(r.accepted && texts(r.dropped)).toEqual(["a"]);
    expect(r).toMatchObject({ depth: 2 });
  });

  it("a wake acquire clears the wake flag and takes the lease with the control state; a take returns the control state too", async () => {
    const s = make();
    await put(s, "a");
    await s.stop(T);
    await put(s, "b");
    expect((await s.probe(T)).inboxDepth).toBe(1);
    const acquire = s.wakeAcquire.bind(s);
    expect(await acquire(T, "tok", 5000)).toMatchObject({
      acquired: true,
      control: { abortAt: 1, stops: 1 },
    });
    // The flag is clear: the next message would wake the thread again once the lease is gone.
    expect(await acquire(T, "tok", 5000)).toMatchObject({ acquired: true });
    const other = await acquire(T, "other", 5000);
    expect(other).toMatchObject({ acquired: false, holder: "tok" });
    expect(other.acquired === false && other.pttl).toBeGreaterThan(4000);
    // A stop after the take: the take's control state is read after its move, in the same step.
    const t = await s.take(T, "tok", "next", 0);
    expect(t).toMatchObject({ status: "taken", control: { abortAt: 1, stops: 1 } });
    expect(t.status === "taken" && texts(t.items)).toEqual(["b"]);
    await s.stop(T);
    expect(await s.take(T, "tok", "steer", 0)).toMatchObject({
      status: "taken",
      items: [],
      control: { abortAt: 2, stops: 2 },
    });
    expect(await s.take(T, "other", "steer", 0)).toEqual({ status: "lost" });
    await s.settle(T, "tok", [2], true);
    expect(await s.release(T, "tok")).toBe("released");
    expect(await put(s, "c")).toMatchObject({ woke: true });
  });

  it("a wake acquire that takes ahead returns the inflight list and, when it is empty, the first take by the next rule", async () => {
    const s = make();
    const acquire = s.wakeAcquire.bind(s);
    const ahead = { debounceMs: 0, journal: false };
    await put(s, "a");
    await put(s, "b");
    await put(s, "f", "followUp");
    const first = await acquire(T, "tok", 5000, ahead);
    expect(first).toMatchObject({ acquired: true, inflight: [], ahead: { status: "taken" } });
    expect(first.acquired && first.ahead?.status === "taken" && texts(first.ahead.items)).toEqual(["a", "b"]);
    // The holder dies with a and b inflight: its successor gets them back to recover, and nothing
    // is taken past them (older work first).
    await s.forceRelease(T, "tok");
    const next = await acquire(T, "tok2", 5000, ahead);
    expect(next.acquired && next.inflight && texts(next.inflight)).toEqual(["a", "b"]);
    expect(next.acquired && next.ahead).toBeUndefined();
    expect((await s.probe(T)).inboxDepth).toBe(1);
    // Not asked to take ahead: neither the list nor a take.
    await s.forceRelease(T, "tok2");
    const plain = await acquire(T, "tok3", 5000);
    expect(plain.acquired && [plain.inflight, plain.ahead]).toEqual([undefined, undefined]);
  });

  it("a wake acquire that takes ahead waits out a collect group like a take, and takes nothing else", async () => {
    const s = make();
    const acquire = s.wakeAcquire.bind(s);
    await put(s, "c1", "collect");
    const r = await acquire(T, "tok", 5000, { debounceMs: 1000, journal: false });
    expect(r).toMatchObject({ acquired: true, inflight: [], ahead: { status: "wait" } });
    expect(r.acquired && r.ahead?.status === "wait" && r.ahead.waitMs).toBeGreaterThan(0);
    expect(await s.inflight(T)).toEqual([]);
    expect((await s.probe(T)).inboxDepth).toBe(1);
  });

  it("stop and interrupt abort what was delivered before them and discard queued messages, keeping /new", async () => {
    const s = make();
    await put(s, "a", "followUp");
    await s.append(T, { mode: "followUp", kind: "newSession" }, opts);
    await put(s, "b", "followUp");
    const stop = await s.stop(T);
    expect(stop.abortAt).toBe(3);
    expect(texts(stop.discarded)).toEqual(["a", "b"]);
    expect(await s.readControl(T)).toMatchObject({ abortAt: 3, stops: 1 });
    await put(s, "c", "followUp");
    const r = await put(s, "d", "interrupt");
    expect(r.accepted && texts(r.dropped)).toEqual(["c"]);
    expect(await s.readControl(T)).toMatchObject({ abortAt: 4, stops: 2 });
    expect((await s.probe(T)).inboxDepth).toBe(2);
  });

  it("an event id is appended to its thread once: a retry gets the stored seq and adds nothing", async () => {
    const s = make();
    const m = inbound(T, "once", "web:event:retried");
    const first = await s.append(T, { mode: "followUp", kind: "message", message: m }, opts);
    await put(s, "next");
    const again = await s.append(T, { mode: "followUp", kind: "message", message: m }, opts);
    expect(first).toMatchObject({ accepted: true, seq: 1 });
    expect(again).toMatchObject({ accepted: true, seq: 1, repeated: true, woke: false, dropped: [] });
    expect((await s.probe(T)).inboxDepth).toBe(2);
  });

  it("an event refused by a full inbox is judged afresh when it comes again, and queued once there is room", async () => {
    const s = make();
    const full: AppendOptions = { cap: 1, dropPolicy: "new" };
    const m = inbound(T, "late", "web:event:refused");
    const item = { mode: "followUp" as const, kind: "message" as const, message: m };
    await put(s, "first");
    expect(await s.append(T, item, full)).toEqual({ accepted: false, depth: 1, active: false });
    await s.acquire(T, "tok", 5000);
    const taken = await s.take(T, "tok", "next", 0);
    expect(taken.status === "taken" && texts(taken.items)).toEqual(["first"]);
    await s.settle(T, "tok", [1], true);
    const queued = await s.append(T, item, full);
    expect(queued).toMatchObject({ accepted: true, depth: 1 });
    expect(queued.accepted && !queued.repeated).toBe(true);
    expect(await s.append(T, item, full)).toMatchObject({ accepted: true, repeated: true });
    expect((await s.probe(T)).inboxDepth).toBe(1);
  });
});

describe.each(redisBackends())("%s: a wake acquire and the render journal", (backend) => {
  it("takes nothing ahead while the journal owes the thread a render (a cut-off reply is finished first)", async () => {
    const redis = connectBackend(backend);
    redisConnections.push(redis);
    const keys = new RuntimeKeys(uniquePrefix());
    const s = new RedisThreadState(redis, keys, { clock });
    const journal = new RedisRenderJournal(redis, keys);
    await put(s, "a");
    await s.acquire(T, "tok", 5000);
    expect(await journal.put(T, "tok", "run-1", { text: "half an answer" })).toBe(true);
    await s.forceRelease(T, "tok");
    const owed = await s.wakeAcquire(T, "tok2", 5000, { debounceMs: 0, journal: true });
    expect(owed).toMatchObject({ acquired: true, inflight: [] });
    expect(owed.acquired && owed.ahead).toBeUndefined();
    expect((await s.probe(T)).inboxDepth).toBe(1);
    // Once the journal holds nothing for the thread, the first take goes with the lease.
    await journal.drop(T, "tok2", "run-1");
    await s.forceRelease(T, "tok2");
    const clear = await s.wakeAcquire(T, "tok3", 5000, { debounceMs: 0, journal: true });
    expect(clear.acquired && clear.ahead?.status === "taken" && texts(clear.ahead.items)).toEqual(["a"]);
  });
});

const claimStores: [string, () => EventClaimStore][] = [
  ["memory", () => new MemoryEventClaimStore({ clock })],
  ...redisBackends().map((backend): [string, () => EventClaimStore] => [
    backend,
    () => {
      const redis = connectBackend(backend);
      redisConnections.push(redis);
      return new RedisEventClaimStore(redis, new RuntimeKeys(uniquePrefix()), { clock });
    },
  ]),
];

describe.each(claimStores)("%s event claim store", (_name, make) => {
  it("event claims: one owner at a time until it expires; done is final; release is the owner's", async () => {
    const s = make();
    expect(await s.claimEvent("e1", "a#1", 1000)).toEqual({ status: "claimed" });
    expect(await s.claimEvent("e1", "b#1", 1000)).toEqual({ status: "held", remainingMs: 1000 });
    await clock.advance(600);
    expect(await s.renewEvent("e1", "a#1", 1000)).toBe(true);
    expect(await s.renewEvent("e1", "b#1", 1000)).toBe(false);
    await s.releaseEvent("e1", "b#1");
    expect(await s.claimEvent("e1", "b#1", 1000)).toEqual({ status: "held", remainingMs: 1000 });
    await s.confirmEvent("e1");
    expect(await s.claimEvent("e1", "b#2", 1000)).toEqual({ status: "done" });
    await clock.advance(10_000);
    expect(await s.claimEvent("e1", "b#3", 1000)).toEqual({ status: "done" });

    // A dead owner stops renewing: its claim expires and the next attempt takes it over.
    expect(await s.claimEvent("e2", "a#2", 1000)).toEqual({ status: "claimed" });
    await clock.advance(1000);
    expect(await s.claimEvent("e2", "b#4", 1000)).toEqual({ status: "claimed" });
    expect(await s.renewEvent("e2", "a#2", 1000)).toBe(false);
    await s.releaseEvent("e2", "b#4");
    expect(await s.claimEvent("e2", "c#1", 1000)).toEqual({ status: "claimed" });
  });
});
