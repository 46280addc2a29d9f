/**
 * The one lease mechanism, as a contract every store runs: the store side (`LeaseStore`: acquire,
 * renew and release by owner) and the holding loop (`holdLease`: renew every fifth of the TTL, lost
 * ⅔ of the TTL after the send time of the last confirmed renewal, or at once on a refusal), on a
 * manual clock to the millisecond, against the in-memory store and real Redis (one server and the
 * cluster). Redis answers in real time while the clock stands still, so each step waits for the
 * store's replies before moving the clock on.
 */
import { afterAll, describe, expect, it } from "vitest";
import { holdLease, type LeaseLoss } from "../../../src/queue/lease/hold.js";
import { RedisLeaseStore } from "../../../src/queue/lease/redis-store.js";
import { type LeaseStore, MemoryLeaseStore } from "../../../src/queue/lease/store.js";
import type { RedisClient } from "../../../src/queue/redis/client.js";
import { until } from "../../adapters/support/drive.js";
import { ManualClock } from "../../support/manual-clock.js";
import { connectBackend, redisBackends, uniquePrefix } from "../../support/redis.js";

/** Long enough that Redis (on its real clock) never expires a lease while a test runs. */
const TTL = 30_000;
const EVERY = TTL / 5;
const LOST_AFTER = (2 * TTL) / 3;

const connections: RedisClient[] = [];
afterAll(async () => {
  for (const r of connections) await r.quit();
});

interface Subject {
  clock: ManualClock;
  store: LeaseStore;
  /** A fresh lease name for this store. */
  name: () => string;
  /** Makes the lease run out now (the memory store's clock moves past it; Redis drops the key). */
  expire: (name: string) => Promise<void>;
}

const stores: [string, () => Subject][] = [
  [
    "memory",
    () => {
      // The store keeps time on a clock of its own, as Redis does.
      const storeClock = new ManualClock();
      let n = 0;
      return {
        clock: new ManualClock(),
        store: new MemoryLeaseStore(storeClock),
        name: () => `lease:${++n}`,
        expire: () => storeClock.advance(TTL),
      };
    },
  ],
  ...redisBackends().map((backend): [string, () => Subject] => [
    backend,
    () => {
      const redis = connectBackend(backend);
      connections.push(redis);
      const prefix = uniquePrefix();
      let n = 0;
      return {
        clock: new ManualClock(),
        store: new RedisLeaseStore(redis),
        name: () => `${prefix}{lease:${++n}}`,
        expire: async (name) => {
          await redis.pexpire(name, 0);
        },
      };
    },
  ]),
];

/** A store whose renewals can be made to hang or fail, counting what it was sent and what answered. */
class Watched {
  sent: number[] = [];
  answered = 0;
  mode: "answer" | "hang" | "fail" = "answer";
  private hanging = 0;

  constructor(
    private readonly s: Subject,
    readonly name: string,
    readonly owner: string,
  ) {}

  renew = (): Promise<boolean> => {
    this.sent.push(this.s.clock.now());
    if (this.mode === "hang") {
      this.hanging++;
      return new Promise<boolean>(() => {});
    }
    if (this.mode === "fail") {
      this.answered++;
      return Promise.reject(new Error("connection reset"));
    }
    return this.s.store.renew(this.name, this.owner, TTL).finally(() => {
      this.answered++;
    });
  };

  /** Waits until every renewal sent so far (that can answer) has answered. */
  settled(): Promise<void> {
    return until(() => this.answered >= this.sent.length - this.hanging, 30_000, "renewal replies");
  }
}

