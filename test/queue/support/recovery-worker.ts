/**
 * The worker of the recovery tests (render, approval and notice recovery): a real `WorkerCore`
 * whose every call to the state, the session store, the render journal and the chat goes through
 * its `Mortal`, with the real renderer and owed-render finisher, on a test clock; and `runUntil`,
 * which moves that clock until a promise settles while real file I/O lands between steps.
 */
import { expect } from "vitest";
import { finishOwedRender } from "../../../src/adapters/render/owed.js";
import type { MemoryRateLimiter } from "../../../src/adapters/render/rate-limiter.js";
import { RunRenderer } from "../../../src/adapters/render/run-renderer.js";
import type { ChannelAdapter } from "../../../src/adapters/types.js";
import { silentLogger } from "../../../src/agent/logger.js";
import { LocalControlBus } from "../../../src/queue/control-bus.js";
import type { MemoryThreadState } from "../../../src/queue/embedded/memory-thread-state.js";
import type { RenderJournal } from "../../../src/queue/state/render-journal.js";
import type { SessionStore } from "../../../src/queue/store/types.js";
import type { AgentFactory } from "../../../src/queue/types.js";
import { plainInboundFormatter } from "../../../src/queue/worker/item-messages.js";
import { WorkerCore } from "../../../src/queue/worker/worker-core.js";
import type { ManualClock } from "../../support/manual-clock.js";
import { resolveTestModel } from "./harness.js";
import type { Mortal } from "./mortal.js";

export interface RecoveryWorkerParts {
  name: string;
  mortal: Mortal;
  /** The chat as this worker sees it (already wrapped by `mortal`). */
  adapter: ChannelAdapter;
  state: MemoryThreadState;
  store: SessionStore;
  journal: RenderJournal;
  clock: ManualClock;
  limiter: MemoryRateLimiter;
  factory: AgentFactory;
  leaseTtlMs: number;
  /** Errors of a live worker are collected here (a dead one's are its death, not a finding). */
  errors: string[];
}

/** A worker core wired for the recovery tests; see the file comment. */
export function recoveryWorkerCore(p: RecoveryWorkerParts): WorkerCore {
  const { adapter, clock, limiter, mortal } = p;
  return new WorkerCore({
    state: mortal.wrap(p.state),
    store: mortal.wrap(p.store),
    journal: mortal.wrap<RenderJournal>(p.journal),
    finishOwed: (threadKey, snapshot, log, saved, posted) =>
      finishOwedRender(
        { adapter, threadKey, clock, limiter, logger: silentLogger },
        snapshot,
        log,
        saved,
        posted,
      ),
    factory: p.factory,
    sinks: (threadKey, _runId, log) =>
      new RunRenderer({ adapter, threadKey, clock, limiter, editIntervalMs: 500, ...(log ? { log } : {}) }),
    format: plainInboundFormatter,
    resolveModel: resolveTestModel,
    fenceKey: (t) => `lease:${t}`,
    leaseTtlMs: p.leaseTtlMs,
    collectDebounceMs: 100,
    controlPollMs: 250,
    compaction: undefined,
    clock,
    onError: (e, context) => {
      if (!mortal.dead) p.errors.push(`${p.name} ${context}: ${e instanceof Error ? e.message : String(e)}`);
    },
    bus: new LocalControlBus(),
    rewake: async () => {},
  });
}

/**
 * Moves `clock` in 50 ms steps until `done` settles (a rerun waits for the dead lease to expire),
 * giving real file I/O a moment between steps so the clock never outruns it.
 */
export async function runClockUntil(clock: ManualClock, done: Promise<unknown>): Promise<void> {
  let over = false;
  void done.finally(() => {
    over = true;
  });
  for (let i = 0; i < 2000 && !over; i++) {
    await clock.advance(50);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  expect(over).toBe(true);
  await done;
}
