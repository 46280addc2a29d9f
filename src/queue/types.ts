/**
 * The runtime contract: how the gateway hands chat messages to agents and controls them, whichever
 * runtime runs them (Redis + BullMQ across processes, or embedded in one process). Both
 * implementations pass the same contract suite (test/queue/runtime-contract.ts).
 */
import type { InboundMessage } from "../adapters/types.js";
import type { Agent } from "../agent/agent.js";
import type { Model, ThinkingLevel, UserMessage } from "../agent/llm/types.js";
import type { AgentEvent, AgentMessage } from "../agent/types.js";
import type {
  ControlOutcome,
  DeliveryMode,
  SessionEvent,
  SessionEventResult,
  ThreadStatusView,
} from "../extensions/types.js";
import type { ThreadMeta } from "./store/types.js";

// One definition (src/extensions/types.ts), where the commands and the command parser name it too.
export type { DeliveryMode } from "../extensions/types.js";

/** Most messages a thread's inbox holds for its busy agent: the runtime's and the channels' default. */
export const DEFAULT_INBOX_CAP = 20;

/** How long `collect` waits for more messages to merge (ms): the runtime's and the channels' default. */
export const DEFAULT_COLLECT_WINDOW_MS = 500;

/**
 * One entry of a thread's inbox. `seq` numbers the thread's items in delivery order (it never
 * repeats, also across `/new`); `at` is when it was queued (ms, the Redis clock in Redis mode).
 * `kind: "newSession"` is the `/new` command and `kind: "compact"` the `/compact` command (with
 * its `instructions`), ordered with the messages around them.
 */
export interface InboxItem {
  seq: number;
  at: number;
  mode: DeliveryMode;
  kind: "message" | "newSession" | "compact";
  message?: InboundMessage;
  /** `compact` only: what the summary should pay particular attention to. */
  instructions?: string;
}

/** A message the runtime dropped or discarded, described for a notice and for the caller. */
export interface DroppedMessage {
  eventId: string;
  userName: string;
  /** The first 80 characters of the text. */
  preview: string;
}

/**
 * What `deliver` did. The message is durable in Redis (or the embedded inbox) for `queued`, so an
 * adapter may acknowledge it to the platform (👀). `idle` is true when no run held the thread at
 * that moment (a run starts for it); `dropped` lists older messages the cap or an interrupt
 * removed (the thread was told). `refused`: the inbox was full and the drop policy is `new`, so
 * this message was not queued (the thread was told). `stopped`: the text was `stop`/`/stop`.
 */
export type DeliverResult =
  | { status: "queued"; seq: number; depth: number; idle: boolean; dropped: DroppedMessage[] }
  | { status: "duplicate" }
  | { status: "refused"; depth: number }
  | { status: "stopped"; wasRunning: boolean; discarded: DroppedMessage[] };

/** Commands the gateway sends to a thread wherever its agent runs. */
export type ControlCommand =
  /** Aborts the run in progress (a running tool sees its AbortSignal); queued messages are discarded. */
  | { type: "stop" }
  /** `provider/modelId` (or anything `resolveModel` accepts); applies from the running agent's next LLM call. */
  | { type: "setModel"; model: string }
  | { type: "setThinkingLevel"; level: ThinkingLevel }
  /** Stops like `stop`, then starts a fresh session; older sessions are kept. */
  | { type: "newSession" }
  /**
   * Compacts the thread's session now (`/compact [instructions]`), even below the threshold. It is
   * queued in the thread's inbox: the lease holder runs it after the run in progress (and the
   * messages queued before it), an idle thread gets a short tenure for it. The thread then gets a
   * notice with the tokens before and after, or why nothing was compacted. Queued messages are not
   * discarded.
   */
  | { type: "compact"; instructions?: string }
  /**
   * Wakes the thread so that a tenure finishes what its render journal owes the chat (an answer
   * the platform refused to show): nothing runs, no model is called. A scheduled prompt's answer
   * whose post failed is retried this way.
   */
  | { type: "finishRenders" };

