/**
 * A worker process for the scale-out figure and the fault suite (run with `node --import tsx`):
 * a `RedisRuntime` worker whose agents use the paced model (immediate replies unless a message asks
 * for a pace). Each finished run increments `<prefix>bench:done` and appends the run's final reply
 * to `<prefix>bench:replies` (a list), so the parent counts completions and checks exactly-once.
 * Prints `ready` once it takes jobs; SIGTERM stops it gracefully.
 *
 * Environment: REDIS_URL (or REDIS_CLUSTER, seed nodes, which wins), SB_PREFIX, SB_CONCURRENCY
 * (default 20), SB_LEASE_TTL (ms, default 15000), SB_SWEEP (ms, default 5000).
 */
import type { AgentEvent } from "../../src/agent/types.js";
import { createRedisClient, type RedisTarget } from "../../src/queue/redis/client.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { RunSink } from "../../src/queue/types.js";
import { createPacedModel } from "./paced-model.js";
import { pacedAgentFactory } from "./pipeline.js";

const url = process.env.REDIS_URL;
const seeds = process.env.REDIS_CLUSTER;
const prefix = process.env.SB_PREFIX;
if (!(url || seeds) || !prefix)
  throw new Error("bench-worker: set REDIS_URL (or REDIS_CLUSTER) and SB_PREFIX.");
const target: RedisTarget = seeds ? { cluster: seeds.split(",") } : { url: url as string };

const redis = createRedisClient(target, { maxRetriesPerRequest: null });
redis.on("error", () => {}); // ioredis reconnects by itself; errors surface through the runtime.
const counter = createRedisClient(target, { maxRetriesPerRequest: null });
counter.on("error", () => {});
const model = createPacedModel();

function sink(threadKey: string): RunSink {
  const finals: string[] = [];
  return {
    onEvent(e: AgentEvent) {
      if (e.type === "message_end" && e.message.role === "assistant" && e.message.stopReason === "stop") {
        for (const c of e.message.content) if (c.type === "text") finals.push(c.text);
      }
    },
    onNotice() {},
    async close() {
      if (finals.length === 0) return;
      // Two commands (the keys are in two hash slots on a cluster); the count last, so a reply is
      // listed once it is counted.
      await counter.rpush(
        `${prefix}bench:replies`,
        JSON.stringify({ threadKey, texts: finals, pid: process.pid }),
      );
      await counter.incr(`${prefix}bench:done`);
    },
  };
}

const runtime = new RedisRuntime({
  redis,
  prefix,
  store: new RedisSessionStore({ redis, prefix }),
  sinks: (threadKey, runId) =>
    runId.startsWith("notice:") ? { onEvent() {}, onNotice() {}, close() {} } : sink(threadKey),
  agentFactory: pacedAgentFactory(model),
  concurrency: Number(process.env.SB_CONCURRENCY ?? 20),
  leaseTtlMs: Number(process.env.SB_LEASE_TTL ?? 15_000),
  sweepIntervalMs: Number(process.env.SB_SWEEP ?? 5_000),
  onError: (e, context) =>
    process.stderr.write(
      `[worker ${process.pid}] ${context}: ${e instanceof Error ? e.message : String(e)}\n`,
    ),
});

await runtime.start();
process.stdout.write("ready\n");
process.once("SIGTERM", () => {
  void runtime
    .stop({ graceMs: 2000 })
    .then(() => Promise.all([redis.quit(), counter.quit()]))
    .finally(() => process.exit(0));
});
