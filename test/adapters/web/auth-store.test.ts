import { afterAll } from "vitest";
import { MemoryWebAuthStore } from "../../../src/adapters/web/index.js";
import { RedisWebAuthStore } from "../../../src/queue/store/web-auth-redis.js";
import { connectRedis, uniquePrefix } from "../../support/redis.js";
import { runAuthStoreContract } from "./auth-store-contract.js";

runAuthStoreContract("memory", async () => {
  let now = 1_700_000_000_000;
  return {
    store: new MemoryWebAuthStore(() => now),
    unit: 1,
    pass: async (ms) => {
      now += ms;
    },
  };
});

const redis = connectRedis();
afterAll(async () => {
  const keys = await redis.keys("sbauth:*");
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

// Redis expires keys by its own clock, so time passes for real here (about 3 s in all), with
// margins of hundreds of milliseconds between a step and an expiry.
runAuthStoreContract("redis", async () => ({
  store: new RedisWebAuthStore(redis, uniquePrefix("sbauth")),
  unit: 8,
  pass: (ms) => new Promise((r) => setTimeout(r, ms)),
}));
