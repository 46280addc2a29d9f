/**
 * Scheduled prompts while workers are SIGKILLed around the firing instants: an interval schedule
 * fires every 2 s over two worker processes, one of which is killed (no cleanup) every 1.3 s and
 * replaced, so kills land before, during and after fires and runs. Afterwards every occurrence
 * from the first to the last ran exactly once (the schedule's run count matches the instants, none
 * missed), its prompt is in the thread's session once, and each is answered. On one Redis server
 * and on the Redis Cluster.
 */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../../bench/lib/processes.js";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { BullScheduleTimer } from "../../src/queue/schedules/bull-timer.js";
import { RedisScheduleStore } from "../../src/queue/schedules/redis-store.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { backendEnv, connectBackend, redisBackends, uniquePrefix } from "../support/redis.js";
import { dropPrefix, report, sleep, waitFor } from "./support.js";

const SCRIPT = fileURLToPath(new URL("./schedule-worker.ts", import.meta.url));
const THREAD = "web:sched-fault";
const EVERY = 2000;

describe.each(redisBackends())("fault: workers SIGKILLed around scheduled runs (%s)", (backend) => {
  const redis = connectBackend(backend);
  const prefix = uniquePrefix("sbf-sched");
  const queuePrefix = backend === "cluster" ? `{${prefix}-q}` : `${prefix}q`;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill("SIGKILL")));
    await dropPrefix(redis, prefix);
    await dropPrefix(redis, queuePrefix);
    await dropPrefix(redis, `{${prefix}`);
    await redis.quit();
  });

  it("runs every occurrence once and answers each", async () => {
    const env = {
      ...backendEnv(backend),
      SB_PREFIX: prefix,
      SB_QUEUE_PREFIX: queuePrefix,
      SB_LEASE_TTL: "1000",
      SB_SCHEDULE_LOCK: "800",
    };
    const store = new RedisScheduleStore(redis, prefix);
    const timer = new BullScheduleTimer({ redis, prefix: queuePrefix, onError: () => {} });
    const startAt = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const record = {
      id: "faultsched",
      origin: "chat" as const,
      target: { platform: "web" as const, threadKey: THREAD, channelId: "sched-fault", isDirect: true },
      owner: { id: "u1" },
      spec: { kind: "every" as const, everyMs: EVERY, startAt, tz: "UTC" },
      prompt: "tick",
      description: "every 2 s",
      createdAt: Date.now(),
      paused: false,
      missed: 0,
      runs: 0,
    };
    await store.create(record, { perThread: 10, perUser: 10 });
    await timer.arm(record);
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(env, SCRIPT));
    await Promise.all(workers.map((w) => w.ready));

    let kills = 0;
    for (let k = 0; k < 10; k++) {
      await sleep(1300);
      const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
      const victim = alive[k % alive.length];
      if (!victim) continue;
      await victim.kill("SIGKILL");
      kills++;
      const fresh = spawnWorker(env, SCRIPT);
      workers.push(fresh);
      await fresh.ready;
    }
    // Stop firing, then let what was admitted finish.
    await store.setPaused(record.id, true);
    await timer.disarm(record.id);
    await timer.close();
    await waitFor(
      async () => {
        const r = await store.get(record.id);
        return r?.lastRun !== undefined && r.lastRun.status !== "queued";
      },
      60_000,
      "the last scheduled run to end",
    );
    const final = await store.get(record.id);
    if (!final) throw new Error("the schedule is gone");
    const sessions = new RedisSessionStore({ redis, prefix });
    const branch = await sessions.readBranch(THREAD);
    const messages = branch ? buildSessionContext(branch.entries, branch.leafId).messages : [];
    const prompts = messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes("tick"));
    const answered = messages.filter((m) => m.role === "assistant" && m.stopReason === "stop").length;
    const last = final.lastOccurrence ?? startAt;
    const instants = (last - startAt) / EVERY + 1;
    const counts = {
      kills,
      instants,
      runs: final.runs,
      missed: final.missed,
      prompts: prompts.length,
      answered,
    };
    report(`scheduled runs under worker SIGKILL (${backend})`, counts);
    expect(kills).toBeGreaterThanOrEqual(8);
    expect(instants).toBeGreaterThanOrEqual(5);
    expect(final.runs).toBe(instants);
    expect(final.missed).toBe(0);
    expect(prompts.length).toBe(instants);
    expect(answered).toBeGreaterThanOrEqual(instants);
    expect(messages.at(-1)?.role).toBe("assistant");
    await sessions.close();
  }, 180_000);
});