/**
 * The runtime's answer to a control command: the extensions' `ControlOutcome` (one definition) with
 * the queued messages `stop` and `newSession` discarded themselves rather than their count.
 */
export interface ControlResult extends Omit<ControlOutcome, "discarded" | "notes"> {
  discarded: DroppedMessage[];
}

/**
 * The runtime side of a thread's `/status`: the fields of the extensions' `ThreadStatusView` (one
 * definition) the runtime knows, plus the store's metadata the host turns into the rest.
 */
export interface ThreadStatus extends Pick<ThreadStatusView, "inboxDepth" | "contextTokens"> {
  /** A worker holds the thread, or a run whose worker died waits for recovery. */
  active: boolean;
  /** The store's metadata (model, thinking level, usage totals); undefined for a new thread. */
  meta: ThreadMeta | undefined;
  /**
   * The thread's delivery mode for messages that arrive while it is busy, resolved where every
   * delivery resolves it: the runtime's `modeOf(threadKey)` when given, else its `defaultMode`.
   */
  mode: DeliveryMode;
}

/**
 * Where one run's output goes: the channel renderer in production, a recording sink in tests.
 * `onEvent` receives every agent event in order and must not throw (errors are caught and
 * logged); `onNotice` posts a short runtime notice into the thread (dropped messages, a stop);
 * `close` is called once when the run ends, after its last event.
 */
export interface RunSink {
  onEvent(event: AgentEvent): void;
  onNotice(text: string): void | Promise<void>;
  close(): void | Promise<void>;
}

// The render journal's log: an adapter contract (src/adapters/types.ts), since renderers record into it.
export type { RenderLog } from "../adapters/types.js";

import type { RenderLog } from "../adapters/types.js";

/**
 * Creates the sink of one run (`runId` is unique) or of one notice outside a run (`notice:<uuid>`).
 * `log` is given when a lease holder creates it: the sink must record there what it owes the chat
 * (see `RenderLog`); sinks created without one (the gateway's notices) record nothing.
 */
export type RunSinkFactory = (threadKey: string, runId: string, log?: RenderLog) => RunSink;

/**
 * Finishes what a dead run owed the chat, from the last snapshot its sink recorded (`RenderLog.owe`):
 * edits the messages it showed to their final text, sends what was never sent (recording each new
 * message id in `log` before the next request), removes what must not stay. Resolves true once the
 * chat shows it, false when the platform refused for now (it stays owed; the thread's next tenure
 * tries again). `saved` tells whether the session holds the assistant message of that time stamp
 * (a reply recorded as shown but never saved is answered again, so it must not stay). `posted` maps
 * the idempotency keys of the run's posts to the ids they got (`RenderLog.posted`): a post the
 * snapshot records as intended but without its id is found there first. Must not throw.
 */
export type OwedRenderFinisher = (
  threadKey: string,
  snapshot: unknown,
  log: RenderLog,
  saved: (assistantTimestamp: number) => boolean,
  posted: ReadonlyMap<string, string>,
) => Promise<boolean>;

/**
 * What an `AgentFactory` receives. `messages` is the session's context; `model` and `thinkingLevel`
 * are the thread's settings (`model` undefined: the factory's default). `signal` aborts when the
 * runtime drops the agent (idle eviction, shutdown).
 *
 * The factory wires neither the inbox nor compaction: while a worker holds the thread, the runtime
 * adds them to the agent itself with `Agent.addHooks` (position `first`): the thread's inbox as
 * steering and follow-up sources (drained at the engine's checkpoints) and per-call compaction as
 * the outermost `transformContext` (it sees the loop's full history; the factory's own transform,
 * e.g. the extensions' `context` handlers, sees the compacted view). Hooks the factory passes to
 * `new Agent(...)` stay as they are.
 */