describe.each(stores)("lease store contract: %s", (_name, make) => {
  it("is taken only when free, renewed and released only by its owner", async () => {
    const s = make();
    const name = s.name();
    expect(await s.store.acquire(name, "a", TTL)).toEqual({ acquired: true });
    const other = await s.store.acquire(name, "b", TTL);
    expect(other).toMatchObject({ acquired: false, holder: "a" });
    if (other.acquired) throw new Error("unreachable");
    expect(other.pttl).toBeGreaterThan(0);
    expect(other.pttl).toBeLessThanOrEqual(TTL);
    expect(await s.store.renew(name, "b", TTL)).toBe(false);
    expect(await s.store.release(name, "b")).toBe(false);
    expect(await s.store.renew(name, "a", TTL)).toBe(true);
    // Its owner taking it again renews it.
    expect(await s.store.acquire(name, "a", TTL)).toEqual({ acquired: true });
    expect(await s.store.release(name, "a")).toBe(true);
    expect(await s.store.release(name, "a")).toBe(false);
    expect(await s.store.acquire(name, "b", TTL)).toEqual({ acquired: true });
  });

  it("a lease that ran out is taken by the next owner, and its old owner can no longer renew it", async () => {
    const s = make();
    const name = s.name();
    expect(await s.store.acquire(name, "a", TTL)).toEqual({ acquired: true });
    await s.expire(name);
    expect(await s.store.renew(name, "a", TTL)).toBe(false);
    expect(await s.store.acquire(name, "b", TTL)).toEqual({ acquired: true });
    expect(await s.store.renew(name, "a", TTL)).toBe(false);
    expect(await s.store.release(name, "a")).toBe(false);
    expect(await s.store.renew(name, "b", TTL)).toBe(true);
  });
});

