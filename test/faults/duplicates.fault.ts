/**
 * Duplicate inbound deliveries: Telegram redelivers updates (same update_id) through the full
 * pipeline, and two gateway processes' runtimes receive the same event at the same instant (as two
 * Slack HTTP receivers behind a load balancer would on a retry). Each message is answered once.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Pipeline, startPipeline, until } from "../../bench/lib/pipeline.js";
import { benchMessage } from "../../bench/sections/scaleout.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import { connectRedis, redisUrl, uniquePrefix } from "../support/redis.js";
import { dropPrefix, report, sleep } from "./support.js";

describe("fault: duplicate inbound deliveries", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("Telegram redeliveries through the pipeline are answered once", async () => {
    const p: Pipeline = await startPipeline({ mode: "redis", redisUrl: redisUrl() });
    cleanups.push(() => p.close());
    const chats = 20;
    for (let i = 0; i < chats; i++) p.inject(30_000 + i, `hello [m${900 + i}]`);
    await until(() => p.model.endedAt.size === chats, 20_000, "first answers");
    // Redeliver every update twice (at-least-once delivery after a lost confirmation).
    for (let u = 100; u < 100 + chats; u++) {
      p.fake.redeliver(u);
      p.fake.redeliver(u);
    }
    // Handled once the fake holds no pending update and the adapter has polled again after that.
    await until(() => p.fake.pendingUpdates === 0, 10_000, "the redeliveries to be fetched");
    const polls = p.fake.calls.filter((c) => c.method === "getUpdates").length;
    await until(
      () => p.fake.calls.filter((c) => c.method === "getUpdates").length > polls,
      10_000,
      "the next poll",
    );
    for (let i = 0; i < chats; i++) {
      const t = `telegram:${30_000 + i}:0:0`;
      while ((await p.runtime.status(t)).active) await sleep(20);
    }
    const answers = Array.from(
      { length: chats },
      (_, i) => p.fake.botMessages(30_000 + i).filter((m) => !m.deleted).length,
    );
    report("Telegram redelivery ×2", {
      chats,
      modelCalls: p.model.calls,
      botMessagesPerChat: [...new Set(answers)],
    });
    expect(p.model.calls).toBe(chats);
    expect(answers.every((a) => a === 1)).toBe(true);
  });

  it("the same event at two gateways at once is queued once", async () => {
    const prefix = uniquePrefix("sbf-dup");
    const a = connectRedis();
    const b = connectRedis();
    const sinks = () => ({ onEvent() {}, onNotice() {}, close() {} });
    const g1 = new RedisRuntime({
      redis: a,
      prefix,
      store: new RedisSessionStore({ redis: a, prefix }),
      sinks,
    });
    const g2 = new RedisRuntime({
      redis: b,
      prefix,
      store: new RedisSessionStore({ redis: b, prefix }),
      sinks,
    });
    cleanups.push(async () => {
      await g1.stop({ graceMs: 0 });
      await g2.stop({ graceMs: 0 });
      await dropPrefix(a, prefix);
      await a.quit();
      await b.quit();
    });
    const events = 300;
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: events }, async (_, i) => {
        const m = benchMessage(`slack:T1:C1:${i % 30}`, `slack:event:Ev${i}`, `hi [m${i}]`);
        const rs = await Promise.all([g1.deliver(m), g2.deliver({ ...m }), g1.deliver({ ...m })]);
        for (const r of rs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }),
    );
    let depth = 0;
    for (let t = 0; t < 30; t++) depth += (await g1.status(`slack:T1:C1:${t}`)).inboxDepth;
    report("same event at 2 gateways ×3", { events, statuses, queuedInInboxes: depth });
    expect(statuses.queued).toBe(events);
    expect(statuses.duplicate).toBe(events * 2);
    expect(depth).toBe(events);
  });
});
