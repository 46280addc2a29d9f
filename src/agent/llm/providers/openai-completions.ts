/**
 * The `openai-completions` wire API: OpenAI Chat Completions (`POST <baseUrl>/chat/completions`)
 * with server-sent events — OpenAI itself and every OpenAI-compatible server (Ollama, vLLM,
 * LM Studio, llama.cpp, proxies). Server quirks come from `resolveOpenAICompat(model)`: the
 * max-tokens field, `developer` vs `system` role, `reasoning_effort`, `stream_options`.
 *
 * Request: the history goes through `transformMessages`; images travel as data URLs; tool
 * messages cannot carry images, so the images of a run of tool results follow in one user
 * message. Thinking of earlier turns is not sent back (the API has no field for it). Stream:
 * `reasoning_content` / `reasoning` deltas (compatible servers) become thinking; tool calls are
 * keyed by their `index`; usage arrives in a final chunk when `stream_options.include_usage` is
 * honoured, with cached prompt tokens split out as cache reads.
 */
import { resolveOpenAICompat } from "../models.js";
import {
  clampThinkingLevel,
  openaiReasoningEffort,
  outputLimit,
  supportedThinkingLevels,
  thinkingTokenBudget,
} from "../thinking.js";
import { transformMessages } from "../transform-messages.js";
import type {
  ApiProvider,
  Context,
  ImageContent,
  Message,
  Model,
  SimpleStreamOptions,
  StopReason,
  StreamFunction,
  StreamOptions,
  TextContent,
} from "../types.js";
import { ProviderError, type RetryTuning } from "./shared/http.js";
import { type AssistantMessageBuilder, runProviderStream } from "./shared/message-builder.js";
import { endpointUrl, postForStream, resolveApiKey, streamHeaders } from "./shared/request.js";
import { parseSSE } from "./shared/sse.js";

/** The name errors use: "OpenAI" for OpenAI itself, else the custom provider, e.g. "ollama (OpenAI-compatible)". */
function providerName(model: Model): string {
  return model.provider === "openai" ? "OpenAI" : `${model.provider} (OpenAI-compatible)`;
}
const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Options of the raw Chat Completions stream; `streamSimple` fills `reasoningEffort` from `reasoning`. */
export interface OpenAICompletionsOptions extends StreamOptions {
  /** Sent as `reasoning_effort` when the server accepts it (`compat.supportsReasoningEffort`). */
  reasoningEffort?: string;
  toolChoice?: "auto" | "none" | "required" | { type: "function"; function: { name: string } };
  retry?: RetryTuning;
}

type ChatPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
type ChatMessage =
  | { role: "system" | "developer"; content: string }
  | { role: "user"; content: string | ChatPart[] }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

function imagePart(image: ImageContent): ChatPart {
  return { type: "image_url", image_url: { url: `data:${image.mimeType};base64,${image.data}` } };
}

function userContent(content: string | (TextContent | ImageContent)[]): string | ChatPart[] {
  if (typeof content === "string") return content;
  // Plain strings when there is no image: some compatible servers accept nothing else.
  if (content.every((p) => p.type === "text")) return content.map((p) => (p as TextContent).text).join("\n");
  return content.map((p) => (p.type === "image" ? imagePart(p) : { type: "text", text: p.text }));
}

/** Shared messages → Chat Completions messages (after `transformMessages`), system prompt first. */
function convertMessages(
  messages: Message[],
  systemPrompt: string | undefined,
  systemRole: "system" | "developer",
): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (systemPrompt) out.push({ role: systemRole, content: systemPrompt });
  let pendingImages: ImageContent[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push({
      role: "user",
      content: [
        { type: "text", text: "Images returned by the tool calls above:" },
        ...pendingImages.map(imagePart),
      ],
    });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== "toolResult") flushImages();
    if (message.role === "user") {
      const content = userContent(message.content);
      if (content.length > 0) out.push({ role: "user", content });
    } else if (message.role === "assistant") {
      const text = message.content
        .filter((b): b is TextContent => b.type === "text")
        .map((b) => b.text)
        .join("");
      const toolCalls = message.content.flatMap((b) =>
        b.type === "toolCall"
          ? [
              {
                id: b.id,
                type: "function" as const,
                function: { name: b.name, arguments: JSON.stringify(b.arguments) },
              },
            ]
          : [],
      );
      if (text === "" && toolCalls.length === 0) continue;
      out.push({
        role: "assistant",
        content: text === "" ? null : text,
        ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
      });
    } else {
      const text = message.content
        .filter((p): p is TextContent => p.type === "text")
        .map((p) => p.text)
        .join("\n");
      const images = message.content.filter((p): p is ImageContent => p.type === "image");
      pendingImages.push(...images);
      out.push({
        role: "tool",
        tool_call_id: message.toolCallId,
        content:
          text !== "" ? text : images.length > 0 ? "(image attached in the next message)" : "(no output)",
      });
    }
  }
  flushImages();
  return out;
}

