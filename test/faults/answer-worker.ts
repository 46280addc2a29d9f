/**
 * A worker process for the Redis failover scenario (run with `node --import tsx`): a `RedisRuntime`
 * worker whose agents use the paced model, on a Redis Cluster. It writes one JSON line to stdout per
 * final answer a run delivers to the chat (`{"type":"answer","thread","tag"}`), synchronously, so the
 * test counts the answers people would see, whatever Redis kept; `{"type":"ready"}` once it takes
 * jobs. SIGTERM stops it gracefully.
 *
 * Environment: REDIS_CLUSTER (seed nodes, comma-separated), SB_PREFIX, SB_LEASE_TTL (ms),
 * SB_SWEEP (ms), SB_CONCURRENCY.
 */
import { writeSync } from "node:fs";
import { createPacedModel, TAG } from "../../bench/lib/paced-model.js";
import { pacedAgentFactory } from "../../bench/lib/pipeline.js";
import type { AgentEvent } from "../../src/agent/types.js";
import { createRedisClient } from "../../src/queue/redis/client.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { RunSink } from "../../src/queue/types.js";

const seeds = process.env.REDIS_CLUSTER;
const prefix = process.env.SB_PREFIX;
if (!seeds || !prefix) throw new Error("answer-worker: set REDIS_CLUSTER and SB_PREFIX.");

/** One line to stdout before returning (a full pipe answers EAGAIN: wait, never drop a line). */
function emit(event: Record<string, unknown>): void {
  const line = Buffer.from(`${JSON.stringify({ ...event, pid: process.pid })}\n`);
  let off = 0;
  while (off < line.length) {
    try {
      off += writeSync(1, line, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
    }
  }
}

const redis = createRedisClient({ cluster: seeds.split(",") }, { maxRetriesPerRequest: null });
redis.on("error", () => {}); // the cluster client follows the failover by itself

function sink(threadKey: string): RunSink {
  return {
    onEvent(e: AgentEvent) {
      if (e.type !== "message_end" || e.message.role !== "assistant" || e.message.stopReason !== "stop")
        return;
      for (const c of e.message.content) {
        const tag = c.type === "text" ? TAG.exec(c.text)?.[1] : undefined;
        if (tag) emit({ type: "answer", thread: threadKey, tag });
      }
    },
    onNotice(text) {
      emit({ type: "notice", thread: threadKey, text });
    },
    close() {},
  };
}

const runtime = new RedisRuntime({
  redis,
  prefix,
  store: new RedisSessionStore({ redis, prefix }),
  sinks: (threadKey) => sink(threadKey),
  agentFactory: pacedAgentFactory(createPacedModel()),
  concurrency: Number(process.env.SB_CONCURRENCY ?? 40),
  leaseTtlMs: Number(process.env.SB_LEASE_TTL ?? 2000),
  sweepIntervalMs: Number(process.env.SB_SWEEP ?? 500),
  onError: (e, context) =>
    process.stderr.write(
      `[worker ${process.pid}] ${context}: ${e instanceof Error ? e.message : String(e)}\n`,
    ),
});

await runtime.start();
emit({ type: "ready" });
process.once("SIGTERM", () => {
  void runtime
    .stop({ graceMs: 1000 })
    .then(() => redis.quit())
    .finally(() => process.exit(0));
});
