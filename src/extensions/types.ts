/**
 * The extension API: what an extension module sees (`ExtensionAPI`), the events it can handle and
 * what each handler may return, the per-thread context handed to handlers, commands and tools
 * (`ExtensionContext`), and the host interface the runtime implements so that thread-bound actions
 * (posting, persisting entries, changing settings) reach the right place (`ExtensionHost`).
 *
 * One loaded extension serves every thread of the process: its factory runs once, and each handler
 * call receives the context of the thread it is working for.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { AgentOptions } from "../agent/agent.js";
import { SwitchboardError } from "../agent/errors.js";
import type { ImageContent, Model, StreamFunction, TextContent, ThinkingLevel } from "../agent/llm/types.js";
import type { StructuredLogger } from "../agent/logger.js";
import type { CustomMessage } from "../agent/session/messages.js";
import type {
  AgentEvent,
  AgentMessage,
  AgentTool,
  AgentToolResult,
  AgentToolUpdateCallback,
} from "../agent/types.js";
import type {
  CompactOutcome,
  ControlOutcome,
  DeliverAs,
  ExtensionMessage,
  ThreadSettings,
  ThreadStatusView,
  ThreadUser,
  ThreadView,
} from "./thread-values.js";

export type {
  CompactOutcome,
  ControlOutcome,
  DeliverAs,
  DeliveryMode,
  ExtensionMessage,
  ThreadSettings,
  ThreadStatusView,
  ThreadUser,
  ThreadView,
} from "./thread-values.js";

// ---------------------------------------------------------------------------------------------
// Threads and the host
// ---------------------------------------------------------------------------------------------

/** Options of `post`. */
export interface HostPostOptions {
  format?: "markdown" | "plain";
}

/**
 * A message the chat must end up showing in a known final form whatever worker dies when (the
 * worker side's render journal, docs/runtime.md). `post` records the post's intent (a fresh
 * idempotency key) and `ifStopped` (the text the message must end with if this worker dies from
 * now on) before posting `text`, and the message id the instant the platform answers; `finish`
 * records `text` as the final form, edits the message to it and, once the platform confirmed,
 * forgets the record. If the worker dies in between, the thread's next holder finds the post by
 * its key where the platform allows (Discord's nonce, Slack's metadata), edits it to the recorded
 * final text (or posts that text when the post never happened) and forgets it: once.
 */
export interface DurableMessage {
  post(text: string, ifStopped: string): Promise<string>;
  /** Rejects when the platform refused the edit (the record then stays owed for the next holder). */
  finish(text: string): Promise<void>;
}

/**
 * The runtime side of one thread, implemented by whoever runs extensions (the gateway for commands
 * and reactions, the worker for agent hooks and tools). Every method may reject; the runner turns
 * rejections into reports, never into a crash.
 *
 * Contract of each group:
 * - chat (`post`, `edit`, `react`, `reply`): into the thread; `post` resolves with an opaque message
 *   reference usable with `edit`/`react` and equal to the `messageId` of reactions on it.
 * - `sendMessage`: used only when no agent is attached to the binding (the gateway); the host queues
 *   the message for the thread's agent (steer/followUp into the inbox, nextTurn with the next run).
 * - `appendEntry`: appends a `custom` session entry to the thread's current session (worker side).
 * - settings: `getSettings` reads them, `setModel`/`setThinkingLevel` persist them per thread and
 *   make a running agent use them from its next LLM call.
 * - runtime: `stop`/`newSession` act like the runtime's control commands; `deliver` queues chat text
 *   as if the user wrote it with that delivery mode; `compact` compacts the current session;
 *   `status` describes the thread.
 */
