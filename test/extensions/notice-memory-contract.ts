/**
 * The `NoticeMemory` contract, run against every implementation: one "you are not allowed" notice
 * per thread within the TTL, shared by every process that shares the memory, and one again once the
 * TTL has passed. `make()` returns the memory, `other` (a second process's view: for the memory one
 * the same object) and `lapse(key)`, which lets the TTL of `key` pass (the memory one moves its
 * clock; Redis keeps time itself, so its lapse deletes the key as the expiry would).
 */
import { describe, expect, it } from "vitest";
import type { NoticeMemory } from "../../src/extensions/access/notices.js";
import { subjectPerTest } from "../support/contract-subject.js";

export interface NoticeMemories {
  memory: NoticeMemory;
  other: NoticeMemory;
  lapse(key: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;
const thread = () => `slack:T1:C${++seq}:1712.${seq}`;

export function noticeMemoryContract(name: string, make: () => Promise<NoticeMemories>): void {
  describe(`NoticeMemory contract: ${name}`, () => {
    const open = subjectPerTest(make);

    it("claims a thread once within the TTL, also from another process", async () => {
      const { memory, other } = await open();
      const key = thread();
      expect(await memory.claim(key, 60_000)).toBe(true);
      expect(await memory.claim(key, 60_000)).toBe(false);
      expect(await other.claim(key, 60_000)).toBe(false);
    });

    it("keeps threads apart", async () => {
      const { memory, other } = await open();
      expect(await memory.claim(thread(), 60_000)).toBe(true);
      expect(await other.claim(thread(), 60_000)).toBe(true);
    });

    it("claims the thread again once the TTL has passed", async () => {
      const { memory, other, lapse } = await open();
      const key = thread();
      expect(await memory.claim(key, 60_000)).toBe(true);
      await lapse(key, 60_000);
      expect(await other.claim(key, 60_000)).toBe(true);
      expect(await memory.claim(key, 60_000)).toBe(false);
    });

    it("accepts a TTL that is not a whole number of milliseconds", async () => {
      const { memory } = await open();
      const key = thread();
      expect(await memory.claim(key, 1500.5)).toBe(true);
      expect(await memory.claim(key, 1500.5)).toBe(false);
    });
  });
}