describe.each(stores)("holding a lease (holdLease) on %s", (_name, make) => {
  async function held(o: { acquiredAgo?: number } = {}) {
    const s = make();
    const w = new Watched(s, s.name(), "a");
    const acquiredAt = s.clock.now() - (o.acquiredAgo ?? 0);
    expect(await s.store.acquire(w.name, w.owner, TTL)).toEqual({ acquired: true });
    const stop = new AbortController();
    const renewed: number[] = [];
    const errors: string[] = [];
    let lost: { loss: LeaseLoss; at: number } | undefined;
    const holding = holdLease({
      clock: s.clock,
      ttlMs: TTL,
      acquiredAt,
      signal: stop.signal,
      renew: () => w.renew(),
      onRenewed: (at) => renewed.push(at),
      onLost: (loss) => {
        lost = { loss, at: s.clock.now() };
      },
      onError: (e) => errors.push(e instanceof Error ? e.message : String(e)),
    });
    let ended: string | undefined;
    void holding.then((r) => {
      ended = r;
    });
    /** Moves the clock by `ms` in steps of at most `step`, letting the store answer after each. */
    const advance = async (ms: number, step = EVERY) => {
      for (let left = ms; left > 0; left -= step) {
        await s.clock.advance(Math.min(step, left));
        await w.settled();
      }
    };
    return {
      s,
      w,
      t0: acquiredAt,
      stop,
      renewed,
      errors,
      advance,
      lost: () => lost,
      ended: () => ended,
      holding,
    };
  }

  it("renews every fifth of the TTL from the acquire, reports each by its send time, and stops when told", async () => {
    const h = await held();
    await h.advance(10 * TTL);
    const ticks = Array.from({ length: 50 }, (_, i) => h.t0 + (i + 1) * EVERY);
    expect(h.w.sent).toEqual(ticks);
    expect(h.renewed).toEqual(ticks);
    expect(h.lost()).toBeUndefined();
    // The store still has it as the owner's.
    expect(await h.s.store.renew(h.w.name, "a", TTL)).toBe(true);
    h.stop.abort();
    expect(await h.holding).toBe("stopped");
    expect(h.s.clock.pending).toBe(0);
    await h.advance(TTL);
    expect(h.w.sent).toHaveLength(50);
    expect(h.lost()).toBeUndefined();
  });

  it("a refused renewal is a loss at once, and nothing is sent after", async () => {
    const h = await held();
    await h.advance(2 * EVERY);
    // The owner paused past its TTL and another took the lease.
    await h.s.expire(h.w.name);
    expect(await h.s.store.acquire(h.w.name, "b", TTL)).toEqual({ acquired: true });
    await h.advance(EVERY);
    await until(() => h.ended() !== undefined, 30_000, "the loss");
    expect(h.lost()).toEqual({ loss: { reason: "refused" }, at: h.t0 + 3 * EVERY });
    expect(await h.holding).toBe("lost");
    expect(h.s.clock.pending).toBe(0);
    await h.advance(TTL);
    expect(h.w.sent).toHaveLength(3);
  });

  it("renewals that never answer: lost ⅔ of the TTL after the last confirmed one was sent, not a millisecond earlier", async () => {
    const h = await held();
    await h.advance(3 * EVERY);
    const lastConfirmed = h.t0 + 3 * EVERY;
    expect(h.renewed.at(-1)).toBe(lastConfirmed);
    h.w.mode = "hang";
    await h.advance(lastConfirmed + LOST_AFTER - 1 - h.s.clock.now(), 1000);
    expect(h.lost()).toBeUndefined();
    // Renewals went on being sent while the earlier ones hung.
    expect(h.w.sent.length).toBeGreaterThan(4);
    await h.advance(1);
    expect(h.lost()).toEqual({
      loss: { reason: "unconfirmed", lastConfirmedAt: lastConfirmed },
      at: lastConfirmed + LOST_AFTER,
    });
    expect(await h.holding).toBe("lost");
    // The store keeps the lease for a whole TTL after that send: nobody else can have it yet.
    expect(await h.s.store.acquire(h.w.name, "b", TTL)).toMatchObject({ acquired: false, holder: "a" });
  });

  it("a failed renewal is reported and tried again; one confirmed later moves the deadline", async () => {
    const h = await held();
    h.w.mode = "fail";
    await h.advance(2 * EVERY);
    expect(h.errors).toEqual(["connection reset", "connection reset"]);
    expect(h.lost()).toBeUndefined();
    h.w.mode = "answer";
    await h.advance(EVERY);
    expect(h.renewed).toEqual([h.t0 + 3 * EVERY]);
    h.w.mode = "fail";
    await h.advance(h.t0 + 3 * EVERY + LOST_AFTER - 1 - h.s.clock.now(), 1000);
    expect(h.lost()).toBeUndefined();
    await h.advance(1);
    expect(h.lost()?.at).toBe(h.t0 + 3 * EVERY + LOST_AFTER);
    expect(await h.holding).toBe("lost");
  });

  it("counts from the acquire's send time: a slow acquire renews sooner and is lost sooner", async () => {
    const h = await held({ acquiredAgo: EVERY - 100 });
    h.w.mode = "hang";
    await h.advance(100);
    expect(h.w.sent).toEqual([h.t0 + EVERY]);
    await h.advance(h.t0 + LOST_AFTER - 1 - h.s.clock.now(), 1000);
    expect(h.lost()).toBeUndefined();
    await h.advance(1);
    expect(h.lost()?.at).toBe(h.t0 + LOST_AFTER);
  });

  it("a skipped renewal sends nothing and does not move the deadline", async () => {
    const s = make();
    const name = s.name();
    expect(await s.store.acquire(name, "a", TTL)).toEqual({ acquired: true });
    const t0 = s.clock.now();
    let lostAt: number | undefined;
    const holding = holdLease({
      clock: s.clock,
      ttlMs: TTL,
      acquiredAt: t0,
      signal: new AbortController().signal,
      renew: () => undefined,
      onLost: () => {
        lostAt = s.clock.now();
      },
    });
    await s.clock.advance(LOST_AFTER - 1);
    expect(lostAt).toBeUndefined();
    await s.clock.advance(1);
    expect(await holding).toBe("lost");
    expect(lostAt).toBe(t0 + LOST_AFTER);
  });

  it("a reply that arrives after the hold stopped is ignored: no renewal, no loss", async () => {
    const h = await held();
    let answer!: (ok: boolean) => void;
    h.w.renew = () => {
      h.w.sent.push(h.s.clock.now());
      return new Promise<boolean>((resolve) => {
        answer = resolve;
      });
    };
    await h.s.clock.advance(EVERY);
    expect(h.w.sent).toHaveLength(1);
    h.stop.abort();
    expect(await h.holding).toBe("stopped");
    answer(false);
    await h.s.clock.advance(TTL);
    expect(h.lost()).toBeUndefined();
    expect(h.renewed).toEqual([]);
  });
});
