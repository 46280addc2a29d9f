/**
 * The contract of `WebAuthStore`, run by the memory and Redis stores: a sign-in token works once and
 * only within its time; a session lasts as long as it is used; an ended session is gone.
 */
import { describe, expect, it } from "vitest";
import type { WebAuthStore } from "../../../src/adapters/web/index.js";

export interface AuthWorld {
  store: WebAuthStore;
  /** Lets `ms` pass for the store (a clock, or real time for Redis's own expiry). */
  pass(ms: number): Promise<void>;
  /** Scales the times below: 1 for a manual clock, more where real time passes on a loaded machine. */
  unit: number;
}

export function runAuthStoreContract(name: string, make: () => Promise<AuthWorld>): void {
  describe(`web chat sign-in store contract: ${name}`, () => {
    it("accepts a sign-in token once", async () => {
      const { store } = await make();
      await store.addSignIn("d1", 60_000);
      expect(await store.redeemSignIn("d1")).toBe(true);
      expect(await store.redeemSignIn("d1")).toBe(false);
      expect(await store.redeemSignIn("never-added")).toBe(false);
    });

    it("accepts one of two concurrent redemptions of a token", async () => {
      const { store } = await make();
      await store.addSignIn("d2", 60_000);
      const results = await Promise.all([store.redeemSignIn("d2"), store.redeemSignIn("d2")]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it("forgets a sign-in token after its time", async () => {
      const w = await make();
      await w.store.addSignIn("d3", 50 * w.unit);
      await w.pass(120 * w.unit);
      expect(await w.store.redeemSignIn("d3")).toBe(false);
    });

    it("keeps a session while it is used, and not after it ended or lapsed", async () => {
      const w = await make();
      const ttl = 100 * w.unit;
      await w.store.addSession("s1", ttl);
      await w.pass(0.6 * ttl);
      expect(await w.store.touchSession("s1", ttl)).toBe(true);
      await w.pass(0.6 * ttl);
      expect(await w.store.touchSession("s1", ttl)).toBe(true);
      await w.pass(1.5 * ttl);
      expect(await w.store.touchSession("s1", ttl)).toBe(false);
      await w.store.addSession("s2", 60_000);
      await w.store.endSession("s2");
      expect(await w.store.touchSession("s2", 60_000)).toBe(false);
      expect(await w.store.touchSession("unknown", 60_000)).toBe(false);
    });
  });
}