/** The request body for `model`, `context` and `options` (exported for tests and `onPayload` users). */
function buildOpenAICompletionsRequest(
  model: Model,
  context: Context,
  options: OpenAICompletionsOptions = {},
): Record<string, unknown> {
  const compat = resolveOpenAICompat(model);
  const body: Record<string, unknown> = {
    model: model.id,
    stream: true,
    messages: convertMessages(
      transformMessages(context.messages, model),
      context.systemPrompt,
      compat.supportsDeveloperRole ? "developer" : "system",
    ),
  };
  if (compat.supportsStreamOptions && compat.supportsUsageInStreaming)
    body.stream_options = { include_usage: true };
  // Always sent: without it a server applies its own limit (often none), not the config's maxTokens.
  body[compat.maxTokensField] = outputLimit(model, options.maxTokens);
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (context.tools && context.tools.length > 0) {
    body.tools = context.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (options.toolChoice) body.tool_choice = options.toolChoice;
  if (options.reasoningEffort && compat.supportsReasoningEffort)
    body.reasoning_effort = options.reasoningEffort;
  if (options.sessionId && model.provider === "openai") body.prompt_cache_key = options.sessionId;
  return body;
}

function mapFinishReason(
  reason: string | null,
  provider: string,
): { reason: StopReason; errorMessage?: string } {
  switch (reason) {
    case "length":
      return { reason: "length" };
    case "tool_calls":
    case "function_call":
      return { reason: "toolUse" };
    case "content_filter":
      return {
        reason: "error",
        errorMessage: `${provider} stopped the response: content filter (finish_reason: content_filter)`,
      };
    default:
      return { reason: "stop" };
  }
}

interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

interface ChatToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface ChatChunk {
  id?: string;
  choices?: {
    delta?: {
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ChatToolCallDelta[];
    };
    finish_reason?: string | null;
  }[];
  usage?: ChatUsage | null;
  error?: { message?: string; type?: string; code?: string | number | null };
}

function applyUsage(builder: AssistantMessageBuilder, usage: ChatUsage): void {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  builder.setUsage({
    input: Math.max(0, (usage.prompt_tokens ?? 0) - cached),
    output: usage.completion_tokens ?? 0,
    cacheRead: cached,
  });
}

function parseChunk(data: string, provider: string): ChatChunk {
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed === "object" && parsed !== null) return parsed as ChatChunk;
  } catch {
    // Reported below.
  }
  throw new ProviderError(`${provider} sent a malformed stream chunk: ${data.slice(0, 200)}`);
}

/** Tracks the open block so text, thinking and tool calls alternate as the wire sends them. */
class ChunkAssembler {
  private current: { kind: "text" | "thinking"; index: number } | undefined;
  private readonly toolCalls = new Map<number, number>();

  constructor(private readonly builder: AssistantMessageBuilder) {}

  text(delta: string): void {
    this.builder.appendText(this.open("text"), delta);
  }

  thinking(delta: string): void {
    this.builder.appendThinking(this.open("thinking"), delta);
  }

  toolCall(call: ChatToolCallDelta, position: number): void {
    const key = call.index ?? position;
    let index = this.toolCalls.get(key);
    if (index === undefined) {
      this.closeCurrent();
      // Calls stream one after another: a new call means the previous ones are complete.
      for (const open of this.toolCalls.values()) this.builder.endBlock(open);
      const id = call.id || `call_${Math.random().toString(36).slice(2, 12)}`;
      index = this.builder.startToolCall(id, call.function?.name ?? "");
      this.toolCalls.set(key, index);
    } else if (call.id || call.function?.name) {
      this.builder.updateToolCall(index, {
        ...(call.id && { id: call.id }),
        ...(call.function?.name && { name: call.function.name }),
      });
    }
    if (call.function?.arguments) this.builder.appendToolCallArguments(index, call.function.arguments);
  }

  private open(kind: "text" | "thinking"): number {
    if (this.current?.kind === kind) return this.current.index;
    this.closeCurrent();
    const index = kind === "text" ? this.builder.startText() : this.builder.startThinking();
    this.current = { kind, index };
    return index;
  }

