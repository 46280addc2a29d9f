/**
 * The tenure state machine on its own, over the in-memory thread state and a test clock: taking a
 * lease (and the takeover rule for a lease that looks stale), renewing it, releasing it, handing it
 * over, losing it, and the lease events that the overlap check relies on, to the millisecond.
 */
import { describe, expect, it } from "vitest";
import { MemoryThreadState } from "../../src/queue/embedded/memory-thread-state.js";
import type { ThreadState } from "../../src/queue/state/types.js";
import { type LeaseEvent, Tenure, type TenureWork } from "../../src/queue/worker/tenure.js";
import { ManualClock } from "../support/manual-clock.js";
import { inbound } from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

const TTL = 900;
const T = "web:tenure";

function world(o: { state?: (inner: MemoryThreadState) => ThreadState } = {}) {
  const clock = new ManualClock();
  const inner = new MemoryThreadState({ clock });
  const state = o.state?.(inner) ?? inner;
  const leases = new LeaseLog();
  const errors: string[] = [];
  const env = {
    state,
    clock,
    leaseTtlMs: TTL,
    collectDebounceMs: 100,
    onError: (e: unknown, context: string) =>
      errors.push(`${context}: ${e instanceof Error ? e.message : String(e)}`),
    onLease: leases.record,
  };
  const tenure = (token: string) => new Tenure(T, token, env);
  /** A tenure that holds the lease (renewed from its acquire on, until it ends). */
  const holding = async (token: string) => {
    const t = tenure(token);
    expect(await t.acquire({ rerun: false })).toBeDefined();
    return { t, renewing: t.renewals };
  };
  const at = (ms: number) => clock.now() + ms;
  return { clock, inner, state, leases, errors, tenure, holding, at };
}

const work = (): TenureWork & { controls: number } => ({
  aborted: false,
  controls: 0,
  onControl() {
    this.controls++;
  },
});

function brief(events: LeaseEvent[], t0: number): string[] {
  return events.map((e) => `${e.token} ${e.type}${e.force ? "(force)" : ""} @${e.at - t0}`);
}

describe("tenure: taking the lease", () => {
  it("takes a free lease; the event has the send and reply times", async () => {
    const w = world();
    const t0 = w.clock.now();
    const a = w.tenure("A");
    expect(a.state).toBe("idle");
    expect(await a.acquire({ rerun: false })).toBeDefined();
    expect(a.state).toBe("leased");
    expect(w.leases.events).toEqual([{ type: "acquired", threadKey: T, token: "A", at: t0, sentAt: t0 }]);
  });

  it("leaves a lease renewed within half its TTL to its holder at once", async () => {
    const w = world();
    await w.holding("A");
    await w.clock.advance(TTL / 3);
    const b = w.tenure("B");
    expect(await b.acquire({ rerun: false })).toBeUndefined();
    expect(b.state).toBe("declined");
    expect(w.leases.typesOf(T)).toEqual(["acquired", "declined"]);
  });

  it("a stalled job's rerun watches a dead holder's lease and takes it the millisecond it expires", async () => {
    const w = world();
    const t0 = w.clock.now();
    // A took the lease and died before its first renewal.
    expect(await w.inner.acquire(T, "A", TTL)).toEqual({ acquired: true });
    await w.clock.advance(100);
    const b = w.tenure("B");
    let got: boolean | undefined;
    void b.acquire({ rerun: true }).then((r) => {
      got = r !== undefined;
    });
    await w.clock.advance(TTL - 101);
    expect(got).toBeUndefined();
    await w.clock.advance(1);
    expect(got).toBe(true);
    expect(w.leases.events.at(-1)).toMatchObject({ type: "acquired", token: "B", at: t0 + TTL });
  });

  it("a rerun that sees the lease renewed leaves it to its live holder", async () => {
    const w = world();
    const { t: a } = await w.holding("A");
    const b = w.tenure("B");
    let got: boolean | undefined;
    void b.acquire({ rerun: true }).then((r) => {
      got = r !== undefined;
    });
    // A renews at TTL/5; B's next look (every TTL/4) sees the expiry moved.
    await w.clock.advance(TTL / 2);
    expect(got).toBe(false);
    expect(a.state).toBe("leased");
    a.lose();
  });

  it("a lease that looks stale to a fresh job is watched too, and a stop ends the watch", async () => {
    const w = world();
    expect(await w.inner.acquire(T, "A", TTL)).toEqual({ acquired: true }); // then A dies
    await w.clock.advance(TTL / 2 + 1);
    const stopping = new AbortController();
    const b = w.tenure("B");
    const watching = b.acquire({ rerun: false, signal: stopping.signal });
    await w.clock.sleeping(TTL / 4);
    stopping.abort();
    expect(await watching).toBeUndefined();
    expect(b.state).toBe("declined");
  });
});

