/**
 * Many processes, one truth: three worker processes share 200 threads × 10 messages delivered with
 * random delays and modes through the echo model (some messages run a tool); one worker is
 * SIGKILLed mid-run. Every accepted message must be answered exactly once, each thread's messages
 * must reach its session in delivery order, and no two workers may ever hold one thread at once.
 *
 * A second test kills a worker inside a tool and checks what the next worker does with the dangling
 * call: an error result "interrupted: the worker stopped", then the answer.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RuntimeKeys } from "../../src/queue/keys.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { DeliveryMode } from "../../src/queue/types.js";
import { INTERRUPTED_TOOL_TEXT } from "../../src/queue/worker/recovery.js";
import { connectRedis, redisUrl, uniquePrefix } from "../support/redis.js";
import { ackedIds, idsIn } from "./support/echo-model.js";
import { inbound, sessionEntries, textOf, waitIdle } from "./support/harness.js";
import { findLeaseOverlaps, readLeaseLog, spawnWorker, type WorkerHandle } from "./support/processes.js";

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with its seed. */
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("multi-process Redis runtime", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup(ttl: number) {
    const dir = mkdtempSync(join(tmpdir(), "sb-mp-"));
    const leaseFile = join(dir, "leases.jsonl");
    const noticeFile = join(dir, "notices.jsonl");
    const prefix = uniquePrefix("sbmp");
    const redis = connectRedis();
    const store = new RedisSessionStore({ redis, prefix });
    const sinks = new RecordingSinks();
    // The gateway side: delivers, never starts a worker.
    const gateway = new RedisRuntime({ redis, prefix, store, sinks: sinks.factory, leaseTtlMs: ttl });
    const workers: WorkerHandle[] = [];
    const env = {
      REDIS_URL: redisUrl(),
      SB_PREFIX: prefix,
      SB_LEASE_FILE: leaseFile,
      SB_NOTICE_FILE: noticeFile,
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
      rmSync(dir, { recursive: true, force: true });
    });
    const start = async (name: string) => {
      const w = spawnWorker(name, env);
      workers.push(w);
      await w.ready;
      return w;
    };
    /** Message ids the workers told a thread they discarded. */
    const discardedByWorkers = (): string[] =>
      existsSync(noticeFile)
        ? readFileSync(noticeFile, "utf8")
            .split("\n")
            .filter(Boolean)
            .flatMap((l) => idsIn((JSON.parse(l) as { text: string }).text))
        : [];
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
              leases: readLeaseLog(leaseFile).filter((e) => e.threadKey === thread && e.type !== "renewed"),
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
    return { leaseFile, store, gateway, workers, start, discardedByWorkers, diagnose };
  }

  it("200 threads × 10 messages over 3 workers, one SIGKILLed: each answered once, in order, never two holders", async () => {
    const ttl = 2000;
    const { leaseFile, store, gateway, start, discardedByWorkers, diagnose } = setup(ttl);
    const workers = await Promise.all(["w0", "w1", "w2"].map(start));
    const seed = Number(process.env.SB_SEED ?? Date.now() % 100_000);
    const random = prng(seed);
    const threads = 200;
    const perThread = 10;
    // Weighted: 40% steer, 30% follow-up, 20% collect, 10% interrupt (an interrupt discards the queue).
    const modes: DeliveryMode[] = [
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
    const expected = new Map<string, string[]>();
    const discarded = new Set<string>();
    const eventToId = new Map<string, string>();
    let delivered = 0;
    let killed = false;

    const deliverThread = async (n: number) => {
      const thread = `web:mp-${n}`;
      const ids: string[] = [];
      expected.set(thread, ids);
      for (let j = 0; j < perThread; j++) {
        await sleep(Math.floor(random() * 25));
        const id = `t${n}.${j}`;
        const tool = random() < 0.3 ? ` tool:${20 + Math.floor(random() * 60)}` : "";
        const mode = modes[Math.floor(random() * modes.length)] as DeliveryMode;
        const message = inbound(thread, `[${id}] hello${tool}`);
        eventToId.set(message.eventId, id);
        const r = await gateway.deliver(message, mode);
        expect(r.status).toBe("queued");
        ids.push(id);
        if (r.status === "queued") for (const d of r.dropped) discarded.add(eventToId.get(d.eventId) ?? "?");
        delivered++;
        if (!killed && delivered >= (threads * perThread) / 3) {
          killed = true;
          workers[0]?.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: threads }, (_, n) => deliverThread(n)));

    // Wait until every accepted message has its answer (recovery after the kill included).
    let workerDiscards = new Set<string>();
    const isDiscarded = (id: string) => discarded.has(id) || workerDiscards.has(id);
    const answered = async (thread: string) => {
      const acks = (await sessionEntries(store, thread)).flatMap((e) =>
        e.type === "message" ? ackedIds(e.message) : [],
      );
      const want = (expected.get(thread) ?? []).filter((id) => !isDiscarded(id));
      return want.every((id) => acks.includes(id));
    };
    const deadline = Date.now() + 60_000;
    let pendingThreads = [...expected.keys()];
    while (pendingThreads.length > 0 && Date.now() < deadline) {
      workerDiscards = new Set(discardedByWorkers());
      const done = await Promise.all(pendingThreads.map(answered));
      pendingThreads = pendingThreads.filter((_, i) => !done[i]);
      if (pendingThreads.length > 0) await sleep(250);
    }
    const diagnosis = pendingThreads.length > 0 ? await diagnose(pendingThreads.slice(0, 3)) : "";
    expect(pendingThreads, `seed ${seed}: threads still unanswered\n${diagnosis}`).toEqual([]);
    for (const thread of expected.keys()) await waitIdle(gateway, thread, 15_000);
    workerDiscards = new Set(discardedByWorkers());

    for (const [thread, ids] of expected) {
      const entries = await sessionEntries(store, thread);
      const messages = entries.flatMap((e) => (e.type === "message" ? [e.message] : []));
      const userIds = messages.filter((m) => m.role === "user").flatMap((m) => idsIn(textOf(m)));
      const accepted = ids.filter((id) => !isDiscarded(id));
      // Each accepted message reached the session once, in delivery order; discarded ones never.
      expect(userIds, `seed ${seed}: ${thread}`).toEqual(accepted);
      // Each is acknowledged by exactly one finished answer.
      const acks = messages.flatMap(ackedIds);
      expect([...acks].sort(), `seed ${seed}: ${thread}`).toEqual([...accepted].sort());
    }
    expect(findLeaseOverlaps(readLeaseLog(leaseFile), ttl), `seed ${seed}`).toEqual([]);
    // The killed worker really held threads: recovery was exercised.
    expect(readLeaseLog(leaseFile).some((e) => e.worker === "w0" && e.type === "acquired")).toBe(true);
  }, 120_000);

  it("a worker killed inside a tool: the next one closes the call with an error result and answers", async () => {
    const ttl = 800;
    const { store, gateway, start } = setup(ttl);
    const first = await start("first");
    const thread = "web:mp-crash";
    await gateway.deliver(inbound(thread, "[t0.0] please tool:60000"));
    // Wait until the tool call is in the session: the worker is inside the tool now.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const entries = await sessionEntries(store, thread);
      if (entries.some((e) => e.type === "message" && e.message.role === "assistant")) break;
      if (Date.now() > deadline) throw new Error("the first worker never called the tool");
      await sleep(20);
    }
    first.child.kill("SIGKILL");
    await first.exited;
    await start("second");
    const until = Date.now() + 20_000;
    for (;;) {
      const messages = (await sessionEntries(store, thread)).flatMap((e) =>
        e.type === "message" ? [e.message] : [],
      );
      if (messages.some((m) => ackedIds(m).length > 0)) {
        expect(messages.map((m) => `${m.role}:${textOf(m)}`)).toEqual([
          "user:[t0.0] please tool:60000",
          "assistant:",
          `toolResult:${INTERRUPTED_TOOL_TEXT}`,
          "assistant:ack t0.0",
        ]);
        expect(messages[2]).toMatchObject({ isError: true });
        break;
      }
      if (Date.now() > until) throw new Error("the second worker never answered");
      await sleep(50);
    }
    await waitIdle(gateway, thread, 10_000);
  }, 60_000);
});
