/**
 * A worker process for the multi-process tests (run with tsx). It runs a `RedisRuntime` worker with
 * the echo model and records every lease event as one JSON line in `SB_LEASE_FILE` (written
 * synchronously, so a SIGKILL loses at most the event in flight). Prints `ready` once it takes jobs;
 * SIGTERM stops it gracefully.
 *
 * Environment: REDIS_URL, SB_PREFIX, SB_LEASE_FILE, SB_NOTICE_FILE (notices posted to threads, one
 * JSON line each), SB_WORKER (a name), SB_LEASE_TTL (ms), SB_CONCURRENCY, SB_SWEEP (ms).
 */
import { appendFileSync } from "node:fs";
import { Redis } from "ioredis";
import { RedisRuntime } from "../../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../../src/queue/store/redis-store.js";
import type { RunSink } from "../../../src/queue/types.js";
import { ScriptedStream } from "../../support/scripted-stream.js";
import { echoResponder, workTool } from "./echo-model.js";
import { resolveTestModel, scriptedFactory } from "./harness.js";

const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`worker-process: set ${name}.`);
  return v;
};

const worker = env("SB_WORKER", String(process.pid));
const leaseFile = env("SB_LEASE_FILE");
const leaseTtlMs = Number(env("SB_LEASE_TTL", "1000"));
const redis = new Redis(env("REDIS_URL"), { maxRetriesPerRequest: null });
const prefix = env("SB_PREFIX");
const store = new RedisSessionStore({ redis, prefix });
const noticeFile = process.env.SB_NOTICE_FILE;
const sink: RunSink = {
  onEvent: () => {},
  onNotice: (text) => {
    if (noticeFile) appendFileSync(noticeFile, `${JSON.stringify({ worker, text })}\n`);
  },
  close: () => {},
};
const runtime = new RedisRuntime({
  redis,
  prefix,
  store,
  sinks: () => sink,
  agentFactory: scriptedFactory(new ScriptedStream(echoResponder), [workTool]),
  resolveModel: resolveTestModel,
  leaseTtlMs,
  controlPollMs: 200,
  concurrency: Number(env("SB_CONCURRENCY", "20")),
  sweepIntervalMs: Number(env("SB_SWEEP", "1000")),
  onLease: (e) => appendFileSync(leaseFile, `${JSON.stringify({ ...e, worker })}\n`),
  onError: (e, context) =>
    process.stderr.write(`[${worker}] ${context}: ${e instanceof Error ? e.message : String(e)}\n`),
});

await runtime.start();
process.stdout.write("ready\n");
process.once("SIGTERM", () => {
  void runtime
    .stop({ graceMs: 2000 })
    .then(() => redis.quit())
    .finally(() => process.exit(0));
});
