/**
 * The Redis runtime (BullMQ queue, Lua steps, Redis session store) against the runtime contract,
 * on a test clock, on one Redis server and on a Redis Cluster (where a script or MULTI that touches
 * keys of two hash slots fails with CROSSSLOT). The lease TTL is longer than any test may run, so a
 * lease never expires on Redis's own clock while the test clock stands still.
 */

import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectBackend, type RedisBackend, redisBackends, uniquePrefix } from "../support/redis.js";
import { runtimeContract } from "./runtime-contract.js";
import { type HarnessFactory, resolveTestModel, scriptedFactory } from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

const makeRedis = async (o: Parameters<HarnessFactory>[0], backend: RedisBackend) => {
  const redis = connectBackend(backend);
  const prefix = uniquePrefix();
  const store = new RedisSessionStore({ redis, prefix });
  const sinks = new RecordingSinks();
  const clock = new ManualClock();
  const leases = new LeaseLog();
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
    leaseTtlMs: 60_000,
    controlPollMs: 200,
    sweepIntervalMs: 1000,
    clock,
    onLease: leases.record,
  });
  await runtime.start();
  return {
    runtime,
    store,
    sinks,
    clock,
    leases,
    close: async () => {
      await runtime.stop({ graceMs: 1000 });
      await redis.quit();
    },
  };
};

for (const backend of redisBackends()) runtimeContract(backend, (o) => makeRedis(o, backend));
