/**
 * The Redis mode's firing engine on real Redis: BullMQ's job schedulers call back at each
 * occurrence with the instant it was due; two processes' timers on one queue fire each
 * occurrence once between them; a disarmed schedule fires no more; an occurrence that fell due
 * while no worker ran is fired late, once, when one starts (the missed-run policy then decides).
 * BullMQ keeps real time, so these wait for real (sub-second) intervals.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BullScheduleTimer } from "../../../src/queue/schedules/bull-timer.js";
import type { ScheduleRecord } from "../../../src/queue/schedules/types.js";
import { connectBackend, dropKeys, redisBackends, uniquePrefix } from "../../support/redis.js";

function record(id: string, spec: ScheduleRecord["spec"]): ScheduleRecord {
  return {
    id,
    origin: "chat",
    target: { platform: "web", threadKey: "web:t", channelId: "t", isDirect: true },
    owner: { id: "u1" },
    spec,
    prompt: "p",
    description: "d",
    createdAt: Date.now(),
    paused: false,
    missed: 0,
    runs: 0,
  };
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const backend of redisBackends()) {
  describe(`BullScheduleTimer (${backend})`, () => {
    const closers: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of closers.splice(0).reverse()) await c();
    });

    function open() {
      const redis = connectBackend(backend);
      const prefix = backend === "cluster" ? `{${uniquePrefix("sbq")}}` : uniquePrefix("sbq");
      const timers: BullScheduleTimer[] = [];
      const make = () => {
        const t = new BullScheduleTimer({ redis, prefix, onError: () => {} });
        timers.push(t);
        return t;
      };
      closers.push(async () => {
        for (const t of timers) await t.close();
        await dropKeys(redis, prefix);
        redis.disconnect();
      });
      return make;
    }

    it("fires an interval schedule at its instants, each occurrence once across two processes' timers", async () => {
      const make = open();
      const fired: [string, number][] = [];
      const fire = async (id: string, at: number) => {
        fired.push([id, at]);
      };
      const a = make();
      const b = make();
      const start = Math.ceil((Date.now() + 300) / 100) * 100;
      const r = record("every1", { kind: "every", everyMs: 250, startAt: start, tz: "UTC" });
      await a.arm(r);
      await b.arm(r);
      await a.start(fire, [r]);
      await b.start(fire, [r]);
      await until(() => fired.length >= 4, "four occurrences");
      await a.disarm("every1");
      const occurrences = fired.map(([, at]) => at);
      expect(new Set(occurrences).size).toBe(occurrences.length);
      for (const [i, at] of occurrences.entries())
        if (i > 0) expect(at - (occurrences[i - 1] ?? 0)).toBe(250);
    });

    it("fires a one-off once at its instant and nothing after disarming a repeating one", async () => {
      const make = open();
      const fired: [string, number][] = [];
      const t = make();
      const at = Date.now() + 200;
      const once = record("once1", { kind: "once", at, tz: "UTC" });
      const rep = record("rep1", { kind: "every", everyMs: 200, startAt: Date.now() + 5000, tz: "UTC" });
      await t.arm(once);
      await t.arm(rep);
      await t.disarm("rep1");
      await t.start(async (id, occurrence) => void fired.push([id, occurrence]), [once]);
      await until(() => fired.length >= 1, "the one-off");
      expect(fired).toEqual([["once1", at]]);
    });

    it("fires an occurrence that fell due while no worker ran, late and once, when a worker starts", async () => {
      const make = open();
      const armer = make();
      const r = record("late1", { kind: "every", everyMs: 60_000, startAt: Date.now() + 150, tz: "UTC" });
      await armer.arm(r);
      // No worker until the occurrence has passed (BullMQ's delays are Redis's real time).
      const due = r.spec.kind === "every" ? r.spec.startAt : 0;
      await until(() => Date.now() > due + 200, "the occurrence to pass");
      const fired: number[] = [];
      const worker = make();
      // start() must keep the pending occurrence (not replace it by the next one).
      await worker.start(async (_id, occurrence) => void fired.push(occurrence), [r]);
      await until(() => fired.length >= 1, "the late occurrence");
      expect(fired[0]).toBe(r.spec.kind === "every" ? r.spec.startAt : 0);
    });
  });
}