describe("tenure: keeping the lease", () => {
  it("renews every fifth of the TTL for as long as it holds, on the clock", async () => {
    const w = world();
    const t0 = w.clock.now();
    const { t, renewing } = await w.holding("A");
    await w.clock.advance(10 * TTL);
    expect(t.state).toBe("leased");
    const renewals = w.leases.events.filter((e) => e.type === "renewed").map((e) => e.at - t0);
    expect(renewals).toEqual(Array.from({ length: 50 }, (_, i) => (i + 1) * (TTL / 5)));
    expect(await w.state.renew(T, "A", TTL)).toBe(true);
    t.lose();
    await renewing;
  });

  it("a refused renewal is a loss: the work is stopped and renewals end", async () => {
    const w = world();
    const { t, renewing } = await w.holding("A");
    // Someone else holds the lease now (A paused past its TTL and B took it).
    await w.inner.forceRelease(T, "A");
    await w.inner.acquire(T, "B", TTL);
    await w.clock.advance(TTL / 5);
    expect(t.state).toBe("lost");
    expect(t.stopSignal.aborted).toBe(true);
    expect(t.endSignal.aborted).toBe(true);
    await renewing;
    expect(w.clock.pending).toBe(0);
    expect(w.leases.typesOf(T, true)).toEqual(["acquired", "lost"]);
  });

  it("without a confirmed renewal for ⅔ of the TTL the tenure counts itself lost", async () => {
    const w = world({
      state: (inner) => {
        const s: ThreadState = Object.create(inner);
        s.renew = () => new Promise(() => {}); // the renewals never come back
        return s;
      },
    });
    const t0 = w.clock.now();
    const { t } = await w.holding("A");
    await w.clock.advance((2 * TTL) / 3 - 1);
    expect(t.state).toBe("leased");
    await w.clock.advance(1);
    expect(t.state).toBe("lost");
    expect(w.leases.events.at(-1)).toMatchObject({ type: "lost", at: t0 + (2 * TTL) / 3 });
  });
});

