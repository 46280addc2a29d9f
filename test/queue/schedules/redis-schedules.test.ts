/**
 * Scheduled prompts in Redis mode, two worker processes' worth in one test (each its own
 * connections, runtime, schedule service and BullMQ timer over one Redis): every occurrence of an
 * interval schedule runs once between them, its answer recorded as shown, and a schedule made
 * through one process is listed, paused and removed through the other. BullMQ keeps real time, so
 * the interval is short and the test waits for outcomes, bounded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/agent/clock.js";
import { silentLogger } from "../../../src/agent/logger.js";
import { RecordingSinks } from "../../../src/queue/recording-sink.js";
import { RedisRuntime } from "../../../src/queue/redis/redis-runtime.js";
import { BullScheduleTimer } from "../../../src/queue/schedules/bull-timer.js";
import { RedisScheduleStore } from "../../../src/queue/schedules/redis-store.js";
import { ScheduleService } from "../../../src/queue/schedules/schedule-service.js";
import { DEFAULT_SCHEDULE_SETTINGS } from "../../../src/queue/schedules/settings.js";
import { RedisSessionStore } from "../../../src/queue/store/redis-store.js";
import type { RunObserver } from "../../../src/queue/types.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../../support/redis.js";
import { ScriptedStream } from "../../support/scripted-stream.js";
import { resolveTestModel, scriptedFactory } from "../support/harness.js";

const THREAD = "web:redis-sched";
const TARGET = { platform: "web" as const, threadKey: THREAD, channelId: "redis-sched", isDirect: true };

async function until<T>(probe: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const backend of redisBackends()) {
  describe(`scheduled prompts over Redis (${backend})`, () => {
    const closers: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of closers.splice(0).reverse()) await c();
    });

    async function processes(model: ScriptedStream) {
      const prefix = uniquePrefix("sbs");
      const queuePrefix = backend === "cluster" ? `{${prefix}-runs}` : prefix.replace(/:$/, "");
      const make = async () => {
        const redis = connectBackend(backend);
        const sessions = new RedisSessionStore({ redis, prefix });
        let observer: RunObserver | undefined;
        const runtime = new RedisRuntime({
          redis,
          prefix,
          queuePrefix,
          store: sessions,
          sinks: new RecordingSinks().factory,
          agentFactory: scriptedFactory(model),
          resolveModel: resolveTestModel,
          leaseTtlMs: 5000,
          runObserver: {
            runEnded: (r) => observer?.runEnded(r),
            renderFinished: (t, id) => observer?.renderFinished(t, id),
          },
        });
        await runtime.start();
        const store = new RedisScheduleStore(redis, prefix);
        const timer = new BullScheduleTimer({ redis, prefix: queuePrefix, onError: () => {} });
        const service = new ScheduleService({
          store,
          timer,
          runtime,
          settings: DEFAULT_SCHEDULE_SETTINGS,
          clock: systemClock,
          logger: silentLogger,
        });
        observer = service;
        await service.start();
        closers.push(async () => {
          await service.close();
          await runtime.stop({ graceMs: 1000 });
          await store.close();
          await dropKeys(redis, prefix);
          redis.disconnect();
        });
        return { service, store };
      };
      return [await make(), await make()] as const;
    }

    it("runs every occurrence once between two processes and records each answer as shown", async () => {
      const model = new ScriptedStream(() => "done");
      const [a, b] = await processes(model);
      const startAt = Math.ceil((Date.now() + 500) / 100) * 100;
      const made = await a.service.create(
        TARGET,
        { id: "u1" },
        {
          spec: { kind: "every", everyMs: 400, startAt, tz: "UTC" },
          prompt: "tick",
          description: "every 400 ms",
        },
      );
      if (!made.ok) throw new Error(made.error);
      const id = made.record.id;
      const record = await until(async () => {
        const r = await b.store.get(id);
        return (r?.runs ?? 0) >= 4 && r?.lastRun?.status === "answered" ? r : undefined;
      }, "four runs");
      await a.service.pause(id, THREAD);
      // A fire admitted before the pause still runs; once it ended, runs and prompts must agree.
      const final = await until(async () => {
        const r = await b.store.get(id);
        return r?.lastRun?.status !== "queued" ? r : undefined;
      }, "the last run to end");
      const prompts = model.calls.filter((c) => JSON.stringify(c.context.messages.at(-1)).includes("tick"));
      expect(prompts.length).toBe(final?.runs);
      expect(record.lastRun?.delivery).toBe("shown");
      expect(record.missed).toBe(0);
    });

    it("lists, pauses and removes through one process what another made", async () => {
      const [a, b] = await processes(new ScriptedStream(() => "ok"));
      const made = await a.service.create(
        TARGET,
        { id: "u1" },
        {
          spec: { kind: "cron", pattern: "0 9 * * 1-5", tz: "Europe/Berlin" },
          prompt: "standup",
          description: "every weekday at 09:00 (Europe/Berlin)",
        },
      );
      if (!made.ok) throw new Error(made.error);
      expect((await b.service.list(THREAD)).map((r) => r.id)).toEqual([made.record.id]);
      expect((await b.service.pause(made.record.id, THREAD))?.paused).toBe(true);
      expect(await b.service.remove(made.record.id, THREAD)).toBe(true);
      expect(await a.service.list(THREAD)).toEqual([]);
    });
  });
}
