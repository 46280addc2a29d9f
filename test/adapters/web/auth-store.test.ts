import { afterAll } from "vitest";
import { MemoryWebAuthStore } from "../../../src/adapters/web/index.js";
import { RedisWebAuthStore } from "../../../src/queue/store/web-auth-redis.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../../support/redis.js";
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

// Redis expires keys by its own clock, so time passes for real here (about 3 s in all), with
// margins of hundreds of milliseconds between a step and an expiry. On one server and on the Redis
// Cluster.
for (const backend of redisBackends()) {
  const redis = connectBackend(backend);
  const root = uniquePrefix("sbauth");
  afterAll(async () => {
    await dropKeys(redis, root);
    await redis.quit();
  });
  runAuthStoreContract(backend, async () => ({
    store: new RedisWebAuthStore(redis, uniquePrefix(root.slice(0, -1))),
    unit: 8,
    pass: (ms) => new Promise((r) => setTimeout(r, ms)),
  }));
}
