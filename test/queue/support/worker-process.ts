/**
 * A worker process for the multi-process tests (run with tsx). It runs a `RedisRuntime` worker with
 * the echo model and writes what it does to stdout, one JSON line per event, synchronously (a
 * SIGKILL loses at most the line in progress): `ready`, every lease event (reported before a
 * release is sent, so a release on the wire is always on record), the notices it posts to threads,
 * the session entries it saved, and the tools it started. SIGTERM stops it gracefully.
 *
 * `SB_DIE_AT=<step>:<n>` kills the process with SIGKILL right after it sends its n-th <step>
 * (`acquire`, `renew`, `take`, `settle`, `release`, `forceRelease` of the thread state, or `append`
 * of the session store; `finish` counts as a `settle` and as a `release`, `wakeAcquire` (which takes
 * ahead when nothing is inflight) as an `acquire` and as a `take`): the step reaches Redis, its
 * reply is never seen.
 *
 * Environment: REDIS_URL, SB_PREFIX, SB_WORKER (a name), SB_LEASE_TTL (ms), SB_CONCURRENCY,
 * SB_SWEEP (ms), SB_DIE_AT.
 */
import { writeSync } from "node:fs";
import { Redis } from "ioredis";
import { systemClock } from "../../../src/agent/clock.js";
import { RedisRuntime } from "../../../src/queue/redis/redis-runtime.js";
import type { ThreadState } from "../../../src/queue/state/types.js";
import { RedisSessionStore } from "../../../src/queue/store/redis-store.js";
import type { SessionStore } from "../../../src/queue/store/types.js";
import type { RunSink } from "../../../src/queue/types.js";
import type { RuntimeKeys } from "../../../src/redis-keys.js";
import { ScriptedStream } from "../../support/scripted-stream.js";
import { echoResponder, workTool } from "./echo-model.js";
import { resolveTestModel, scriptedFactory } from "./harness.js";

const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`worker-process: set ${name}.`);
  return v;
};

const worker = env("SB_WORKER", String(process.pid));
/**
 * Writes one event line to stdout before returning. The pipe is non-blocking, so a full pipe
 * (the test reads slowly under load) answers EAGAIN: wait for the test to read, never drop a line.
 */
const emit = (event: Record<string, unknown>): void => {
  const line = Buffer.from(`${JSON.stringify({ ...event, worker })}\n`);
  let off = 0;
  while (off < line.length) {
    try {
      off += writeSync(1, line, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
    }
  }
};

const [dieStep, dieAfter] = (process.env.SB_DIE_AT ?? "").split(":");
let steps = 0;
/** Calls `send` (the step goes out), then dies if it was the chosen one. */
function step<R>(name: string, send: () => R): R {
  const out = send();
  // `finish` is a settle, a take and a release in one step: it counts as a `settle` or a `release`;
  // `wakeAcquire` (a wake job's clear-and-acquire, with the first take when nothing is inflight)
  // counts as an `acquire` or a `take`.
  const counts =
    name === dieStep ||
    (name === "finish" && (dieStep === "settle" || dieStep === "release")) ||
    (name === "wakeAcquire" && (dieStep === "acquire" || dieStep === "take"));
  if (counts && ++steps === Number(dieAfter)) {
    emit({ type: "dying", step: dieStep, n: steps });
    process.kill(process.pid, "SIGKILL");
  }
  return out;
}

function mortal<T extends object>(target: T, names: readonly string[]): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== "function" || !names.includes(String(prop))) return value;
      return (...args: unknown[]) => step(String(prop), () => value.apply(obj, args));
    },
  });
}

const leaseTtlMs = Number(env("SB_LEASE_TTL", "1000"));
const redis = new Redis(env("REDIS_URL"), { maxRetriesPerRequest: null });
const prefix = env("SB_PREFIX");
const redisStore = new RedisSessionStore({ redis, prefix });
const store: SessionStore = mortal(
  new Proxy(redisStore, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (prop !== "append" || typeof value !== "function") return value;
      return async (...args: Parameters<SessionStore["append"]>) => {
        const r = await (value as SessionStore["append"]).apply(obj, args);
        for (const e of args[2])
          emit({
            type: "saved",
            threadKey: args[0],
            entry: e.type,
            role: e.type === "message" ? e.message.role : undefined,
          });
        return r;
      };
    },
  }),
  ["append"],
);

const sink = (threadKey: string): RunSink => ({
  onEvent: (event) => {
    if (event.type === "tool_execution_start") emit({ type: "tool", threadKey, tool: event.toolName });
  },
  onNotice: (text) => {
    emit({ type: "notice", threadKey, text });
  },
  close: () => {},
});

class WorkerRuntime extends RedisRuntime {
  protected override createState(r: Redis, keys: RuntimeKeys): ThreadState {
    return mortal(super.createState(r, keys), [
      "acquire",
      "wakeAcquire",
      "renew",
      "take",
      "settle",
      "release",
      "finish",
      "forceRelease",
    ]);
  }
}

const runtime = new WorkerRuntime({
  redis,
  prefix,
  store,
  sinks: (threadKey) => sink(threadKey),
  agentFactory: scriptedFactory(new ScriptedStream(echoResponder), [workTool(systemClock)]),
  resolveModel: resolveTestModel,
  leaseTtlMs,
  controlPollMs: 200,
  concurrency: Number(env("SB_CONCURRENCY", "20")),
  sweepIntervalMs: Number(env("SB_SWEEP", "1000")),
  onLease: (e) => emit({ ...e }),
  onError: (e, context) =>
    process.stderr.write(`[${worker}] ${context}: ${e instanceof Error ? e.message : String(e)}\n`),
});

await runtime.start();
emit({ type: "ready" });
process.once("SIGTERM", () => {
  void runtime
    .stop({ graceMs: 2000 })
    .then(() => redis.quit())
    .finally(() => process.exit(0));
});
