/**
 * Two gateway processes serving the same Discord bot, modelled as two adapters with their own Redis
 * connections. Discord would happily deliver every event to both sessions of one shard; the
 * per-shard lease lets only one connect, and the other takes over when the holder loses Redis (as
 * a killed process does).
 */
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { DiscordAdapter } from "../../src/adapters/discord/index.js";
import type { ConnectionStatus } from "../../src/adapters/types.js";
import { RedisConnectionLease } from "../../src/gateway/connection-lease.js";
import { APPLICATION_ID, FakeDiscord, GENERAL_ID } from "../fakes/discord/server.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { Received } from "./contract.js";
import { claimed } from "./support/claimed.js";
import { until } from "./support/drive.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function gateway(fake: FakeDiscord, prefix: string) {
  const redis: Redis = connectRedis();
  cleanups.push(async () => redis.disconnect());
  const adapter = new DiscordAdapter({
    token: fake.token,
    apiUrl: fake.apiUrl,
    lease: (shard) =>
      new RedisConnectionLease({
        redis,
        name: `discord:${APPLICATION_ID}:shard:${shard}`,
        prefix,
        ttlMs: 600,
        retryMs: 100,
      }),
  });
  cleanups.push(() => adapter.stop());
  const received = new Received();
  const state = () => (adapter.connections()[0] as ConnectionStatus | undefined)?.state;
  return { redis, adapter, received, state };
}

describe("Discord shard 0 across two gateway processes", () => {
  it("one connects; when it loses its lease the other takes over, and no event arrives twice", async () => {
    const fake = await new FakeDiscord().start();
    cleanups.push(() => fake.close());
    const prefix = uniquePrefix();
    const a = gateway(fake, prefix);
    const b = gateway(fake, prefix);
    await a.adapter.start(claimed(a.received, a.redis, prefix));
    await until(() => a.state() === "connected", 30_000, "A connected");
    await b.adapter.start(claimed(b.received, b.redis, prefix));
    await until(() => b.state() === "standby", 30_000, "B standing by");
    expect(fake.gateway.live(0)).toHaveLength(1);

    const alice = fake.user("alice");
    for (let i = 0; i < 3; i++)
      fake.userMessage({ channelId: GENERAL_ID, author: alice, content: `before ${i}`, mention: true });
    await until(() => a.received.messages.length === 3, 30_000, "A receiving");

    // A "dies": its Redis connection is gone, so it cannot renew and disconnects; B takes the shard.
    a.redis.disconnect();
    await until(() => b.state() === "connected", 30_000, "B taking over");
    await until(() => fake.gateway.live(0).length === 1, 30_000, "A's session closed");
    for (let i = 0; i < 3; i++)
      fake.userMessage({ channelId: GENERAL_ID, author: alice, content: `after ${i}`, mention: true });
    await until(() => b.received.messages.length === 3, 30_000, "B receiving");

    expect(a.received.messages.map((m) => m.text)).toEqual(["before 0", "before 1", "before 2"]);
    expect(b.received.messages.map((m) => m.text)).toEqual(["after 0", "after 1", "after 2"]);
    expect(fake.gateway.identifies.get(0)).toBe(2);
    expect(a.state()).toBe("standby");
  });
});
