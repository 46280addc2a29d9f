/**
 * The one streaming protocol every LLM provider speaks to the engine.
 *
 * Providers translate their wire format into these shapes inside their own file
 * (`providers/<api>.ts`); nothing outside a provider ever sees a vendor payload.
 */
import type { TSchema } from "@sinclair/typebox";

/** Wire APIs with a built-in provider. Other strings are allowed for providers registered at run time. */
export type KnownApi =
  | "anthropic-messages"
  | "openai-completions"
  | "openai-responses"
  | "google-generative-ai";
export type Api = KnownApi | (string & {});

/** Vendors with built-in models and environment keys. Other strings name custom providers. */
export type KnownProvider = "anthropic" | "openai" | "google";
export type Provider = KnownProvider | (string & {});

/** Reasoning effort a thread asks for; each provider maps it to its own parameter. */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

export interface TextContent {
  type: "text";
  text: string;
  /** Provider-specific id of the text block (OpenAI Responses message id), kept for replay. */
  textSignature?: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Opaque signature (Anthropic) or encrypted reasoning item (OpenAI) that lets the same model see it again. */
  thinkingSignature?: string;
  /** True when the provider returned redacted thinking; `thinkingSignature` then holds the opaque data. */
  redacted?: boolean;
}

export interface ImageContent {
  type: "image";
  /** Base64-encoded bytes, without a `data:` prefix. */
  data: string;
  mimeType: string;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Google's thought signature for the call, replayed to the same model. */
  thoughtSignature?: string;
}

export interface Cost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

/** Token counts of one assistant message and what they cost in US dollars. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: Cost;
}

/**
 * Why an assistant message ended. `error` and `aborted` are failures carried as data:
 * the message then has an `errorMessage` and whatever content arrived before the failure.
 */
export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: Api;
  provider: Provider;
  model: string;
  responseId?: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
}

export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError: boolean;
  timestamp: number;
}

/** A message the LLM understands. The agent layer extends this set with its own message kinds. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** A tool as the LLM sees it: a name, a description and a TypeBox (JSON Schema) parameter schema. */
export interface Tool<TParameters extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: TParameters;
}

/** Everything one LLM request needs besides the model and options. */
export interface Context {
  systemPrompt?: string;
  messages: Message[];
  tools?: Tool[];
}

export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: TextContent; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: ThinkingContent; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; message: AssistantMessage }
  | { type: "error"; reason: Extract<StopReason, "error" | "aborted">; error: AssistantMessage };

/** Quirks of OpenAI-compatible servers (Ollama, vLLM, LM Studio, proxies). Unset fields are detected or defaulted. */
export interface OpenAICompat {
  /** Name of the output-limit field: `max_completion_tokens` (OpenAI) or `max_tokens` (most others). */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** Whether the server accepts `reasoning_effort`. */
  supportsReasoningEffort?: boolean;
  /** Whether the server accepts the `developer` role for the system prompt (else `system`). */
  supportsDeveloperRole?: boolean;
  /** Whether usage arrives in the stream when `stream_options.include_usage` is sent. */
  supportsUsageInStreaming?: boolean;
  /** Whether `stream_options` may be sent at all. */
  supportsStreamOptions?: boolean;
}

export type CompatSettings = OpenAICompat;

/** A model: which API speaks to it, where, what it can do and what it costs (US dollars per million tokens). */
export interface Model<TApi extends Api = Api> {
  id: string;
  name: string;
  api: TApi;
  provider: Provider;
  baseUrl?: string;
  reasoning: boolean;
  /** Thinking levels the model accepts; absent means all but `xhigh` when `reasoning` is true. */
  thinkingLevels?: ThinkingLevel[];
  input: ("text" | "image")[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
  headers?: Record<string, string>;
  compat?: CompatSettings;
}

/** Options every provider accepts. */
export interface StreamOptions {
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  apiKey?: string;
  headers?: Record<string, string>;
  /** Stable id of the conversation, used by providers with prompt caching keyed on it. */
  sessionId?: string;
  /** Retries of 429, 5xx and "overloaded" before the first token. Default 3. */
  maxRetries?: number;
  /** Upper bound of one retry delay, including a server's `retry-after`. Default 60 000 ms. */
  maxRetryDelayMs?: number;
  /** Called with the request body just before it is sent (for logging and tests). */
  onPayload?: (payload: unknown) => void;
  /**
   * A stalled stream ends: when the provider sends no data for this long (while waiting for the
   * response or between chunks), the reply ends with `stopReason: "error"` and an `errorMessage`
   * like "Anthropic stream stalled: no data for 120 s". Default 120 000 ms; 0 turns it off.
   * Enforced by the providers' shared HTTP layer: a provider hands it on as
   * `fetchWithRetry({ idleTimeoutMs })` (its `retry.idleTimeoutMs` also reaches it).
   */
  idleTimeoutMs?: number;
}

/** Options of `streamSimple`: the provider-neutral knobs. */
export interface SimpleStreamOptions extends StreamOptions {
  /** Reasoning effort; `off` or absent disables thinking. Clamped to what the model supports. */
  reasoning?: ThinkingLevel;
}

/**
 * Something that yields `AssistantMessageEvent`s and resolves `result()` with the final message.
 * This is the whole contract between the engine and a stream: scripted streams and streams of
 * other engines plug in by implementing it.
 */
export interface AssistantMessageEventSource extends AsyncIterable<AssistantMessageEvent> {
  result(): Promise<AssistantMessage>;
}

/**
 * A provider's streaming function.
 *
 * Contract: it returns synchronously, and once the stream exists it never throws. Every failure
 * (HTTP error, malformed stream, dropped connection, abort) ends the stream with an `error` event whose
 * message has `stopReason: "error" | "aborted"` and a readable `errorMessage` that never contains a
 * stack trace or a credential.
 */
export type StreamFunction<TApi extends Api = Api, TOptions extends StreamOptions = StreamOptions> = (
  model: Model<TApi>,
  context: Context,
  options?: TOptions,
) => AssistantMessageEventSource;

/** One wire API: its raw `stream` and the `streamSimple` that maps provider-neutral options onto it. */
export interface ApiProvider<TApi extends Api = Api, TOptions extends StreamOptions = StreamOptions> {
  api: TApi;
  stream: StreamFunction<TApi, TOptions>;
  streamSimple: StreamFunction<TApi, SimpleStreamOptions>;
}
