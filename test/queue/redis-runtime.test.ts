/**
 * The Redis runtime (BullMQ queue, Lua steps, Redis session store) against the runtime contract.
 */

import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { runtimeContract } from "./runtime-contract.js";
import { type HarnessFactory, resolveTestModel, scriptedFactory } from "./support/harness.js";

const makeRedis: HarnessFactory = async (o) => {
  const redis = connectRedis();
  const prefix = uniquePrefix();
  const store = new RedisSessionStore({ redis, prefix });
  const sinks = new RecordingSinks();
  const runtime = new RedisRuntime({
    redis,
    prefix,
    store,
    sinks: sinks.factory,
    agentFactory: scriptedFactory(o.stream, o.tools),
    resolveModel: resolveTestModel,
    concurrency: o.concurrency,
    inboxCap: o.inboxCap,
    collectDebounceMs: o.collectDebounceMs ?? 400,
    defaultMode: o.defaultMode,
    compaction: o.compaction,
    leaseTtlMs: 3000,
    controlPollMs: 200,
    sweepIntervalMs: 1000,
  });
  await runtime.start();
  return {
    runtime,
    store,
    sinks,
    close: async () => {
      await runtime.stop({ graceMs: 1000 });
      await redis.quit();
    },
  };
};

runtimeContract("redis", makeRedis);
