/**
 * The adapters' key-value store contract (key-value-store-contract.ts) on the embedded mode's file
 * (on a test clock; a restart is a new store on the same file) and on Redis, one server and the
 * cluster (another process is a store over another connection).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { FileKeyValueStore } from "../../src/gateway/file-kv.js";
import { RedisKeyValueStore } from "../../src/gateway/redis-kv.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../support/redis.js";
import { keyValueStoreContract } from "./key-value-store-contract.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

keyValueStoreContract("file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-kv-"));
  dirs.push(dir);
  const path = join(dir, "message-threads.jsonl");
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  return {
    store: new FileKeyValueStore(path, clock),
    prefix: "sb:",
    reopen: async () => new FileKeyValueStore(path, clock),
    lapse: async (_key, ttlMs) => {
      now += Math.ceil(ttlMs);
    },
    close: async () => {},
  };
});

for (const backend of redisBackends()) {
  keyValueStoreContract(backend, async () => {
    const prefix = uniquePrefix("sbt-kv");
    const [a, b] = [connectBackend(backend), connectBackend(backend)];
    return {
      store: new RedisKeyValueStore(a),
      prefix,
      reopen: async () => new RedisKeyValueStore(b),
      async lapse(key, ttlMs) {
        // The key carries its TTL; deleting it is what the expiry does, without waiting for it.
        const left = await a.pttl(key);
        expect(left).toBeGreaterThan(0);
        expect(left).toBeLessThanOrEqual(Math.ceil(ttlMs));
        await a.del(key);
      },
      async close() {
        await dropKeys(a, prefix);
        a.disconnect();
        b.disconnect();
      },
    };
  });
}
