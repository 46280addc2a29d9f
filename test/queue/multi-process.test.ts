/**
 * Many processes, one truth: three worker processes share 200 threads × 10 messages delivered in
 * bursts with random modes through the echo model (some messages run a tool); one worker is killed
 * with SIGKILL. Every accepted message must be answered exactly once, each thread's messages must
 * reach its session in delivery order, and no two workers may ever hold one thread at once.
 *
 * Replaying a seed: everything this test decides comes from `SB_SEED` (printed with every
 * failure): the order, mode and tool time of every delivery, which worker dies and where. A
 * worker dies either at a step of its own protocol (right after it sends its n-th RELEASE, TAKE,
 * SETTLE, session append, renewal or acquire: the step reaches Redis, its reply is never seen) or
 * when the test kills it after its k-th delivery. What the operating system decides (how the four
 * processes interleave) is not replayed; run a seed repeatedly under load to reproduce a race:
 *
 *   SB_SEED=88062 npx vitest run test/queue/multi-process.test.ts
 *
 * The test waits on the workers' own events (one JSON line each on stdout), never on time.
 *
 * A second test kills a worker inside a tool and checks what the next worker does with the dangling
 * call: an error result "interrupted: the worker stopped", then the answer.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { DeliveryMode } from "../../src/queue/types.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/queue/worker/recovery.js";
import { RuntimeKeys } from "../../src/redis-keys.js";
import { connectRedis, redisUrl, uniquePrefix } from "../support/redis.js";
import { ackedIds, idsIn } from "./support/echo-model.js";
import { inbound, sessionEntries, textOf } from "./support/harness.js";
import { findLeaseOverlaps } from "./support/lease-overlaps.js";
import { spawnWorker, type WorkerEvent, WorkerEvents, type WorkerHandle } from "./support/processes.js";

/** A small seeded PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Weighted: 40% steer, 30% follow-up, 20% collect, 10% interrupt (an interrupt discards the queue). */
const MODES: DeliveryMode[] = [
  "steer",
  "steer",
  "steer",
  "steer",
  "followUp",
  "followUp",
  "followUp",
  "collect",
  "collect",
  "interrupt",
];

/**
 * The protocol steps a worker can be made to die right after (`settle` and `release` include the
 * thread state's `finish`, which settles, takes and releases in one step at the end of a run).
 */
const DEATH_STEPS = ["release", "take", "settle", "append", "renew", "acquire"] as const;

interface Delivery {
  thread: string;
  id: string;
  text: string;
  mode: DeliveryMode;
}

interface Plan {
  deliveries: Delivery[];
  /** w0 dies at its own protocol step (`SB_DIE_AT`), or the test kills it after delivery `afterDelivery`. */
  death: { step: (typeof DEATH_STEPS)[number]; n: number } | { afterDelivery: number };
}

/** Everything the test decides, from the seed alone. */
function plan(seed: number, threads: number, perThread: number): Plan {
  const random = prng(seed);
  const sent = new Array<number>(threads).fill(0);
  const open = Array.from({ length: threads }, (_, n) => n);
  const deliveries: Delivery[] = [];
  while (open.length > 0) {
    // A burst of 1-4 messages to one thread, so that many arrive while it runs.
    const at = Math.floor(random() * open.length);
    const n = open[at] as number;
    const burst = 1 + Math.floor(random() * 4);
    for (let b = 0; b < burst && (sent[n] as number) < perThread; b++) {
      const j = sent[n] as number;
      sent[n] = j + 1;
      const id = `t${n}.${j}`;
      const tool = random() < 0.3 ? ` tool:${20 + Math.floor(random() * 60)}` : "";
      const mode = MODES[Math.floor(random() * MODES.length)] as DeliveryMode;
      deliveries.push({ thread: `web:mp-${n}`, id, text: `[${id}] hello${tool}`, mode });
    }
    if ((sent[n] as number) >= perThread) open.splice(at, 1);
  }
  let death: Plan["death"];
  if (random() < 0.75) {
    const step = DEATH_STEPS[Math.floor(random() * DEATH_STEPS.length)] as (typeof DEATH_STEPS)[number];
    // Renewals are rare (most tenures are shorter than a third of the TTL): die at an early one.
    death = { step, n: step === "renew" ? 1 + Math.floor(random() * 3) : 5 + Math.floor(random() * 40) };
  } else {
    death = { afterDelivery: Math.floor(deliveries.length / 6 + random() * (deliveries.length / 2)) };
  }
  return { deliveries, death };
}