export interface ExtensionHost {
  readonly thread: ThreadView;
  post(text: string, options?: HostPostOptions): Promise<string>;
  edit(ref: string, text: string, options?: HostPostOptions): Promise<void>;
  react(ref: string, emoji: string): Promise<void>;
  /** Answers the person who issued a command (ephemerally where the platform can). */
  reply(text: string): Promise<void>;
  sendMessage(message: CustomMessage, deliverAs: DeliverAs): Promise<void>;
  appendEntry(customType: string, data: unknown): Promise<void>;
  getSettings(): Promise<ThreadSettings>;
  setModel(ref: string): Promise<void>;
  setThinkingLevel(level: ThinkingLevel): Promise<void>;
  stop(): Promise<ControlOutcome>;
  newSession(): Promise<ControlOutcome>;
  deliver(text: string, mode: "steer" | "followUp"): Promise<void>;
  compact(instructions?: string): Promise<CompactOutcome>;
  status(): Promise<ThreadStatusView>;
  /**
   * Worker side, while a run holds the thread and the runtime keeps a render journal: a durable
   * message named `id` (unique in the thread, e.g. `approval:<id>`), markdown. Absent (the method,
   * on hosts that have no journal) or undefined (no run holds the thread here now): post and edit
   * with `post`/`edit`, which nobody finishes after a crash.
   */
  durableMessage?(id: string): DurableMessage | undefined;
  /**
   * Worker side, where the channel can post files: posts `file` (a regular file of the thread's
   * workspace, by its real path) into the thread with `caption`, journaled like every other post
   * (a worker killed mid-upload neither loses nor doubles it). Rejects with a message for the model
   * (too large, refused by the platform).
   */
  sendFile?(file: { path: string; name: string }, options?: { caption?: string }): Promise<SentFile>;
  /** The largest file `sendFile` posts into this thread, in bytes (0: files are off here). */
  maxFileBytes?(): number;
}

/** What `sendFile` posted. */
export interface SentFile {
  ref: string;
  sizeBytes: number;
  /** Its type, sniffed from the bytes. */
  mimeType: string;
}

// ---------------------------------------------------------------------------------------------
// The context handlers, commands and tools receive
// ---------------------------------------------------------------------------------------------

/**
 * The deployment's one rule for who may change a thread's model or thinking level, whatever the
 * route: `/model` and `/thinking`, an extension's `setModel`/`setThinkingLevel`, a sub-agent asked
 * to run on another model. `thread.user` is who acts; a context without a user is the deployment's
 * own code acting (an extension on a timer), which the policy is not asked about.
 */
export type SettingsPolicy = (thread: ThreadView) => boolean;

/** A settings change the policy refused; its message says who may and how to allow everyone. */
export class SettingsRefusedError extends SwitchboardError {
  constructor(what: string, thread: ThreadView) {
    const where = thread.isDirect ? "this conversation" : "this channel";
    super(
      "settings.refused",
      `Only admins can change the ${what} in ${where}; nothing changed. (An admin can allow everyone with channels.${thread.platform}.settings: everyone.)`,
    );
  }
}

/**
 * The thread-bound side of the API, given to every handler, command and tool. Actions go through
 * the thread's `ExtensionHost`; when an agent is attached (worker side), model and thinking changes
 * also apply to it at once and `sendMessage` queues into it directly.
 */
