/**
 * Workers SIGKILLed repeatedly under load: two worker processes run 80 threads while messages keep
 * arriving; every 1.2 s one worker is killed (SIGKILL, no cleanup) and a fresh one started. Every
 * accepted message must reach its thread's session exactly once, in delivery order, and every
 * thread must end answered. On one Redis server and on the Redis Cluster.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../../bench/lib/processes.js";
import { benchMessage } from "../../bench/sections/scaleout.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { defaultQueuePrefix } from "../../src/redis-keys.js";
import { backendEnv, connectBackend, redisBackends, uniquePrefix } from "../support/redis.js";
import { auditSessions, dropPrefix, report, sleep, waitFor } from "./support.js";

describe.each(redisBackends())("fault: worker SIGKILL under load (%s)", (backend) => {
  const redis = connectBackend(backend);
  const prefix = uniquePrefix("sbf-kill");
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill("SIGKILL")));
    await dropPrefix(redis, prefix);
    await dropPrefix(redis, defaultQueuePrefix(prefix, true));
    await redis.quit();
  });

  it("loses, duplicates and reorders nothing", async () => {
    const env = {
      ...backendEnv(backend),
      SB_PREFIX: prefix,
      SB_LEASE_TTL: "1000",
      SB_SWEEP: "500",
      SB_CONCURRENCY: "40",
    };
    const store = new RedisSessionStore({ redis, prefix });
    const gateway = new RedisRuntime({
      redis,
      prefix,
      store,
      sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
      leaseTtlMs: 1000,
    });
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(env));
    await Promise.all(workers.map((w) => w.ready));

    const threads = 80;
    const perThread = 6;
    const accepted = new Map<string, number[]>();
    let tag = 0;
    let kills = 0;
    let refused = 0;
    const killer = (async () => {
      for (let k = 0; k < 4; k++) {
        await sleep(1200);
        const victim = workers.find((w) => w.child.exitCode === null && w.child.signalCode === null);
        if (!victim) continue;
        await victim.kill("SIGKILL");
        kills++;
        const fresh = spawnWorker(env);
        workers.push(fresh);
        await fresh.ready;
      }
    })();
    for (let round = 0; round < perThread; round++) {
      for (let t = 0; t < threads; t++) {
        const threadKey = `telegram:kill:${t}`;
        const n = ++tag;
        // Replies stream for ~300 ms, so kills land mid-run.
        const r = await gateway.deliver(benchMessage(threadKey, `kill-${n}`, `msg [m${n}] tokens=10 ms=300`));
        if (r.status === "queued") accepted.set(threadKey, [...(accepted.get(threadKey) ?? []), n]);
        else refused++;
      }
      await sleep(700);
    }
    await killer;
    await waitFor(
      async () => {
        for (const t of accepted.keys()) {
          const s = await gateway.status(t);
          if (s.active || s.inboxDepth > 0) return false;
        }
        return true;
      },
      45_000,
      "every thread to go idle",
    );
    const audit = await auditSessions(store, accepted);
    report(`worker SIGKILL ×4 under load (${backend})`, { ...audit, kills, refused });
    await gateway.stop({ graceMs: 0 });
    expect(kills).toBe(4);
    expect(refused).toBe(0);
    expect(audit).toMatchObject({ lost: 0, duplicated: 0, outOfOrder: 0, unanswered: 0 });
  });
});
