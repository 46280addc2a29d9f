/**
 * Types of the agent layer: the messages an agent keeps, the events its loop emits, the tools it
 * runs, its state, and the configuration of one loop run. Everything here is plain data plus
 * injected functions, so the loop knows nothing of platforms, queues or storage.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventSource,
  Context,
  ImageContent,
  Message,
  Model,
  Provider,
  SimpleStreamOptions,
  StreamOptions,
  TextContent,
  ThinkingLevel,
  Tool,
  ToolCall,
  ToolResultMessage,
} from "./llm/types.js";

/**
 * Extra message kinds an application keeps in an agent's history next to the LLM messages
 * (notifications, artifacts, compaction summaries). Add kinds by declaration merging; each entry's
 * value is the message type and must have a distinct `role`:
 *
 * ```ts
 * declare module "../agent/types.js" {
 *   interface CustomAgentMessages {
 *     notification: { role: "notification"; text: string; timestamp: number };
 *   }
 * }
 * ```
 *
 * Custom messages reach the model only through `convertToLlm`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: extended by declaration merging, so it must be an interface.
export interface CustomAgentMessages {}

/** A message in an agent's history: an LLM message or one of the `CustomAgentMessages` kinds. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

/** What a tool returns: content for the model and details for the application (renderers, sessions). */
export interface AgentToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details: TDetails;
}

/** Receives a tool's partial results while it runs; each call becomes a `tool_execution_update` event. */
export type AgentToolUpdateCallback<TDetails = unknown> = (partialResult: AgentToolResult<TDetails>) => void;

/**
 * A tool the agent can run: the LLM-facing `Tool` (name, description, TypeBox parameters) plus a
 * human label and `execute`.
 *
 * `execute` receives arguments already validated against `parameters` (and coerced, so `"5"` for a
 * number arrives as `5`). It should honour `signal`. Throwing is fine: the loop turns the error's
 * message into an error tool result for the model, so a failing tool never ends the run.
 */
export interface AgentTool<TParams extends TSchema = TSchema, TDetails = unknown> extends Tool<TParams> {
  /** Short human-readable name for chat status lines. */
  label: string;
  // Method syntax on purpose: it keeps `AgentTool<TObject<…>>` assignable to `AgentTool` (parameter bivariance).
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
  ): Promise<AgentToolResult<TDetails>>;
}

/**
 * Everything an agent run emits, in order. A run is `agent_start`, then turns (`turn_start` …
 * `turn_end`), then exactly one `agent_end` carrying every message the run added. Within a turn:
 * `message_start`/`message_end` for each injected user or steering message, `message_start`,
 * `message_update`s and `message_end` for the assistant message, and for each tool call
 * `tool_execution_start`, `tool_execution_update`s, `tool_execution_end` followed by the
 * `message_start`/`message_end` of its tool-result message.
 */
export type AgentEvent =
  | { type: "agent_start" }
  | { type: "agent_end"; messages: AgentMessage[] }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AssistantMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AssistantMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: Record<string, unknown> }
  | {
      type: "tool_execution_update";
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      partialResult: AgentToolResult;
    }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      result: AgentToolResult;
      isError: boolean;
    };

/** The live state of an `Agent`. */
export interface AgentState {
  systemPrompt: string;
  model: Model;
  thinkingLevel: ThinkingLevel;
  tools: AgentTool[];
  /** The full history, including the messages of the run in progress as each one ends. */
  messages: AgentMessage[];
  /** True from the start of a run until its `agent_end` has been delivered to every listener. */
  isStreaming: boolean;
  /** The assistant message being streamed, or null between messages. */
  streamMessage: AgentMessage | null;
  /** Ids of the tool calls that have started and not yet ended. */
  pendingToolCalls: Set<string>;
  /** The `errorMessage` of the last run's failed (error or aborted) assistant message; cleared when a run starts. */
  error?: string;
}

/** What one loop run works on. The loop copies `messages` and never mutates the caller's array. */
export interface AgentContext {
  systemPrompt: string;
  messages: AgentMessage[];
  tools?: AgentTool[];
}