export interface ExtensionContext {
  readonly thread: ThreadView;
  /** The run's abort signal inside agent hooks and tools; undefined elsewhere. */
  readonly signal: AbortSignal | undefined;
  readonly logger: StructuredLogger;
  /** The runtime operations of the thread (see `ExtensionHost`). */
  readonly host: ExtensionHost;
  /** Injects a message into the conversation; `deliverAs` defaults to `steer` during a run, else `nextTurn`. */
  sendMessage(message: ExtensionMessage, options?: { deliverAs?: DeliverAs }): Promise<void>;
  /** Persists a `custom` entry (extension state, audit records) in the thread's session. */
  appendEntry(customType: string, data?: unknown): Promise<void>;
  /** The thread's model: the attached agent's, else the persisted setting resolved in the catalogue. */
  getModel(): Promise<Model | undefined>;
  /**
   * Whether `thread.user` may change the thread's model or thinking level, or pick another model for
   * work it starts (the deployment's `SettingsPolicy`; true when there is no user or no policy).
   */
  mayChangeSettings(): boolean;
  /**
   * Sets the thread's model (a `Model` or `provider/id`). Resolves false, changing nothing, when the
   * model is unknown or has no credentials; rejects with `SettingsRefusedError` when the settings
   * policy does not let `thread.user` change it.
   */
  setModel(model: Model | string): Promise<boolean>;
  getThinkingLevel(): Promise<ThinkingLevel>;
  /**
   * Sets the thinking level, clamped to the thread's model; resolves with the level actually set.
   * Rejects with `SettingsRefusedError` when the settings policy does not let `thread.user` change it.
   */
  setThinkingLevel(level: ThinkingLevel): Promise<ThinkingLevel>;
  /** The tools of the attached agent (empty on the gateway side). */
  getTools(): AgentTool[];
  /**
   * The thread's `beforeToolCall`/`afterToolCall` hooks, for agents an extension starts itself
   * (sub-agents): their tool calls then pass the same gates (approval) as the thread's agent.
   */
  toolHooks(): Required<Pick<AgentOptions, "beforeToolCall" | "afterToolCall">>;
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/** Agent events, forwarded as they happen (observe only). */
export type AgentLifecycleEvent = AgentEvent;

/** Session events the runtime emits through `ThreadExtensions.emitSession`. */
export type SessionEvent =
  | { type: "session_start"; sessionId: string }
  | { type: "session_before_switch"; reason: "new" }
  | { type: "session_switch"; reason: "new"; previousSessionId?: string; sessionId: string }
  | { type: "session_before_compact"; instructions?: string }
  | { type: "session_compact"; tokensBefore: number; tokensAfter?: number }
  | { type: "session_shutdown" };

/** A tool call about to run (arguments validated). */
export interface ToolCallEvent {
  type: "tool_call";
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  tool: ExtensionTool;
}

/** A tool call that ran. */
export interface ToolResultEvent {
  type: "tool_result";
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  content: (TextContent | ImageContent)[];
  details: unknown;
  isError: boolean;
}

/** The messages about to be sent to the model (a copy: the stored history is unchanged). */
export interface ContextEvent {
  type: "context";
  messages: AgentMessage[];
}

/** A run is about to start with `prompt` (the user text) under `systemPrompt`. */
export interface BeforeAgentStartEvent {
  type: "before_agent_start";
  prompt: string;
  systemPrompt: string;
}

/** A reaction added to or removed from a message of the thread. */
export interface ReactionEvent {
  type: "reaction";
  messageRef: string;
  emoji: string;
  user: ThreadUser & { isBot: boolean };
  added: boolean;
}

/** `block: true` stops the call; the model gets an error result with `reason`. */
export interface ToolCallResult {
  block?: boolean;
  reason?: string;
}

/** Fields set here replace the tool result's; later handlers see the replaced result. */
export interface ToolResultPatch {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
}

export interface ContextResult {
  messages?: AgentMessage[];
}

export interface BeforeAgentStartResult {
  /** Added before the prompt of this run. */
  message?: ExtensionMessage;
  /** Replaces the system prompt for this run (build on `event.systemPrompt` to extend it). */
  systemPrompt?: string;
}

/** `cancel: true` on a `session_before_*` event stops the switch or compaction. */
export interface SessionEventResult {
  cancel?: boolean;
  reason?: string;
}

/**
 * The thread was stopped (`/stop`, a bare `stop`) or a new session started (`/new`) through an
 * extension context's `host`; handlers cancel what they were waiting for in that thread.
 */
export interface ThreadStopEvent {
  type: "thread_stop";
  reason: "stop" | "new_session";
}

/** `note` is shown to whoever stopped the thread. */
export interface ThreadStopResult {
  note?: string;
}

/** `handled: true` tells the caller the reaction belonged to this extension. */
export interface ReactionResult {
  handled?: boolean;
}

/** Every event, by name, with what its handlers may return. */
export interface ExtensionEventMap {
  agent_start: [Extract<AgentEvent, { type: "agent_start" }>, undefined];
  agent_end: [Extract<AgentEvent, { type: "agent_end" }>, undefined];
  turn_start: [Extract<AgentEvent, { type: "turn_start" }>, undefined];
  turn_end: [Extract<AgentEvent, { type: "turn_end" }>, undefined];
  message_start: [Extract<AgentEvent, { type: "message_start" }>, undefined];
  message_update: [Extract<AgentEvent, { type: "message_update" }>, undefined];
  message_end: [Extract<AgentEvent, { type: "message_end" }>, undefined];
  tool_execution_start: [Extract<AgentEvent, { type: "tool_execution_start" }>, undefined];
  tool_execution_update: [Extract<AgentEvent, { type: "tool_execution_update" }>, undefined];
  tool_execution_end: [Extract<AgentEvent, { type: "tool_execution_end" }>, undefined];
  session_start: [Extract<SessionEvent, { type: "session_start" }>, undefined];
  session_before_switch: [Extract<SessionEvent, { type: "session_before_switch" }>, SessionEventResult];
  session_switch: [Extract<SessionEvent, { type: "session_switch" }>, undefined];
  session_before_compact: [Extract<SessionEvent, { type: "session_before_compact" }>, SessionEventResult];
  session_compact: [Extract<SessionEvent, { type: "session_compact" }>, undefined];
  session_shutdown: [Extract<SessionEvent, { type: "session_shutdown" }>, undefined];
  tool_call: [ToolCallEvent, ToolCallResult];
  tool_result: [ToolResultEvent, ToolResultPatch];
  context: [ContextEvent, ContextResult];
  before_agent_start: [BeforeAgentStartEvent, BeforeAgentStartResult];
  reaction: [ReactionEvent, ReactionResult];
  thread_stop: [ThreadStopEvent, ThreadStopResult];
}

export type ExtensionEventType = keyof ExtensionEventMap;

/** A handler of event `T`: may return (or resolve with) the event's result, or nothing. */
export type ExtensionHandler<T extends ExtensionEventType> = (
  event: ExtensionEventMap[T][0],
  ctx: ExtensionContext,
  // biome-ignore lint/suspicious/noConfusingVoidType: observing handlers return nothing, which `undefined` alone rejects.
) => ExtensionEventMap[T][1] | undefined | void | Promise<ExtensionEventMap[T][1] | undefined | void>;

// ---------------------------------------------------------------------------------------------
// Tools and commands
// ---------------------------------------------------------------------------------------------

/**
 * Whether a call needs an admin's approval before it runs: `never`, `always`, or a function of the
 * validated arguments (true: ask).
 */
export type ApprovalRule = "never" | "always" | ((args: Record<string, unknown>) => boolean);

/** An `AgentTool` that may declare its approval rule. */
export interface ExtensionTool<TParams extends TSchema = TSchema, TDetails = unknown>
  extends AgentTool<TParams, TDetails> {
  approval?: ApprovalRule;
}

/**
 * A tool an extension registers. Like `AgentTool`, with the thread's context as fifth argument of
 * `execute` (the workspace, the thread's model, posting). Throwing is a normal tool failure: the
 * model gets an error result; it does not disable the extension.
 */
export interface ToolDefinition<TParams extends TSchema = TSchema, TDetails = unknown> {
  name: string;
  label: string;
  description: string;
  parameters: TParams;
  approval?: ApprovalRule;
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal: AbortSignal | undefined,
    onUpdate: AgentToolUpdateCallback<TDetails> | undefined,
    ctx: ExtensionContext,
  ): Promise<AgentToolResult<TDetails>>;
}

