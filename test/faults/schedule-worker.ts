/**
 * A worker process for the scheduled-prompts fault scenario (run with `node --import tsx`): a
 * `RedisRuntime` worker and a schedule service on BullMQ's job schedulers, over one Redis server or
 * a cluster, with a scripted model that answers every prompt with "done" after a short pause (so a
 * SIGKILL lands mid-run too). Prints `ready` once it takes jobs. SIGTERM stops it gracefully.
 *
 * Environment: REDIS_URL or REDIS_CLUSTER, SB_PREFIX, SB_QUEUE_PREFIX, SB_LEASE_TTL (ms),
 * SB_SCHEDULE_LOCK (ms: how soon a dead worker's schedule job is fired again).
 */
import { writeSync } from "node:fs";
import { systemClock } from "../../src/agent/clock.js";
import { silentLogger } from "../../src/agent/logger.js";
import { createRedisClient } from "../../src/queue/redis/client.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { BullScheduleTimer } from "../../src/queue/schedules/bull-timer.js";
import { RedisScheduleStore } from "../../src/queue/schedules/redis-store.js";
import { ScheduleService } from "../../src/queue/schedules/schedule-service.js";
import { DEFAULT_SCHEDULE_SETTINGS } from "../../src/queue/schedules/settings.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { RunObserver } from "../../src/queue/types.js";
import { resolveTestModel, scriptedFactory } from "../queue/support/harness.js";
import { ScriptedStream } from "../support/scripted-stream.js";

const prefix = process.env.SB_PREFIX;
const queuePrefix = process.env.SB_QUEUE_PREFIX;
if (!prefix || !queuePrefix) throw new Error("schedule-worker: set SB_PREFIX and SB_QUEUE_PREFIX.");
const cluster = process.env.REDIS_CLUSTER;
const redis = createRedisClient(
  cluster ? { cluster: cluster.split(",") } : { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
  { maxRetriesPerRequest: null },
);
redis.on("error", () => {});

const model = new ScriptedStream(async () => {
  await new Promise((r) => setTimeout(r, 150));
  return "done";
});
let observer: RunObserver | undefined;
const runtime = new RedisRuntime({
  redis,
  prefix,
  queuePrefix,
  store: new RedisSessionStore({ redis, prefix }),
  sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
  agentFactory: scriptedFactory(model),
  resolveModel: resolveTestModel,
  leaseTtlMs: Number(process.env.SB_LEASE_TTL ?? 1000),
  sweepIntervalMs: 500,
  runObserver: {
    runEnded: (r) => observer?.runEnded(r),
    renderFinished: (t, id) => observer?.renderFinished(t, id),
  },
});
const service = new ScheduleService({
  store: new RedisScheduleStore(redis, prefix),
  timer: new BullScheduleTimer({
    redis,
    prefix: queuePrefix,
    onError: () => {},
    lockDurationMs: Number(process.env.SB_SCHEDULE_LOCK ?? 1000),
  }),
  runtime,
  settings: DEFAULT_SCHEDULE_SETTINGS,
  clock: systemClock,
  logger: silentLogger,
});
observer = service;
await runtime.start();
await service.start();
writeSync(1, "ready\n");

process.on("SIGTERM", () => {
  void (async () => {
    await service.close();
    await runtime.stop({ graceMs: 1000 });
    redis.disconnect();
    process.exit(0);
  })();
});
