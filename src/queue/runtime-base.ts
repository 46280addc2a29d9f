/**
 * What both runtimes share: the options, the gateway side (`deliver`, `handleEvent`, `control`,
 * `status` through one `Dispatcher` and the event claims), the worker core built from the shared
 * options, the stop-once rule and the safety-net sweep on the clock. A runtime adds where thread
 * state lives, how woken threads are scheduled (BullMQ jobs, or an in-process scheduler) and what
 * it owns and closes.
 */
import type { InboundMessage } from "../adapters/types.js";
import { type Clock, systemClock } from "../agent/clock.js";
import { findModel } from "../agent/llm/models.js";
import type { ControlBus } from "./control-bus.js";
import { Dispatcher, defaultOnError } from "./dispatcher.js";
import { EventClaims } from "./event-claims.js";
import type { RenderJournal } from "./state/render-journal.js";
import type { DropPolicy, EventClaimStore, ThreadState, Waker } from "./state/types.js";
import type { SessionStore } from "./store/types.js";
import type {
  AgentFactory,
  AttachmentIngest,
  ControlCommand,
  ControlResult,
  DeliverResult,
  DeliveryMode,
  EventHandler,
  EventOutcome,
  InboundFormatter,
  ModelResolver,
  OwedRenderFinisher,
  RunObserver,
  RunSinkFactory,
  Runtime,
  ThreadStatus,
} from "./types.js";
import { DEFAULT_COLLECT_WINDOW_MS } from "./types.js";
import type { CompactionConfig } from "./worker/holder-env.js";
import { plainInboundFormatter } from "./worker/item-messages.js";
import type { LeaseEvent } from "./worker/tenure.js";
import { type Rewake, WorkerCore } from "./worker/worker-core.js";

/** Options shared by both runtimes. */
export interface RuntimeOptions {
  store: SessionStore;
  sinks: RunSinkFactory;
  /** Builds thread agents; required in a process that runs workers. */
  agentFactory?: AgentFactory;
  /** Lease TTL; renewed every fifth of it, lost ⅔ of it after the last confirmed renewal (`holdLease`). Default 15 s. */
  leaseTtlMs?: number;
  /** Collect-mode debounce window. Default 500 ms. */
  collectDebounceMs?: number;
  /** How often a holder re-reads control state besides pub/sub notices. Default 1 s. */
  controlPollMs?: number;
  /** Most queued messages per thread. Default `DEFAULT_INBOX_CAP`. */
  inboxCap?: number;
  dropPolicy?: DropPolicy;
  /** Mode when `deliver` gets none. Default `steer`. */
  defaultMode?: DeliveryMode;
  /**
   * The delivery mode of a thread's channel (e.g. from the channel config by the thread key's
   * platform): used when `deliver` gets no mode, and reported by `status().mode`. Default: none
   * (`defaultMode` everywhere).
   */
  modeOf?: (threadKey: string) => DeliveryMode | undefined;
  format?: InboundFormatter;
  /**
   * Fetches the files people attach into the thread's workspace and prepares pictures for the model
   * (src/queue/attachments), before `format`. Absent: files are only named to the model.
   */
  attachments?: AttachmentIngest;
  /** Default `findModel` of the model catalogue. */
  resolveModel?: ModelResolver;
  /** Automatic compaction after runs; omit to leave sessions uncompacted. */
  compaction?: CompactionConfig;
  /** Drop a thread's cached agent after this long idle. Default 10 min. */
  agentIdleMs?: number;
  /** Parallel threads per process. Default `DEFAULT_CONCURRENCY` (64): runs mostly wait on the model. */
  concurrency?: number;
  /** Interval of the safety-net sweep for lost wakes. Default 5 s. */
  sweepIntervalMs?: number;
  onError?: (error: unknown, context: string) => void;
  /**
   * Finishes what a dead run owed the chat (the render journal, docs/runtime.md): given, every run's
   * sink gets a `RenderLog` and the next holder of a thread finishes what its predecessor's runs
   * still owed. Omitted: nothing is recorded (what the chat shows is not part of the durable state).
   */
  finishOwed?: OwedRenderFinisher;
  /** Every lease event of this process's tenures (acquired, renewed, releasing, …), in order. */
  onLease?: (event: LeaseEvent) => void;
  /**
   * The time every part of the runtime reads and waits on: lease renewals, the stale-lease watch,
   * the collect window, control polls, hand-over grace, sweeps, idle eviction, item times. Default:
   * the system clock. (A Redis lease still expires on Redis's own clock.)
   */
  clock?: Clock;
  /** Names this process in event-claim owners (logs, diagnostics). Default: a random id. */
  instanceId?: string;
  /**
   * How long an event claim lasts without renewal: after a gateway dies, its platform's redelivery
   * is handled once this passed. Default 15 s.
   */
  eventClaimTtlMs?: number;
  /** Hears how each run of this process's workers ended (scheduled prompts track their answers). */
  runObserver?: RunObserver;
}