export interface AgentFactoryContext {
  threadKey: string;
  meta: ThreadMeta | undefined;
  messages: AgentMessage[];
  model: string | undefined;
  thinkingLevel: ThinkingLevel | undefined;
  signal: AbortSignal;
  /**
   * Appends a `custom` entry (`customType`, `data`; never sent to the model) to the thread's current
   * session, after the entries of the run in progress, through the holder's lease-fenced writer
   * (always set by the runtime). Resolves once it is stored; rejects, writing nothing, when no
   * holder drives this agent right now or the lease was lost. For approval audit entries and other
   * extension state written during a run.
   */
  appendEntry?: (customType: string, data?: unknown) => Promise<void>;
  /**
   * The chat messages the current run answers, in the order the agent took them: those that started
   * it, then those steered or followed up into it (always set by the runtime). A recovery run lists
   * the messages it found unanswered in the session. Empty between runs. The last one is the
   * latest asker (e.g. who an approval request names).
   */
  currentInbound?: () => InboundMessage[];
  /**
   * The render-journal log of a message outside the runs' answers (an approval request), keyed
   * `id` (unique in the thread, e.g. `approval:<id>`), fenced by the lease of the tenure driving the
   * agent now (always set by the runtime). Undefined when no tenure drives it or the runtime keeps
   * no journal. What is recorded there is finished by the thread's next holder if this one dies
   * (docs/runtime.md, "The render journal").
   */
  renderLog?: (id: string) => RenderLog | undefined;
}

/**
 * What a factory may return instead of a bare `Agent`: the agent plus optional per-thread hooks.
 * - `prepareRun(prompts)` runs before every `agent.prompt` with the user messages about to start a
 *   run and returns the messages to prompt with: messages it adds go before the prompts, which are
 *   sent as they are (the runtime tracks delivery by them); it may also change the agent, e.g. its
 *   system prompt. `ThreadExtensions.prepareRun` (`before_agent_start`) fits as is. A throw is
 *   reported and the prompts go alone. Not called for recovery or retry runs.
 * - `onSessionEvent(event)` hears `session_start` (an agent was built for the session: first use
 *   in this process, or after eviction), `session_before_switch` / `session_switch` around `/new`
 *   (a `cancel` keeps the session), `session_before_compact` / `session_compact` around every
 *   compaction (a `cancel` skips it) and `session_shutdown` (the agent is dropped):
 *   `ThreadExtensions.emitSession` fits as is. Awaited; a throw is reported and ignored.
 */
export interface ThreadAgent {
  agent: Agent;
  prepareRun?: (prompts: AgentMessage[]) => AgentMessage[] | Promise<AgentMessage[]>;
  onSessionEvent?: SessionEventHook;
}

/**
 * Receives session events (one definition: the extensions' `SessionEvent`, so
 * `ThreadExtensions.emitSession` fits as is); awaited by the runtime. A throw is reported and
 * treated as no answer; a `session_before_*` answer with `cancel` stops the compaction (it is
 * ignored for a switch).
 */
export type SessionEventHook = (
  event: SessionEvent,
  // biome-ignore lint/suspicious/noConfusingVoidType: observing hooks return nothing.
) => Promise<SessionEventResult | undefined | void> | SessionEventResult | undefined | void;

/**
 * Builds the agent of a thread (system prompt, tools, model resolution are the factory's business):
 * a bare `Agent`, or a `ThreadAgent` with per-thread hooks.
 */
export type AgentFactory = (ctx: AgentFactoryContext) => Agent | ThreadAgent | Promise<Agent | ThreadAgent>;

/**
 * How a run ended, for what tracks runs beyond the chat (scheduled prompts). `inbound`: the chat
 * messages it answered, in the order it took them. `outcome`: `answered` (its last reply ended
 * normally), `failed` (the model or the run failed; `error` says how), `stopped` (aborted, or handed
 * over to another worker unfinished). `answer`: the text of its last reply ("" for none). `shown`:
 * the platform confirmed everything the run rendered; false while something is owed (the render
 * journal keeps it, and the thread's next tenure posts it: `RunObserver.renderFinished` says when).
 */