describe("tenure: giving the lease up", () => {
  it("releases only with nothing queued: busy keeps it (reported as kept), empty deletes it", async () => {
    const w = world();
    const t0 = w.clock.now();
    const { t, renewing } = await w.holding("A");
    await w.inner.append(
      T,
      { mode: "steer", kind: "message", message: inbound(T, "hi") },
      { cap: 9, dropPolicy: "new" },
    );
    await w.clock.advance(50);
    expect(await t.release()).toBe("busy");
    expect(t.state).toBe("leased");
    const taken = await t.take("next");
    expect(taken).toMatchObject({ status: "taken", items: [{ seq: 1 }] });
    t.begin(work());
    t.endWork();
    expect(t.state).toBe("settling");
    expect(await t.settle([1], true)).toBe(true);
    t.settled();
    await w.clock.advance(50);
    expect(await t.release()).toBe("released");
    expect(t.state).toBe("released");
    expect(await w.inner.acquire(T, "B", TTL)).toEqual({ acquired: true });
    await renewing;
    expect(brief(w.leases.events, t0)).toEqual([
      "A acquired @0",
      "A releasing @50",
      "A kept @50",
      "A releasing @100",
      "A released @100",
    ]);
  });

  it("reports a release before it is sent (write-ahead), so a log outlives a crash on the wire", async () => {
    let loggedBeforeSend: string | undefined;
    const w = world({
      state: (inner) => {
        const s: ThreadState = Object.create(inner);
        s.release = (threadKey, token) => {
          loggedBeforeSend = w.leases.events.at(-1)?.type;
          return inner.release(threadKey, token);
        };
        return s;
      },
    });
    const { t } = await w.holding("A");
    await t.release();
    expect(loggedBeforeSend).toBe("releasing");
  });

  it("hands over on shutdown: the work runs to its checkpoint under a renewed lease, then the lease is deleted", async () => {
    const w = world();
    const t0 = w.clock.now();
    const { t, renewing } = await w.holding("A");
    const job = work();
    t.begin(job);
    t.handOff("checkpoint");
    expect(t.state).toBe("handingOff");
    expect(t.active).toBe(false);
    expect(t.stopSignal.aborted).toBe(false);
    // The run takes a while to reach its checkpoint; the lease is kept meanwhile.
    await w.clock.advance(TTL);
    expect(w.leases.typesOf(T, true).filter((x) => x === "renewed")).toHaveLength(5);
    t.stop(); // the checkpoint
    expect(t.stopSignal.aborted).toBe(true);
    t.endWork();
    expect(t.state).toBe("handingOff");
    expect(await t.settle([], false)).toBe(true);
    expect(await t.end()).toBe("handedOff");
    await renewing;
    expect(await w.inner.acquire(T, "B", TTL)).toEqual({ acquired: true });
    expect(brief(w.leases.events, t0).filter((l) => !l.includes("renewed"))).toEqual([
      "A acquired @0",
      `A releasing(force) @${TTL}`,
      `A handoff @${TTL}`,
    ]);
  });

  it("a hand-over with no work in progress stops at once", async () => {
    const w = world();
    const { t } = await w.holding("A");
    t.handOff("checkpoint");
    expect(t.stopSignal.aborted).toBe(true);
    expect(t.mayBegin).toBe(false);
    expect(await t.end()).toBe("handedOff");
  });

  it("a failed tenure deletes its lease so the thread can be tried again", async () => {
    const w = world();
    const { t, renewing } = await w.holding("A");
    t.fail(new Error("boom"), "working on the thread");
    expect(t.state).toBe("failed");
    expect(await t.end()).toBe("failed");
    await renewing;
    expect(w.errors).toEqual(["working on the thread: boom"]);
    expect(w.leases.typesOf(T)).toEqual(["acquired", "failed", "releasing"]);
    expect(await w.inner.acquire(T, "B", TTL)).toEqual({ acquired: true });
  });
});

describe("tenure: the machine", () => {
  it("ignores every transition once ended: a refusal after the release is not a loss", async () => {
    const w = world();
    const { t } = await w.holding("A");
    expect(await t.release()).toBe("released");
    t.lose();
    t.handOff("now");
    expect(t.state).toBe("released");
    expect(w.leases.typesOf(T)).toEqual(["acquired", "releasing", "released"]);
  });

  it("a transition outside the table is a bug and says so", async () => {
    const w = world();
    const { t } = await w.holding("A");
    t.begin(work());
    expect(() => t.begin(work())).toThrow(/no transition running → running/);
    t.lose();
  });

  it("a take or settle that finds the lease gone moves the tenure to lost", async () => {
    const w = world();
    const { t } = await w.holding("A");
    await w.inner.forceRelease(T, "A");
    expect(await t.take("next")).toEqual({ status: "lost" });
    expect(t.state).toBe("lost");
    expect(t.ended).toBe(true);
  });
});
