/**
 * Two gateway processes with Telegram polling, modelled as two adapters with separate Redis
 * connections and separate HTTP paths to the fake (so one can "die": its requests are never
 * answered and its Redis connection drops, as when a process is killed).
 */
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { TelegramAdapter } from "../../../src/adapters/telegram/index.js";
import type { ConnectionStatus } from "../../../src/adapters/types.js";
import { RedisConnectionLease } from "../../../src/gateway/connection-lease.js";
import { BOT_ID, FakeTelegram } from "../../fakes/telegram/server.js";
import { connectRedis, uniquePrefix } from "../../support/redis.js";
import { Received } from "../contract.js";
import { claimed } from "../support/claimed.js";
import { until } from "../support/drive.js";
import { GROUP, USERS } from "./harness.js";

const alice = USERS.alice as NonNullable<(typeof USERS)["alice"]>;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function gateway(fake: FakeTelegram, name: string, prefix: string) {
  const redis: Redis = connectRedis();
  cleanups.push(async () => redis.disconnect());
  const adapter = new TelegramAdapter({
    token: fake.token,
    apiRoot: fake.apiRoot(name),
    pollTimeoutSeconds: 2,
    lease: new RedisConnectionLease({
      redis,
      name: `telegram:polling:${BOT_ID}`,
      prefix,
      ttlMs: 600,
      retryMs: 100,
    }),
  });
  const received = new Received();
  const state = () => (adapter.connections()[0] as ConnectionStatus | undefined)?.state;
  return { redis, adapter, received, state };
}

describe("Telegram polling across two gateway processes", () => {
  it("one polls; when it dies the other takes over without losing or duplicating an update", async () => {
    const fake = await new FakeTelegram({ groupRule: null, privateRule: null }).start();
    cleanups.push(() => fake.close());
    const prefix = uniquePrefix();
    const a = gateway(fake, "gw-a", prefix);
    const b = gateway(fake, "gw-b", prefix);
    await a.adapter.start(claimed(a.received, a.redis, prefix));
    await until(() => a.state() === "connected", 30_000, "A polling");
    await b.adapter.start(claimed(b.received, b.redis, prefix));
    await until(() => b.state() === "standby", 30_000, "B standing by");

    for (let i = 0; i < 5; i++)
      fake.userMessage({ chat: GROUP, from: alice, text: `before ${i}`, mention: true });
    await until(() => a.received.messages.length === 5, 30_000, "A receiving");
    expect(b.received.messages).toEqual([]);

    // A dies: its HTTP requests hang forever and its Redis connection is gone, so its lease expires.
    fake.blackhole("gw-a");
    a.redis.disconnect();
    for (let i = 0; i < 5; i++)
      fake.userMessage({ chat: GROUP, from: alice, text: `after ${i}`, mention: true });
    await until(() => b.received.messages.length >= 5, 30_000, "B taking over");
    await until(() => b.state() === "connected", 30_000, "B connected");

    const all = [...a.received.messages, ...b.received.messages];
    expect(all.map((m) => m.text).sort()).toEqual(
      [
        ...Array.from({ length: 5 }, (_, i) => `before ${i}`),
        ...Array.from({ length: 5 }, (_, i) => `after ${i}`),
      ].sort(),
    );
    expect(new Set(all.map((m) => m.eventId)).size).toBe(10);
    expect(fake.conflicts).toBe(0);
    await b.adapter.stop();
    await a.adapter.stop();
  });

  it("without a lease two pollers fight with 409 conflicts (why the lease exists)", async () => {
    const fake = await new FakeTelegram().start();
    cleanups.push(() => fake.close());
    const adapters = ["x", "y"].map(
      (p) => new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot(p), pollTimeoutSeconds: 2 }),
    );
    for (const ad of adapters) {
      await ad.start(new Received());
      cleanups.push(() => ad.stop());
    }
    await until(() => fake.conflicts > 0, 30_000, "a 409 conflict");
    // The poller that lost shows it until its next poll succeeds; the fight goes on, so it shows again.
    await until(
      () => adapters.some((ad) => ad.connections()[0]?.detail?.includes("409")),
      30_000,
      "a poller showing the 409",
    );
  });
});