export interface RunReport {
  threadKey: string;
  runId: string;
  inbound: InboundMessage[];
  outcome: "answered" | "failed" | "stopped";
  error?: string;
  answer: string;
  shown: boolean;
}

/**
 * Hears how runs end, in the worker process that ran them. `runEnded` once per run, after its sink
 * closed; `renderFinished` when a later tenure finished what a run still owed the chat (its record
 * cleared). Must not throw and must not block: both are called synchronously from the worker.
 */
export interface RunObserver {
  runEnded(report: RunReport): void;
  renderFinished(threadKey: string, runId: string): void;
}

/** What the ingest of a run's new messages needs from the worker (`AttachmentIngest.ingest`). */
export interface IngestRequest {
  threadKey: string;
  /** The chat messages a take delivered, in order. */
  messages: InboundMessage[];
  /** The model the agent calls next (pictures go to it only when its `input` has `image`). */
  model: Model;
  /**
   * Posts a notice into the thread (journaled like the holder's other notices); resolves once it
   * is shown or recorded as owed. Never rejects.
   */
  notify(text: string): Promise<void>;
  /** Aborts when the run is stopped or the worker lets the thread go. */
  signal: AbortSignal;
}

/**
 * Turns the attachments of taken messages into files in the thread's workspace and pictures for the
 * model, before the messages are formatted (src/queue/attachments). Resolves with the messages to
 * format, in the same order: those with attachments carry what became of each file. Never rejects:
 * what could not be taken is said in the thread and named to the model.
 */
export interface AttachmentIngest {
  ingest(request: IngestRequest): Promise<InboundMessage[]>;
}

/** Turns inbound chat messages into the user message the agent sees (one for a merged `collect` group). */
export type InboundFormatter = (messages: InboundMessage[]) => UserMessage;

/** Resolves a model reference (`provider/modelId`) for a running agent; undefined when unknown. */
export type ModelResolver = (ref: string) => Model | undefined;

/** What `Runtime.handleEvent` did: ran the handler (its value), or found the event handled already. */
export type EventOutcome<T> = { status: "handled"; value: T } | { status: "duplicate" };

/**
 * A platform event's handler under its claim. `waited`: the claim was not free at the first try
 * (another attempt at the same event held it, and this one waited for its outcome).
 */
export type EventHandler<T> = (claim: { readonly waited: boolean }) => Promise<T>;

/**
 * One runtime: the gateway side (`deliver`, `control`, `status`) and, when the process runs
 * workers, the worker side (`start` begins taking threads, `stop` hands them over).
 *
 * `deliver` never throws for bad input from a platform; it rejects only when the message could not
 * be made durable (Redis down), in which case the adapter must not acknowledge it.
 */
export interface Runtime {
  start(): Promise<void>;
  /**
   * Stops taking threads, lets running turns reach a checkpoint within `graceMs` (default 30 s),
   * aborts the rest so another worker resumes them, and closes connections.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
  deliver(inbound: InboundMessage, mode?: DeliveryMode): Promise<DeliverResult>;
  /**
   * Handles one platform event once across every gateway process: the runtime's one dedupe point
   * (see event-claims.ts). `handle` runs under a short claim renewed while it works; `duplicate`
   * when the event was handled already. A `deliver` of the same event id inside `handle` does not
   * claim it again. Rejects (do not acknowledge the event) when `handle` threw, when another live
   * attempt still holds it after the wait, or when the runtime's state is unreachable. `handle` is
   * told whether the claim waited for another attempt first (what it read before may be stale).
   */
  handleEvent<T>(eventId: string, handle: EventHandler<T>): Promise<EventOutcome<T>>;
  control(threadKey: string, command: ControlCommand): Promise<ControlResult>;
  status(threadKey: string): Promise<ThreadStatus>;
}