  private closeCurrent(): void {
    if (this.current) this.builder.endBlock(this.current.index);
    this.current = undefined;
  }
}

/** Streams one assistant message from a Chat Completions endpoint. Never throws; see `StreamFunction`. */
export const streamOpenAICompletions: StreamFunction<"openai-completions", OpenAICompletionsOptions> = (
  model,
  context,
  options,
) =>
  runProviderStream(
    { model, provider: providerName(model), signal: options?.signal, secrets: [options?.apiKey] },
    async (builder) => {
      const provider = providerName(model);
      const apiKey = resolveApiKey(model, options?.apiKey, provider);
      builder.scrub(apiKey);
      const headers = streamHeaders(
        apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {},
        model,
        options?.headers,
      );
      const stream = await postForStream(
        {
          provider,
          url: endpointUrl(model.baseUrl ?? DEFAULT_BASE_URL, "/chat/completions"),
          headers,
          body: buildOpenAICompletionsRequest(model, context, options),
          apiKey,
        },
        options,
      );
      builder.start();

      const assembler = new ChunkAssembler(builder);
      let finishReason: string | null | undefined;
      let sawDone = false;
      for await (const sse of parseSSE(stream, options?.signal)) {
        if (sse.data.trim() === "[DONE]") {
          sawDone = true;
          break;
        }
        const chunk = parseChunk(sse.data, provider);
        if (chunk.error) {
          const code = chunk.error.code ?? chunk.error.type;
          throw new ProviderError(
            `${provider} stream error${code ? ` (${code})` : ""}: ${chunk.error.message ?? "unknown error"}`,
            code !== undefined && code !== null ? { providerCode: String(code) } : {},
          );
        }
        if (chunk.id && !builder.message.responseId) builder.setResponseId(chunk.id);
        if (chunk.usage) applyUsage(builder, chunk.usage);
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta;
        const reasoning = delta?.reasoning_content ?? delta?.reasoning;
        if (reasoning) assembler.thinking(reasoning);
        if (delta?.content) assembler.text(delta.content);
        if (delta?.refusal) assembler.text(delta.refusal);
        delta?.tool_calls?.forEach((call, position) => {
          assembler.toolCall(call, position);
        });
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
      // Without a finish reason or [DONE] the connection ended early: runProviderStream reports it.
      if (finishReason === undefined && !sawDone) return;
      const stop = mapFinishReason(finishReason ?? null, provider);
      // Some compatible servers (older Ollama) report "stop" for a turn that called tools.
      const calledTools = builder.message.content.some((b) => b.type === "toolCall");
      builder.finish(stop.reason === "stop" && calledTools ? "toolUse" : stop.reason, stop.errorMessage);
    },
  );

/**
 * The `reasoning_effort` for a thread's thinking level: clamped to the model; `minimal` becomes
 * `low` where the model does not list `minimal`; nothing when the model does not reason.
 */
function completionsReasoningEffort(
  model: Model,
  level: SimpleStreamOptions["reasoning"],
): string | undefined {
  const wanted = level === "minimal" && !supportedThinkingLevels(model).includes("minimal") ? "low" : level;
  return openaiReasoningEffort(model, wanted);
}

/** `streamOpenAICompletions` with provider-neutral options: `reasoning` becomes `reasoning_effort`. */
const streamSimpleOpenAICompletions: StreamFunction<"openai-completions", SimpleStreamOptions> = (
  model,
  context,
  options,
) => {
  const { reasoning, ...rest } = options ?? {};
  const effort = completionsReasoningEffort(model, reasoning);
  const level = clampThinkingLevel(model, reasoning ?? "off");
  // As on the Responses API: reasoning tokens count against the limit, so it is raised for them
  // (when the server takes the effort; without it the limit stays what the caller asked).
  const maxTokens =
    effort !== undefined && level !== "off" && resolveOpenAICompat(model).supportsReasoningEffort
      ? thinkingTokenBudget(model, level, rest.maxTokens).maxTokens
      : rest.maxTokens;
  return streamOpenAICompletions(model, context, {
    ...rest,
    ...(maxTokens !== undefined && { maxTokens }),
    ...(effort !== undefined && { reasoningEffort: effort }),
  });
};

/** The `openai-completions` provider, for `registerApiProvider`. */
export const openAICompletionsProvider: ApiProvider<"openai-completions", OpenAICompletionsOptions> = {
  api: "openai-completions",
  stream: streamOpenAICompletions,
  streamSimple: streamSimpleOpenAICompletions,
};