/**
 * Tools an extension finds at run time (an MCP server's tools), asked for before every run of a
 * thread with that thread's context. It resolves with the tools the thread gets now (names valid
 * as for `registerTool`); it must settle in bounded time and never reject for a source that is
 * down (leave its tools out, or offer them failing with a clear error). Channel `tools` lists do
 * not filter these tools: the source decides per thread.
 */
export type ToolSource = (ctx: ExtensionContext) => Promise<ToolDefinition[]>;

/** Wraps a tool (the base tool or an earlier wrapper's result) into another tool of the same name. */
export type ToolWrapper = (tool: ExtensionTool, ctx: ExtensionContext) => ExtensionTool;

/** A suggestion for a command argument. */
export interface CompletionItem {
  value: string;
  label?: string;
  description?: string;
}

/** The context a command handler gets: the thread's context plus who asked and how to answer. */
export interface ExtensionCommandContext extends ExtensionContext {
  /** Answers the person who issued the command. */
  reply(text: string): Promise<void>;
  /** The command's invoker (same as `thread.user`). */
  readonly user: ThreadUser;
}

export interface CommandOptions {
  description: string;
  /** Shown by `/help`, e.g. `[name]` or `<text>`. */
  usage?: string;
  /** Other names that run the same command (`think` for `thinking`). */
  aliases?: string[];
  handler(args: string, ctx: ExtensionCommandContext): Promise<void>;
  /** Suggestions for the argument typed so far; null or empty for none. */
  getArgumentCompletions?(prefix: string): CompletionItem[] | null | Promise<CompletionItem[] | null>;
}

