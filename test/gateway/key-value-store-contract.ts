/**
 * The `KeyValueStore` contract, run against every implementation (key-value-store.test.ts): short
 * string values under string keys, each kept until its TTL passes and seen by every process sharing
 * the store (for the embedded mode's file, by the process after a restart). `make()` returns the
 * store, a key prefix its keys must start with (test isolation), `reopen()` (another process's
 * view, or the same file opened again) and `lapse(key, ttlMs)`, which lets the TTL of `key` pass
 * (the file store's clock moves; Redis keeps time itself, so its lapse checks the key's expiry and
 * deletes it, as the expiry would).
 */
import { describe, expect, it } from "vitest";
import type { KeyValueStore } from "../../src/adapters/types.js";
import { subjectPerTest } from "../support/contract-subject.js";

export interface KeyValueSubject {
  store: KeyValueStore;
  prefix: string;
  reopen(): Promise<KeyValueStore>;
  lapse(key: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

const HOUR = 3_600_000;

export function keyValueStoreContract(name: string, make: () => Promise<KeyValueSubject>): void {
  describe(`KeyValueStore contract: ${name}`, () => {
    const open = subjectPerTest(make);

    it("has nothing under a key never set", async () => {
      const { store, prefix } = await open();
      expect(await store.get(`${prefix}telegram:msg:-100:1`)).toBeUndefined();
    });

    it("gives back the value last set under a key, keys kept apart", async () => {
      const { store, prefix } = await open();
      const [a, b] = [`${prefix}telegram:msg:-100:7`, `${prefix}telegram:msg:-100:8`];
      await store.set(a, "0:5", HOUR);
      await store.set(b, "0:5", HOUR);
      await store.set(a, "0:6", HOUR);
      expect(await store.get(a)).toBe("0:6");
      expect(await store.get(b)).toBe("0:5");
    });

    it("keeps keys and values exactly as given", async () => {
      const { store, prefix } = await open();
      const entries: [string, string][] = [
        [`${prefix}slack:T1:{C2}:1712.5`, "slack:T1:C2:1712.000500"],
        [`${prefix}discord:ünï ✓`, '{"thread":"d:1","n":[1,2]}'],
        [`${prefix}long`, "x".repeat(500)],
        [`${prefix}spaces`, "  a value\nwith a newline  "],
      ];
      for (const [k, v] of entries) await store.set(k, v, HOUR);
      for (const [k, v] of entries) expect(await store.get(k)).toBe(v);
    });

    it("is seen by another process sharing the store (the file's next process)", async () => {
      const { store, prefix, reopen } = await open();
      const key = `${prefix}telegram:msg:-100:9`;
      await store.set(key, "0:7", HOUR);
      await store.set(key, "0:8", HOUR);
      const other = await reopen();
      expect(await other.get(key)).toBe("0:8");
      expect(await other.get(`${prefix}telegram:msg:-100:10`)).toBeUndefined();
    });

    it("forgets a value once its TTL has passed, in every process, and takes a new one after", async () => {
      const { store, prefix, reopen, lapse } = await open();
      const key = `${prefix}slack:threads:C1:1712.1`;
      const kept = `${prefix}slack:threads:C1:1712.2`;
      await store.set(key, "1", 60_000);
      await store.set(kept, "1", 10 * HOUR);
      expect(await store.get(key)).toBe("1");
      await lapse(key, 60_000);
      expect(await store.get(key)).toBeUndefined();
      expect(await (await reopen()).get(key)).toBeUndefined();
      expect(await store.get(kept)).toBe("1");
      await store.set(key, "2", 60_000);
      expect(await store.get(key)).toBe("2");
    });

    it("accepts a TTL that is not a whole number of milliseconds", async () => {
      const { store, prefix, lapse } = await open();
      const key = `${prefix}fractional`;
      await store.set(key, "v", 1500.5);
      expect(await store.get(key)).toBe("v");
      await lapse(key, 1500.5);
      expect(await store.get(key)).toBeUndefined();
    });
  });
}
