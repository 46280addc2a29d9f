/**
 * Redis restarted mid-load: a Redis with AOF (`appendfsync always`) of our own is SIGKILLed while a
 * gateway (this process) delivers and a worker process runs threads, then started again on the same
 * port after a second. Nobody restarts the gateway or the worker: they reconnect by themselves.
 * A delivery that fails is retried with the same event id, as a platform retries an unacknowledged
 * event. Every message the gateway accepted must be answered, exactly once and in order.
 */
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../../bench/lib/processes.js";
import { RedisServer } from "../../bench/lib/redis-server.js";
import { benchMessage } from "../../bench/sections/scaleout.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { auditSessions, report, sleep, waitFor } from "./support.js";

describe("fault: Redis restart with AOF", () => {
  let server: RedisServer | undefined;
  let worker: WorkerProcess | undefined;
  afterAll(async () => {
    await worker?.kill("SIGKILL");
    await server?.stop();
  });

  it("loses nothing and everyone reconnects", async () => {
    server = await RedisServer.start({ aof: true });
    const prefix = "sbf-restart:";
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    redis.on("error", () => {});
    const store = new RedisSessionStore({ redis, prefix });
    const errors: string[] = [];
    const gateway = new RedisRuntime({
      redis,
      prefix,
      store,
      sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
      leaseTtlMs: 2000,
      onError: (e) => errors.push(e instanceof Error ? e.message : String(e)),
    });
    worker = spawnWorker({ REDIS_URL: server.url, SB_PREFIX: prefix, SB_LEASE_TTL: "2000", SB_SWEEP: "500" });
    await worker.ready;

    const threads = 40;
    const perThread = 8;
    const accepted = new Map<string, number[]>();
    let retries = 0;
    let duplicateAnswers = 0;
    let restartedAt = 0;
    let slowestDeliverMs = 0;
    const outage = (async () => {
      await sleep(1500);
      await server?.kill("SIGKILL");
      await sleep(1000);
      await server?.restart();
      restartedAt = Date.now();
    })();
    let tag = 0;
    for (let round = 0; round < perThread; round++) {
      await Promise.all(
        Array.from({ length: threads }, async (_, t) => {
          const threadKey = `telegram:restart:${t}`;
          const n = ++tag;
          const message = benchMessage(threadKey, `restart-${n}`, `msg [m${n}] tokens=5 ms=100`);
          const t0 = Date.now();
          for (;;) {
            try {
              const r = await Promise.race([
                gateway.deliver(message),
                sleep(5000).then(() => Promise.reject(new Error("deliver timed out"))),
              ]);
              if (r.status === "duplicate") duplicateAnswers++;
              slowestDeliverMs = Math.max(slowestDeliverMs, Date.now() - t0);
              accepted.set(threadKey, [...(accepted.get(threadKey) ?? []), n]);
              return;
            } catch {
              retries++;
              await sleep(200);
            }
          }
        }),
      );
      await sleep(400);
    }
    await outage;
    await waitFor(
      async () => {
        for (const t of accepted.keys()) {
          const s = await gateway.status(t);
          if (s.active || s.inboxDepth > 0) return false;
        }
        return true;
      },
      60_000,
      "every thread to go idle after the restart",
    );
    const audit = await auditSessions(store, accepted);
    const workerAlive = worker.child.exitCode === null;
    report("Redis SIGKILL + restart (AOF always)", {
      ...audit,
      deliverRetries: retries,
      duplicateOnRetry: duplicateAnswers,
      workerAlive,
      slowestDeliverMs,
      idleAfterRestartMs: Date.now() - restartedAt,
    });
    await gateway.stop({ graceMs: 0 });
    await redis.quit().catch(() => {});
    expect(workerAlive).toBe(true);
    // Some deliveries were held up by the outage (so it happened under load) and still got through.
    expect(slowestDeliverMs).toBeGreaterThan(500);
    expect(audit.lost).toBe(0);
    expect(audit.unanswered).toBe(0);
    expect(audit.duplicated).toBe(0);
    expect(audit.outOfOrder).toBe(0);
  });
});