/** A registered command as `getCommands` lists it. */
export interface CommandInfo {
  name: string;
  description: string;
  usage?: string;
  aliases: string[];
  extension: string;
}

/** A custom provider: the wire API's stream functions and, optionally, models that use it. */
export interface ProviderDefinition {
  api: string;
  stream: StreamFunction;
  streamSimple: StreamFunction;
  models?: Model[];
}

// ---------------------------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------------------------

/**
 * What an extension's factory receives. Registration methods (`on`, `registerTool`, `registerToolSource`, `wrapTool`,
 * `registerCommand`, `registerProvider`) are meant for the factory; the thread-bound methods
 * (`sendMessage`, `appendEntry`, `setModel`, `setThinkingLevel`, `thread`) act on the thread whose
 * handler, command or tool is running (they are the same as the `ctx` methods) and throw a
 * programmer error (a rejection) when called outside one.
 */
export interface ExtensionAPI {
  /** The extension's name (from config or the module). */
  readonly name: string;
  /** The `options` object from the extension's config entry (undefined when none). */
  readonly options: unknown;
  readonly logger: StructuredLogger;

  on<T extends ExtensionEventType>(event: T, handler: ExtensionHandler<T>): void;
  registerTool<TParams extends TSchema, TDetails = unknown>(
    definition: ToolDefinition<TParams, TDetails>,
  ): void;
  /** Adds tools found at run time (see `ToolSource`), asked for before every run. */
  registerToolSource(source: ToolSource): void;
  /** Wraps the tool named `name` for every thread (after base tools and registered tools are known). */
  wrapTool(name: string, wrapper: ToolWrapper): void;
  registerCommand(name: string, options: CommandOptions): void;
  /** Registers a wire API (and its models); removed again when the extension is disabled. */
  registerProvider(provider: ProviderDefinition): void;
  /** Every enabled command (all extensions), for help texts. */
  getCommands(): CommandInfo[];

  /** The thread the current handler works for. */
  readonly thread: ThreadView;
  sendMessage(message: ExtensionMessage, options?: { deliverAs?: DeliverAs }): Promise<void>;
  appendEntry(customType: string, data?: unknown): Promise<void>;
  setModel(model: Model | string): Promise<boolean>;
  getThinkingLevel(): Promise<ThinkingLevel>;
  setThinkingLevel(level: ThinkingLevel): Promise<ThinkingLevel>;
}

/** An extension module's default export (or a built-in): registers what the extension provides. */
export type ExtensionFactory = (api: ExtensionAPI) => void | Promise<void>;

/** A named extension ready to load. */
export interface ExtensionEntry {
  name: string;
  factory: ExtensionFactory;
  /** Passed as `api.options`. */
  options?: unknown;
}

/** Why an extension was disabled. */
export interface ExtensionFailure {
  extension: string;
  /** Where it failed: `load`, `tool_call`, `command /model`, … */
  phase: string;
  error: string;
  threadKey?: string;
}