/** The parts a runtime's front is wired to: where its thread state and event claims live and how it wakes threads. */
export interface RuntimeParts {
  state: ThreadState;
  claims: EventClaimStore;
  store: SessionStore;
  bus: ControlBus;
  waker: Waker;
  /** Wakes a thread with nothing queued (a tenure then finishes what its render journal owes). */
  rewake: Rewake;
}

/** Default lease TTL of both runtimes. */
export const DEFAULT_LEASE_TTL_MS = 15_000;

export abstract class RuntimeBase implements Runtime {
  protected readonly clock: Clock;
  protected readonly onError: (error: unknown, context: string) => void;
  // Wired by the subclass's constructor (`wire`), once its state exists: a Redis runtime's state
  // comes from an overridable factory method, which cannot run before `super()`.
  private dispatcher!: Dispatcher;
  private claims!: EventClaims;
  private readonly stopSweeping = new AbortController();
  private sweeping: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;

  constructor(protected readonly o: Omit<RuntimeOptions, "store">) {
    this.onError = o.onError ?? defaultOnError;
    this.clock = o.clock ?? systemClock;
  }

  /** Builds the gateway side on the subclass's parts; its constructor calls it once. */
  protected wire(parts: RuntimeParts): void {
    const o = this.o;
    this.claims = new EventClaims({
      store: parts.claims,
      clock: this.clock,
      ...(o.instanceId !== undefined ? { instanceId: o.instanceId } : {}),
      ...(o.eventClaimTtlMs !== undefined ? { ttlMs: o.eventClaimTtlMs } : {}),
      onError: this.onError,
    });
    this.dispatcher = new Dispatcher({
      state: parts.state,
      claims: this.claims,
      waker: parts.waker,
      bus: parts.bus,
      store: parts.store,
      sinks: o.sinks,
      inboxCap: o.inboxCap,
      dropPolicy: o.dropPolicy,
      defaultMode: o.defaultMode,
      modeOf: o.modeOf,
      rewake: parts.rewake,
      onError: this.onError,
    });
  }

  deliver(inbound: InboundMessage, mode?: DeliveryMode): Promise<DeliverResult> {
    return this.dispatcher.deliver(inbound, mode);
  }

  handleEvent<T>(eventId: string, handle: EventHandler<T>): Promise<EventOutcome<T>> {
    return this.claims.once(eventId, handle);
  }

  control(threadKey: string, command: ControlCommand): Promise<ControlResult> {
    return this.dispatcher.control(threadKey, command);
  }

  status(threadKey: string): Promise<ThreadStatus> {
    return this.dispatcher.status(threadKey);
  }

  abstract start(): Promise<void>;

  /** Stops once: later calls get the same promise. */
  stop(options: { graceMs?: number } = {}): Promise<void> {
    this.stopped ??= this.doStop(options.graceMs ?? 30_000);
    return this.stopped;
  }

  /** The subclass's stop; it calls `stopSweep()` first, so a sweep never meets a closed connection. */
  protected abstract doStop(graceMs: number): Promise<void>;

  /** The worker core on the shared options; `agentFactory` is checked by the caller's `start()`. */
  protected createCore(
    parts: Omit<RuntimeParts, "claims"> & {
      agentFactory: AgentFactory;
      fenceKey: (threadKey: string) => string;
    },
    journal: RenderJournal | undefined,
  ): WorkerCore {
    const o = this.o;
    return new WorkerCore({
      state: parts.state,
      store: parts.store,
      factory: parts.agentFactory,
      sinks: o.sinks,
      format: o.format ?? plainInboundFormatter,
      attachments: o.attachments,
      resolveModel: o.resolveModel ?? findModel,
      fenceKey: parts.fenceKey,
      leaseTtlMs: o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
      collectDebounceMs: o.collectDebounceMs ?? DEFAULT_COLLECT_WINDOW_MS,
      controlPollMs: o.controlPollMs ?? 1000,
      compaction: o.compaction,
      onError: this.onError,
      onLease: o.onLease,
      clock: this.clock,
      bus: parts.bus,
      rewake: parts.rewake,
      agentIdleMs: o.agentIdleMs,
      runObserver: o.runObserver,
      ...(journal && o.finishOwed ? { journal, finishOwed: o.finishOwed } : {}),
    });
  }

  /** Runs `sweep` every `sweepIntervalMs` (default 5 s) on the clock until `stopSweep()`. */
  protected startSweeping(sweep: (everyMs: number) => Promise<unknown>): void {
    const every = this.o.sweepIntervalMs ?? 5000;
    const signal = this.stopSweeping.signal;
    const loop = async () => {
      while (!signal.aborted) {
        try {
          await this.clock.sleep(every, signal);
        } catch {
          return;
        }
        await sweep(every).catch((e: unknown) => this.onError(e, "sweeping for stranded threads"));
      }
    };
    this.sweeping = loop();
  }

  /**
   * Stops the sweep loop; resolves once a sweep in progress finished and the wake jobs of resolved
   * deliveries were added (before the subclass closes their connection).
   */
  protected async stopSweep(): Promise<void> {
    this.stopSweeping.abort();
    await Promise.all([this.sweeping, this.dispatcher?.drain()]);
  }
}
