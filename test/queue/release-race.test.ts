/**
 * The lost-wakeup race: a message that arrives while the holder is releasing the thread must never
 * be stranded. The runtime's release steps (`release`, and `finish`, which releases at the end of a
 * finished run when nothing is left) are wrapped so that each release attempt triggers the
 * next delivery at a different point of the window: before the release Lua, concurrently with it,
 * or right after it (while the old wake job is still finishing). The sweeper is off (the test clock
 * never moves), so only the wake-flag protocol itself can bring each message to a worker.
 */
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import type { ThreadState } from "../../src/queue/state/types.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { Runtime } from "../../src/queue/types.js";
import type { RuntimeKeys } from "../../src/redis-keys.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import {
  inbound,
  resolveTestModel,
  scriptedFactory,
  sessionMessages,
  textOf,
  waitIdle,
} from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

type Hook = (phase: "before" | "after") => Promise<void>;

/** A runtime whose `release` and `finish` call a hook just before and just after the step. */
class HookedRuntime extends RedisRuntime {
  static hook: Hook = async () => {};

  protected override createState(redis: Redis, keys: RuntimeKeys): ThreadState {
    const inner = super.createState(redis, keys);
    const wrapped: ThreadState = Object.create(inner);
    wrapped.release = async (threadKey, token) => {
      await HookedRuntime.hook("before");
      const r = await inner.release(threadKey, token);
      await HookedRuntime.hook("after");
      return r;
    };
    wrapped.finish = async (...args) => {
      await HookedRuntime.hook("before");
      const r = await inner.finish(...args);
      await HookedRuntime.hook("after");
      return r;
    };
    return wrapped;
  }
}

/** Yields to the event loop a few times, so a concurrent delivery lands anywhere in the window. */
async function jitter(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("release race", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    HookedRuntime.hook = async () => {};
    for (const c of closers.splice(0).reverse()) await c();
  });

  it("a message arriving while the holder releases is never stranded (300 windows)", async () => {
    const redis = connectRedis();
    const prefix = uniquePrefix();
    const store = new RedisSessionStore({ redis, prefix });
    const stream = new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const sinks = new RecordingSinks();
    const leases = new LeaseLog();
    const common = {
      redis,
      prefix,
      store,
      sinks: sinks.factory,
      agentFactory: scriptedFactory(stream),
      resolveModel: resolveTestModel,
      leaseTtlMs: 60_000,
      sweepIntervalMs: 3_600_000,
      clock: new ManualClock(),
      onLease: leases.record,
    };
    // Two worker runtimes compete for the wake jobs, as two processes would.
    const a = new HookedRuntime(common);
    const b = new HookedRuntime(common);
    closers.push(async () => {
      await a.stop({ graceMs: 500 });
      await b.stop({ graceMs: 500 });
      await redis.quit();
    });
    await a.start();
    await b.start();

    const thread = "web:race";
    const total = 300;
    let next = 0;
    const pending: Promise<unknown>[] = [];
    let allSent!: () => void;
    const sent = new Promise<void>((resolve) => {
      allSent = resolve;
    });
    const deliverNext = (runtime: Runtime) => {
      next++;
      if (next === total) allSent();
      const p = runtime.deliver(inbound(thread, `m${next}`), next % 2 === 0 ? "steer" : "followUp");
      pending.push(p);
      return p;
    };
    HookedRuntime.hook = async (phase) => {
      if (next >= total) return;
      const variant = next % 4;
      if (phase === "before" && variant === 0) await deliverNext(a);
      else if (phase === "before" && variant === 1) void jitter(next % 5).then(() => deliverNext(b));
      else if (phase === "after" && variant === 2) await deliverNext(b);
      else if (phase === "after" && variant === 3) void jitter(next % 7).then(() => deliverNext(a));
    };

    await deliverNext(a);
    // Each release attempt delivers the next message, until all are sent.
    await sent;
    await Promise.all(pending);
    await waitIdle({ runtime: a, leases }, thread);

    const users = (await sessionMessages(store, thread)).filter((m) => m.role === "user").map(textOf);
    expect(next).toBe(total);
    expect(users).toEqual(Array.from({ length: total }, (_, i) => `m${i + 1}`));
    const answered = (await sessionMessages(store, thread)).filter((m) => m.role === "assistant");
    expect(answered.at(-1)).toMatchObject({ stopReason: "stop" });
  }, 180_000);
});
