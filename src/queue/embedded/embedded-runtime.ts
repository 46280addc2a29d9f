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
import type { InboundMessage } from "../../adapters/types.js";
import { type Clock, systemClock } from "../../agent/clock.js";
import { findModel } from "../../agent/llm/models.js";
import { LocalControlBus } from "../control-bus.js";
import { Dispatcher, defaultOnError } from "../dispatcher.js";
import { EventClaims } from "../event-claims.js";
import type { RuntimeOptions } from "../redis/redis-runtime.js";
import { MemoryRenderJournal } from "../state/render-journal.js";
import type { Waker } from "../state/types.js";
import { FileSessionStore } from "../store/file-store.js";
import type { SessionStore } from "../store/types.js";
import type {
  ControlCommand,
  ControlResult,
  DeliverResult,
  DeliveryMode,
  EventOutcome,
  Runtime,
  ThreadStatus,
} from "../types.js";
import { DEFAULT_COLLECT_WINDOW_MS } from "../types.js";
import { plainInboundFormatter } from "../worker/item-messages.js";
import { DEFAULT_CONCURRENCY, WorkerCore } from "../worker/worker-core.js";
import { LocalScheduler } from "./local-scheduler.js";
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

export class EmbeddedRuntime implements Runtime {
  readonly state: MemoryThreadState;
  readonly store: SessionStore;
  private readonly ownsStore: boolean;
  private readonly bus = new LocalControlBus();
  private readonly dispatcher: Dispatcher;
  private readonly claims: EventClaims;
  private readonly onError: (error: unknown, context: string) => void;
  private scheduler: LocalScheduler | undefined;
  private core: WorkerCore | undefined;
  private readonly clock: Clock;
  private readonly stopSweeping = new AbortController();
  private sweeping: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private readonly journal: MemoryRenderJournal | undefined;

  constructor(private readonly o: EmbeddedRuntimeOptions) {
    this.onError = o.onError ?? defaultOnError;
    this.clock = o.clock ?? systemClock;
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
    const waker: Waker = { wake: async (threadKey) => this.scheduler?.add(threadKey) };
    this.claims = new EventClaims({
      state: this.state,
      clock: this.clock,
      ...(o.instanceId !== undefined ? { instanceId: o.instanceId } : {}),
      ...(o.eventClaimTtlMs !== undefined ? { ttlMs: o.eventClaimTtlMs } : {}),
      onError: this.onError,
    });
    this.dispatcher = new Dispatcher({
      state: this.state,
      claims: this.claims,
      waker,
      bus: this.bus,
      store: this.store,
      sinks: o.sinks,
      inboxCap: o.inboxCap,
      dropPolicy: o.dropPolicy,
      defaultMode: o.defaultMode,
      modeOf: o.modeOf,
      onError: this.onError,
    });
  }

  /** The fence check to give a session store passed in `store`. */
  fenceCheck(threadKey: string, token: string): boolean {
    return this.state.holds(threadKey, token);
  }

  deliver(inbound: InboundMessage, mode?: DeliveryMode): Promise<DeliverResult> {
    return this.dispatcher.deliver(inbound, mode);
  }

  handleEvent<T>(eventId: string, handle: () => Promise<T>): Promise<EventOutcome<T>> {
    return this.claims.once(eventId, handle);
  }

  control(threadKey: string, command: ControlCommand): Promise<ControlResult> {
    return this.dispatcher.control(threadKey, command);
  }

  status(threadKey: string): Promise<ThreadStatus> {
    return this.dispatcher.status(threadKey);
  }

  /** Starts running threads; messages delivered before `start()` wait in the inbox. */
  async start(): Promise<void> {
    if (this.core) return;
    const o = this.o;
    if (!o.agentFactory)
      throw new Error("EmbeddedRuntime.start() needs `agentFactory` to build thread agents.");
    const rewake = async (threadKey: string) => {
      this.state.setWake(threadKey, `rewake:${this.clock.now()}`);
      this.scheduler?.add(threadKey);
    };
    const core = new WorkerCore({
      state: this.state,
      store: this.store,
      factory: o.agentFactory,
      sinks: o.sinks,
      format: o.format ?? plainInboundFormatter,
      resolveModel: o.resolveModel ?? findModel,
      fenceKey: (t) => `lease:${t}`,
      leaseTtlMs: o.leaseTtlMs ?? 15_000,
      collectDebounceMs: o.collectDebounceMs ?? DEFAULT_COLLECT_WINDOW_MS,
      controlPollMs: o.controlPollMs ?? 1000,
      compaction: o.compaction,
      onError: this.onError,
      onLease: o.onLease,
      clock: this.clock,
      bus: this.bus,
      rewake,
      agentIdleMs: o.agentIdleMs,
      ...(this.journal && o.finishOwed ? { journal: this.journal, finishOwed: o.finishOwed } : {}),
    });
    this.core = core;
    this.scheduler = new LocalScheduler(
      o.concurrency ?? DEFAULT_CONCURRENCY,
      (threadKey) => core.process(threadKey, { rerun: false }),
      this.onError,
    );
    // Messages delivered before start, and threads a failed tenure left behind, get (re)woken; so
    // do threads whose runs owed the chat when a previous process stopped (their holder finishes it).
    for (const t of this.state.strandedThreads()) this.scheduler.add(t);
    if (this.journal && o.finishOwed) for (const t of await this.journal.load()) this.scheduler.add(t);
    this.sweeping = this.sweepLoop(o.sweepIntervalMs ?? 5000, rewake);
  }

  /** Re-wakes stranded threads every `every` ms on the clock until `stop()`. */
  private async sweepLoop(every: number, rewake: (threadKey: string) => Promise<void>): Promise<void> {
    const signal = this.stopSweeping.signal;
    while (!signal.aborted) {
      try {
        await this.clock.sleep(every, signal);
      } catch {
        return;
      }
      for (const t of this.state.strandedThreads()) await rewake(t);
    }
  }

  stop(options: { graceMs?: number } = {}): Promise<void> {
    this.stopped ??= this.doStop(options.graceMs ?? 30_000);
    return this.stopped;
  }

  private async doStop(graceMs: number): Promise<void> {
    this.stopSweeping.abort();
    await this.sweeping;
    const scheduler = this.scheduler;
    const closing: Promise<unknown>[] = [];
    if (this.core) closing.push(this.core.shutdown(graceMs));
    if (scheduler) closing.push(scheduler.close());
    await Promise.all(closing);
    await this.bus.close();
    if (this.ownsStore) await this.store.close();
  }
}