describe("multi-process Redis runtime", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup(ttl: number) {
    const prefix = uniquePrefix("sbmp");
    const redis = connectRedis();
    const store = new RedisSessionStore({ redis, prefix });
    const sinks = new RecordingSinks();
    // The gateway side: delivers, never starts a worker.
    const gateway = new RedisRuntime({ redis, prefix, store, sinks: sinks.factory, leaseTtlMs: ttl });
    const events = new WorkerEvents();
    const workers: WorkerHandle[] = [];
    const env = {
      REDIS_URL: redisUrl(),
      SB_PREFIX: prefix,
      SB_LEASE_TTL: String(ttl),
      SB_CONCURRENCY: "20",
      SB_SWEEP: "1000",
    };
    cleanups.push(async () => {
      for (const w of workers)
        if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
      await gateway.stop();
      await redis.quit();
    });
    const start = async (name: string, extra: Record<string, string> = {}) => {
      const w = spawnWorker(name, { ...env, ...extra }, events);
      workers.push(w);
      await w.ready;
      return w;
    };
    /** The runtime state, session and lease history of some threads, for a failure message. */
    const diagnose = async (threads: string[]): Promise<string> => {
      const keys = new RuntimeKeys(prefix);
      const out: string[] = [];
      for (const thread of threads) {
        const k = keys.thread(thread);
        const entries = await sessionEntries(store, thread);
        out.push(
          JSON.stringify(
            {
              thread,
              inbox: await redis.lrange(k.inbox, 0, -1),
              inflight: await redis.lrange(k.inflight, 0, -1),
              lease: await redis.get(k.lease),
              wake: await redis.get(k.wake),
              control: await redis.hgetall(k.control),
              entries: entries.map((e) =>
                e.type === "message"
                  ? `${e.id} ${e.message.role}: ${textOf(e.message)}`
                  : `${e.id} ${e.type}`,
              ),
              events: events.all.filter((e) => e.threadKey === thread && e.type !== "renewed"),
            },
            null,
            1,
          ),
        );
      }
      return [...out, ...workers.map((w) => `${w.name} stderr: ${w.stderr.join("").slice(0, 2000)}`)].join(
        "\n",
      );
    };
    return { prefix, redis, store, gateway, events, workers, start, diagnose };
  }

  it("200 threads × 10 messages over 3 workers, one SIGKILLed: each answered once, in order, never two holders", async () => {
    const ttl = 2000;
    const seed = Number(process.env.SB_SEED ?? Math.floor(Math.random() * 100_000));
    const { deliveries, death } = plan(seed, 200, 10);
    const { prefix, redis, store, gateway, events, start, diagnose } = setup(ttl);
    const dieAt = "step" in death ? { SB_DIE_AT: `${death.step}:${death.n}` } : undefined;
    const workers = await Promise.all([start("w0", dieAt), start("w1"), start("w2")]);
    const w0Exit = workers[0]?.exited;
    const where = `seed ${seed}, w0 dies ${"step" in death ? `after its ${death.step} #${death.n}` : `after delivery ${death.afterDelivery}`}`;

    const expected = new Map<string, string[]>();
    for (const d of deliveries) expected.set(d.thread, [...(expected.get(d.thread) ?? []), d.id]);
    const discarded = new Set<string>();
    const eventToId = new Map<string, string>();
    const workerDiscards = () =>
      new Set(events.all.flatMap((e) => (e.type === "notice" ? idsIn(String(e.text)) : [])));

    // A thread is done when every message not discarded has its answer in the session. It is
    // checked once all deliveries are made, then again after each event of its workers.
    let deliveriesDone = false;
    const pending = new Set(expected.keys());
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const checking = new Map<string, Promise<void>>();
    const check = (thread: string) => {
      if (!deliveriesDone || !pending.has(thread)) return;
      const previous = checking.get(thread) ?? Promise.resolve();
      const next = previous.then(async () => {
        if (!pending.has(thread)) return;
        const gone = workerDiscards();
        const want = (expected.get(thread) ?? []).filter((id) => !discarded.has(id) && !gone.has(id));
        const acks = (await sessionEntries(store, thread)).flatMap((e) =>
          e.type === "message" ? ackedIds(e.message) : [],
        );
        if (!want.every((id) => acks.includes(id))) return;
        pending.delete(thread);
        if (pending.size === 0) allDone();
      });
      checking.set(thread, next);
    };
    const stop = events.on((e: WorkerEvent) => {
      if (e.threadKey && (e.type === "released" || e.type === "notice")) check(e.threadKey);
    });
    cleanups.push(stop);

    for (const [i, d] of deliveries.entries()) {
      const message = inbound(d.thread, d.text);
      eventToId.set(message.eventId, d.id);
      const r = await gateway.deliver(message, d.mode);
      expect(r.status, where).toBe("queued");
      if (r.status === "queued") for (const x of r.dropped) discarded.add(eventToId.get(x.eventId) ?? "?");
      if ("afterDelivery" in death && i + 1 === death.afterDelivery) workers[0]?.child.kill("SIGKILL");
    }
    deliveriesDone = true;
    for (const thread of expected.keys()) check(thread);
    // On a timeout, say which threads are stuck and why (this runs before the connections close).
    cleanups.push(async () => {
      if (pending.size > 0)
        console.error(`${where}: threads still unanswered\n${await diagnose([...pending].slice(0, 3))}`);
    });
    await done;

    // w0 died where the seed said, after holding threads: recovery was exercised.
    if ("step" in death)
      expect(
        events.all.find((e) => e.type === "dying"),
        `${where}: w0 never got there`,
      ).toMatchObject({
        worker: "w0",
        step: death.step,
      });
    expect(await w0Exit, where).toBe("SIGKILL");
    expect(
      events.leases().some((e) => e.worker === "w0" && e.type === "acquired"),
      where,
    ).toBe(true);

    const gone = workerDiscards();
    const keys = new RuntimeKeys(prefix);
    for (const [thread, ids] of expected) {
      const entries = await sessionEntries(store, thread);
      const messages = entries.flatMap((e) => (e.type === "message" ? [e.message] : []));
      const userIds = messages.filter((m) => m.role === "user").flatMap((m) => idsIn(textOf(m)));
      const accepted = ids.filter((id) => !discarded.has(id) && !gone.has(id));
      // Each accepted message reached the session once, in delivery order; discarded ones never.
      expect(userIds, `${where}: ${thread}`).toEqual(accepted);
      // Each is acknowledged by exactly one finished answer.
      const acks = messages.flatMap(ackedIds);
      expect([...acks].sort(), `${where}: ${thread}`).toEqual([...accepted].sort());
      // Nothing is left queued or in flight.
      const k = keys.thread(thread);
      expect([await redis.llen(k.inbox), await redis.llen(k.inflight)], `${where}: ${thread}`).toEqual([
        0, 0,
      ]);
    }
    expect(findLeaseOverlaps(events.leases(), ttl), where).toEqual([]);
  }, 240_000);

  it("a worker killed inside a tool: the next one closes the call with an error result and answers", async () => {
    const ttl = 800;
    const { store, gateway, events, start } = setup(ttl);
    const first = await start("first");
    const thread = "web:mp-crash";
    await gateway.deliver(inbound(thread, "[t0.0] please tool:60000"));
    // The tool call is in the session and the tool runs: kill the worker now.
    await events.seen((e) => e.worker === "first" && e.type === "saved" && e.role === "assistant");
    await events.seen((e) => e.worker === "first" && e.type === "tool");
    first.child.kill("SIGKILL");
    await first.exited;
    await start("second");
    await events.seen((e) => e.worker === "second" && e.type === "released" && e.threadKey === thread);
    const messages = (await sessionEntries(store, thread)).flatMap((e) =>
      e.type === "message" ? [e.message] : [],
    );
    expect(messages.map((m) => `${m.role}:${textOf(m)}`)).toEqual([
      "user:[t0.0] please tool:60000",
      "assistant:",
      `toolResult:${INTERRUPTED_TOOL_TEXT}`,
      "assistant:ack t0.0",
    ]);
    expect(messages[2]).toMatchObject({ isError: true });
  }, 180_000);
});