/**
 * A function that streams one assistant message. `streamSimple` is the default; scripted streams
 * and other engines' streams plug in. The loop relies only on the returned value being an async
 * iterable of `AssistantMessageEvent` with `result()`; it may be returned through a promise, and a
 * throw or rejection becomes an assistant message with `stopReason: "error"`.
 */
export type StreamFn = (
  model: Model,
  context: Context,
  options?: SimpleStreamOptions,
) => AssistantMessageEventSource | Promise<AssistantMessageEventSource>;

/** How queued steering or follow-up messages are taken at a checkpoint. */
export type QueueMode = "one-at-a-time" | "all";

/** `sequential` runs tool calls one after another; `parallel` runs all calls of one assistant message at once. */
export type ToolExecutionMode = "sequential" | "parallel";

/** What `beforeToolCall` sees: a call whose tool exists and whose arguments passed validation. */
export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  tool: AgentTool;
  /** The validated (and coerced) arguments the tool would receive. */
  args: Record<string, unknown>;
  context: AgentContext;
}

/** `block: true` stops the call: the model gets an error tool result with `reason`. */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
}

/** What `afterToolCall` sees: a call that was executed, successfully or with a thrown error. */
export interface AfterToolCallContext extends BeforeToolCallContext {
  result: AgentToolResult;
  isError: boolean;
}

/** Fields set here replace the tool's result; absent fields keep it. */
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
}

/**
 * Configuration of one loop run. Functions are called at the moments documented on each field;
 * the loop holds no other state, so a caller changes behaviour mid-run through them.
 */
export interface AgentLoopConfig {
  /** The model, used when `getModel` is absent. */
  model: Model;
  /** Read before every LLM call, so a model change during a run applies from the next call. */
  getModel?: () => Model;
  /** Reasoning level, used when `getThinkingLevel` is absent. Default `off`. */
  thinkingLevel?: ThinkingLevel;
  /** Read before every LLM call, like `getModel`. */
  getThinkingLevel?: () => ThinkingLevel;
  /** Converts the history to what the LLM understands; called before every LLM call. Must keep tool calls and their results paired. */
  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  /** Rewrites the history before `convertToLlm` (pruning, injected context); the stored history is not changed. */
  transformContext?: (
    messages: AgentMessage[],
    signal?: AbortSignal,
  ) => AgentMessage[] | Promise<AgentMessage[]>;
  /** Resolves the API key for a provider before every LLM call (keys may expire); falls back to `apiKey`. */
  getApiKey?: (provider: Provider) => string | undefined | Promise<string | undefined>;
  apiKey?: string;
  /** Passed to the stream function as `sessionId` (prompt caching keyed on the conversation). */
  sessionId?: string;
  /** Further options for the stream function (temperature, maxTokens, headers, retries, onPayload). */
  streamOptions?: Omit<StreamOptions, "signal" | "apiKey" | "sessionId">;
  /**
   * Messages to inject before the next LLM call. Read when the run starts, after every tool call
   * (a non-empty answer skips the remaining calls of that assistant message; in parallel mode,
   * after the whole batch) and after every turn. Not read once the run is aborted. Returning a
   * message removes it from the caller's queue: the loop delivers it exactly once.
   */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** Messages to run after the agent would otherwise stop; a non-empty answer starts another turn. Not read once aborted. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  /** Called before each validated tool call; may block it. A throw blocks the call with the error's message. */
  beforeToolCall?: (
    ctx: BeforeToolCallContext,
    signal?: AbortSignal,
  ) => BeforeToolCallResult | undefined | Promise<BeforeToolCallResult | undefined>;
  /** Called after each executed tool call; may replace content, details and isError. A throw makes the result an error. */
  afterToolCall?: (
    ctx: AfterToolCallContext,
    signal?: AbortSignal,
  ) => AfterToolCallResult | undefined | Promise<AfterToolCallResult | undefined>;
  /** Default `sequential`. */
  toolExecution?: ToolExecutionMode;
}
