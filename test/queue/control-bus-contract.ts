/**
 * The `ControlBus` contract, run against every implementation (control-bus.test.ts): a notice
 * "thread X changed" published by one process reaches every subscriber of every process sharing
 * the bus (the publisher's own included), carrying the thread key and nothing else; unsubscribing
 * and closing stop the notices; one handler's failure does not stop the others. `make()` returns
 * `bus`, `other` (a second process's view: the in-process bus is its own other) and `ready()`,
 * which resolves once the subscriptions made so far are live (Redis subscribes asynchronously).
 * No order between notices is promised (on a cluster two publishes may go through two nodes), and
 * none is needed: a notice only says "re-read the thread's control state".
 */
import { describe, expect, it } from "vitest";
import type { ControlBus } from "../../src/queue/control-bus.js";
import { subjectPerTest } from "../support/contract-subject.js";

export interface BusSubject {
  bus: ControlBus;
  other: ControlBus;
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The notices a handler got, and a wait for one of them. */
interface Received {
  keys: string[];
  next(threadKey: string): Promise<void>;
  unsubscribe(): void;
}

function receive(bus: ControlBus): Received {
  const keys: string[] = [];
  const waiting = new Map<string, () => void>();
  const unsubscribe = bus.subscribe((threadKey) => {
    keys.push(threadKey);
    waiting.get(threadKey)?.();
  });
  return {
    keys,
    unsubscribe,
    next: (threadKey) =>
      keys.includes(threadKey)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.set(threadKey, resolve)),
  };
}

let seq = 0;
const thread = () => `slack:T1:C${++seq}:1712.${seq}`;

export function controlBusContract(name: string, make: () => Promise<BusSubject>): void {
  describe(`ControlBus contract: ${name}`, () => {
    const open = subjectPerTest(make);

    it("delivers a notice with its thread key to every subscriber, in the publishing process and in another", async () => {
      const { bus, other, ready } = await open();
      const here = receive(bus);
      const there = receive(other);
      await ready();
      const t = "telegram:-100:{7}:ünï";
      await bus.publish(t);
      await Promise.all([here.next(t), there.next(t)]);
      const back = thread();
      await other.publish(back);
      await Promise.all([here.next(back), there.next(back)]);
      expect(here.keys).toEqual([t, back]);
      expect(there.keys).toEqual([t, back]);
    });

    it("stops calling a handler once it unsubscribed; the others still get every notice", async () => {
      const { bus, ready } = await open();
      const gone = receive(bus);
      const stays = receive(bus);
      await ready();
      const before = thread();
      await bus.publish(before);
      await Promise.all([gone.next(before), stays.next(before)]);
      gone.unsubscribe();
      gone.unsubscribe();
      const after = thread();
      await bus.publish(after);
      await stays.next(after);
      expect(gone.keys).toEqual([before]);
      expect(stays.keys).toEqual([before, after]);
    });

    it("calls the other handlers when one throws", async () => {
      const { bus, ready } = await open();
      bus.subscribe(() => {
        throw new Error("a handler's bug");
      });
      const stays = receive(bus);
      await ready();
      const t = thread();
      await bus.publish(t);
      await stays.next(t);
      expect(stays.keys).toEqual([t]);
    });

    it("calls no handler of a closed bus; another process's bus goes on", async () => {
      const { bus, other, ready } = await open();
      const closed = receive(bus);
      const witness = other === bus ? undefined : receive(other);
      await ready();
      await bus.close();
      const t = thread();
      await other.publish(t);
      await witness?.next(t);
      expect(closed.keys).toEqual([]);
    });
  });
}
