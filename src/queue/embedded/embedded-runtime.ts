/**
 * The embedded runtime (no `REDIS_URL`): the same `Runtime` contract in one process, with an
 * in-memory inbox and leases, an in-process job queue and, by default, the JSONL file store. The
 * delivery modes, ordering and control semantics are the Redis runtime's, because both run the
 * same dispatcher and holder code over the `ThreadState` primitives.
 *
 * What it does not have: messages queued but not yet in a session are lost if the process dies
 * (sessions on disk survive).
 */

import { join } from "node:path";
import { LocalControlBus } from "../control-bus.js";
import { RuntimeBase, type RuntimeOptions } from "../runtime-base.js";
import { MemoryRenderJournal } from "../state/render-journal.js";
import type { Waker } from "../state/types.js";
import { FileSessionStore } from "../store/file-store.js";
import type { SessionStore } from "../store/types.js";
import { DEFAULT_CONCURRENCY, type WorkerCore } from "../worker/worker-core.js";
import { LocalScheduler } from "./local-scheduler.js";
import { MemoryEventClaimStore } from "./memory-event-claims.js";
import { MemoryThreadState } from "./memory-thread-state.js";

export interface EmbeddedRuntimeOptions extends Omit<RuntimeOptions, "store"> {
  /**
   * The session store. Default: a `FileSessionStore` under `dataDir` whose fence check is this
   * runtime's lease table. A store passed here should be given `fenceCheck` the same way.
   */
  store?: SessionStore;
  /** Where the default file store keeps sessions. Default `./data`. */
  dataDir?: string;
}

/** The embedded runtime's waker: schedules a woken thread once `start()` made a scheduler. */
class SchedulerWaker implements Waker {
  scheduler: LocalScheduler | undefined;
  async wake(threadKey: string): Promise<void> {
    this.scheduler?.add(threadKey);
  }
}

export class EmbeddedRuntime extends RuntimeBase {
  readonly state: MemoryThreadState;
  readonly store: SessionStore;
  private readonly ownsStore: boolean;
  private readonly bus = new LocalControlBus();
  private readonly waker = new SchedulerWaker();
  private core: WorkerCore | undefined;
  private readonly journal: MemoryRenderJournal | undefined;

  constructor(protected override readonly o: EmbeddedRuntimeOptions) {
    super(o);
    this.state = new MemoryThreadState({ clock: this.clock });
    this.ownsStore = o.store === undefined;
    this.store =
      o.store ??
      new FileSessionStore({
        dataDir: o.dataDir ?? "./data",
        fenceCheck: (threadKey, fence) => this.fenceCheck(threadKey, fence.token),
      });
    if (o.finishOwed) {
      const dataDir = o.store ? o.dataDir : (o.dataDir ?? "./data");
      this.journal = new MemoryRenderJournal({
        holds: (threadKey, token) => this.state.holds(threadKey, token),
        // A dot-name is never a thread directory of the file store.
        ...(dataDir !== undefined ? { dir: join(dataDir, ".render-journal") } : {}),
      });
    }
    const claims = new MemoryEventClaimStore({ clock: this.clock });
    this.wire({
      state: this.state,
      claims,
      store: this.store,
      bus: this.bus,
      waker: this.waker,
      rewake: (t) => this.rewake(t),
    });
  }

  /** The fence check to give a session store passed in `store`. */
  fenceCheck(threadKey: string, token: string): boolean {
    return this.state.holds(threadKey, token);
  }

  /** Sets a thread's wake flag and queues its wake job (a no-op until `start()` made the scheduler). */
  private async rewake(threadKey: string): Promise<void> {
    this.state.setWake(threadKey, `rewake:${this.clock.now()}`);
    this.waker.scheduler?.add(threadKey);
  }

  /** Starts running threads; messages delivered before `start()` wait in the inbox. */
  async start(): Promise<void> {
    if (this.core) return;
    const o = this.o;
    if (!o.agentFactory)
      throw new Error("EmbeddedRuntime.start() needs `agentFactory` to build thread agents.");
    const rewake = (threadKey: string) => this.rewake(threadKey);
    const parts = { state: this.state, store: this.store, bus: this.bus, waker: this.waker, rewake };
    const core = this.createCore(
      { ...parts, agentFactory: o.agentFactory, fenceKey: (t) => `lease:${t}`, rewake },
      this.journal,
    );
    this.core = core;
    const scheduler = new LocalScheduler(
      o.concurrency ?? DEFAULT_CONCURRENCY,
      (threadKey) => core.process(threadKey, { rerun: false }),
      this.onError,
    );
    this.waker.scheduler = scheduler;
    // Messages delivered before start, and threads a failed tenure left behind, get (re)woken; so
    // do threads whose runs owed the chat when a previous process stopped (their holder finishes it).
    for (const t of this.state.strandedThreads()) scheduler.add(t);
    if (this.journal && o.finishOwed) for (const t of await this.journal.load()) scheduler.add(t);
    this.startSweeping(async () => {
      for (const t of this.state.strandedThreads()) await rewake(t);
    });
  }

  protected async doStop(graceMs: number): Promise<void> {
    await this.stopSweep();
    const closing: Promise<unknown>[] = [];
    if (this.core) closing.push(this.core.shutdown(graceMs));
    if (this.waker.scheduler) closing.push(this.waker.scheduler.close());
    await Promise.all(closing);
    await this.bus.close();
    if (this.ownsStore) await this.store.close();
  }
}
