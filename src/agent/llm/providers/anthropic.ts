/**
 * The `anthropic-messages` wire API: Anthropic's Messages endpoint (`POST /v1/messages`) with
 * server-sent events, translated to and from the shared protocol in this file only.
 *
 * Request: the system prompt and the last user turn carry `cache_control` (prompt caching), the
 * history goes through `transformMessages` (foreign thinking as text, tool-call ids valid for
 * Anthropic), consecutive tool results share one user turn, images are base64 sources. Stream:
 * `thinking` blocks keep their `signature` (and `redacted_thinking` its data) so the same model
 * can see them again; tool-use input arrives as JSON fragments; usage counts cache reads and
 * writes; `refusal` ends the message as an error.
 */
import { type AnthropicEffort, anthropicThinkingParams, outputLimit } from "../thinking.js";
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
  Tool,
} from "../types.js";
import { ProviderError, type RetryTuning } from "./shared/http.js";
import { type AssistantMessageBuilder, runProviderStream } from "./shared/message-builder.js";
import { endpointUrl, postForStream, resolveApiKey, streamHeaders } from "./shared/request.js";
import { parseSSE } from "./shared/sse.js";

const PROVIDER_NAME = "Anthropic";
const DEFAULT_BASE_URL = "https://api.anthropic.com";
const API_VERSION = "2023-06-01";

/** Options of the raw Anthropic stream; `streamSimple` fills the thinking fields from `reasoning`. */
export interface AnthropicOptions extends StreamOptions {
  /** The wire `thinking` field: a token budget, or adaptive thinking (Claude 4.6+). Absent: no thinking. */
  thinking?: { type: "enabled"; budget_tokens: number } | { type: "adaptive" };
  /** `output_config.effort`, used with adaptive thinking. */
  effort?: AnthropicEffort;
  toolChoice?: "auto" | "any" | "none" | { type: "tool"; name: string };
  /** Mark the system prompt and the last user turn for prompt caching. Default true. */
  promptCaching?: boolean;
  retry?: RetryTuning;
}

type AnthropicBlock = Record<string, unknown>;
interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

const CACHE_CONTROL = { type: "ephemeral" } as const;

function imageBlock(image: ImageContent): AnthropicBlock {
  return { type: "image", source: { type: "base64", media_type: image.mimeType, data: image.data } };
}

function userBlocks(content: string | (TextContent | ImageContent)[]): AnthropicBlock[] {
  if (typeof content === "string") return content.trim() === "" ? [] : [{ type: "text", text: content }];
  const blocks: AnthropicBlock[] = [];
  for (const part of content) {
    if (part.type === "image") blocks.push(imageBlock(part));
    else if (part.text.trim() !== "") blocks.push({ type: "text", text: part.text });
  }
  return blocks;
}

/** Shared messages → Anthropic turns. Expects the output of `transformMessages`. */
function convertMessages(messages: Message[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      const content = userBlocks(message.content);
      if (content.length > 0) out.push({ role: "user", content });
    } else if (message.role === "assistant") {
      const content: AnthropicBlock[] = [];
      for (const block of message.content) {
        if (block.type === "text") {
          if (block.text.trim() !== "") content.push({ type: "text", text: block.text });
        } else if (block.type === "thinking") {
          if (block.redacted && block.thinkingSignature) {
            content.push({ type: "redacted_thinking", data: block.thinkingSignature });
          } else if (block.thinkingSignature) {
            content.push({ type: "thinking", thinking: block.thinking, signature: block.thinkingSignature });
          } else if (block.thinking.trim() !== "") {
            // Unsigned thinking (an interrupted stream) is rejected as thinking; keep it as text.
            content.push({ type: "text", text: block.thinking });
          }
        } else {
          content.push({ type: "tool_use", id: block.id, name: block.name, input: block.arguments });
        }
      }
      if (content.length > 0) out.push({ role: "assistant", content });
    } else {
      const resultContent: AnthropicBlock[] = message.content.map((part) =>
        part.type === "image" ? imageBlock(part) : { type: "text", text: part.text },
      );
      const block: AnthropicBlock = {
        type: "tool_result",
        tool_use_id: message.toolCallId,
        content: resultContent,
        is_error: message.isError,
      };
      const previous = out[out.length - 1];
      // Every result of one assistant turn must arrive in the single user turn that follows it.
      if (previous?.role === "user" && previous.content.every((b) => b.type === "tool_result")) {
        previous.content.push(block);
      } else out.push({ role: "user", content: [block] });
    }
  }
  return out;
}

function convertTools(tools: Tool[]): AnthropicBlock[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters,
  }));
}

/** The request body for `model`, `context` and `options` (exported for tests and `onPayload` users). */
function buildAnthropicRequest(
  model: Model,
  context: Context,
  options: AnthropicOptions = {},
): Record<string, unknown> {
  const caching = options.promptCaching ?? true;
  const messages = convertMessages(transformMessages(context.messages, model));
  if (caching) {
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const lastBlock = lastUser?.content[lastUser.content.length - 1];
    if (lastBlock) lastBlock.cache_control = CACHE_CONTROL;
  }
  const body: Record<string, unknown> = {
    model: model.id,
    max_tokens: outputLimit(model, options.maxTokens),
    stream: true,
    messages,
  };
  if (context.systemPrompt) {
    body.system = [
      { type: "text", text: context.systemPrompt, ...(caching && { cache_control: CACHE_CONTROL }) },
    ];
  }
  if (context.tools && context.tools.length > 0) body.tools = convertTools(context.tools);
  if (options.toolChoice) {
    body.tool_choice =
      typeof options.toolChoice === "string" ? { type: options.toolChoice } : options.toolChoice;
  }
  if (options.thinking) {
    body.thinking = options.thinking;
    if (options.effort) body.output_config = { effort: options.effort };
  } else if (options.temperature !== undefined) {
    // With thinking on, Anthropic accepts only the default temperature.
    body.temperature = options.temperature;
  }
  if (options.sessionId) body.metadata = { user_id: options.sessionId };
  return body;
}

/** Maps Anthropic's `stop_reason`; a refusal is an error the user should see. */
function mapStopReason(reason: string | null | undefined): { reason: StopReason; errorMessage?: string } {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return { reason: "length" };
    case "tool_use":
      return { reason: "toolUse" };
    case "refusal":
      return {
        reason: "error",
        errorMessage: "Anthropic stopped the response: the model refused to continue (stop_reason: refusal)",
      };
    default:
      // end_turn, stop_sequence, pause_turn and anything newer end the turn normally.
      return { reason: "stop" };
  }
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

function applyUsage(builder: AssistantMessageBuilder, usage: AnthropicUsage | undefined): void {
  if (!usage) return;
  builder.setUsage({
    ...(typeof usage.input_tokens === "number" && { input: usage.input_tokens }),
    ...(typeof usage.output_tokens === "number" && { output: usage.output_tokens }),
    ...(typeof usage.cache_read_input_tokens === "number" && { cacheRead: usage.cache_read_input_tokens }),
    ...(typeof usage.cache_creation_input_tokens === "number" && {
      cacheWrite: usage.cache_creation_input_tokens,
    }),
  });
}

/** The subset of Anthropic stream events this provider reads. */
interface AnthropicEvent {
  type: string;
  index?: number;
  message?: { id?: string; usage?: AnthropicUsage };
  content_block?: { type: string; id?: string; name?: string; data?: string; signature?: string };
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

function parseEvent(data: string): AnthropicEvent {
  try {
    const parsed: unknown = JSON.parse(data);
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      typeof (parsed as AnthropicEvent).type === "string"
    ) {
      return parsed as AnthropicEvent;
    }
  } catch {
    // Reported below.
  }
  throw new ProviderError(`Anthropic sent a malformed stream event: ${data.slice(0, 200)}`);
}

/** Streams one assistant message from the Anthropic Messages API. Never throws; see `StreamFunction`. */
export const streamAnthropic: StreamFunction<"anthropic-messages", AnthropicOptions> = (
  model,
  context,
  options,
) =>
  runProviderStream(
    { model, provider: PROVIDER_NAME, signal: options?.signal, secrets: [options?.apiKey] },
    async (builder) => {
      const apiKey = resolveApiKey(model, options?.apiKey, PROVIDER_NAME);
      builder.scrub(apiKey);
      const betas = options?.thinking?.type === "enabled" ? ["interleaved-thinking-2025-05-14"] : [];
      const headers = streamHeaders(
        {
          "anthropic-version": API_VERSION,
          ...(apiKey !== undefined && { "x-api-key": apiKey }),
          ...(betas.length > 0 && { "anthropic-beta": betas.join(",") }),
        },
        model,
        options?.headers,
      );
      const base = model.baseUrl ?? DEFAULT_BASE_URL;
      const stream = await postForStream(
        {
          provider: PROVIDER_NAME,
          url: endpointUrl(base, /\/v1\/?$/.test(base) ? "/messages" : "/v1/messages"),
          headers,
          body: buildAnthropicRequest(model, context, options),
          apiKey,
        },
        options,
      );
      builder.start();

      const blocks = new Map<number, number>();
      let stop: { reason: StopReason; errorMessage?: string } = { reason: "stop" };
      for await (const sse of parseSSE(stream, options?.signal)) {
        const event = parseEvent(sse.data);
        switch (event.type) {
          case "message_start":
            if (event.message?.id) builder.setResponseId(event.message.id);
            applyUsage(builder, event.message?.usage);
            break;
          case "content_block_start": {
            const block = event.content_block;
            if (event.index === undefined || !block) break;
            if (block.type === "text") blocks.set(event.index, builder.startText());
            else if (block.type === "thinking") blocks.set(event.index, builder.startThinking());
            else if (block.type === "redacted_thinking") {
              blocks.set(event.index, builder.startThinking({ signature: block.data ?? "", redacted: true }));
            } else if (block.type === "tool_use") {
              blocks.set(event.index, builder.startToolCall(block.id ?? "", block.name ?? ""));
            }
            break;
          }
          case "content_block_delta": {
            const index = event.index === undefined ? undefined : blocks.get(event.index);
            const delta = event.delta;
            if (index === undefined || !delta) break;
            if (delta.type === "text_delta") builder.appendText(index, delta.text ?? "");
            else if (delta.type === "thinking_delta") builder.appendThinking(index, delta.thinking ?? "");
            else if (delta.type === "signature_delta")
              builder.appendThinkingSignature(index, delta.signature ?? "");
            else if (delta.type === "input_json_delta")
              builder.appendToolCallArguments(index, delta.partial_json ?? "");
            break;
          }
          case "content_block_stop": {
            const index = event.index === undefined ? undefined : blocks.get(event.index);
            if (index !== undefined) builder.endBlock(index);
            break;
          }
          case "message_delta":
            if (event.delta?.stop_reason) stop = mapStopReason(event.delta.stop_reason);
            applyUsage(builder, event.usage);
            break;
          case "message_stop":
            builder.finish(stop.reason, stop.errorMessage);
            return;
          case "error": {
            const type = event.error?.type;
            throw new ProviderError(
              `Anthropic stream error${type ? ` (${type})` : ""}: ${event.error?.message ?? "unknown error"}`,
              type !== undefined ? { providerCode: type } : {},
            );
          }
          default:
            // ping and event types added later carry nothing we need.
            break;
        }
      }
    },
  );

/**
 * `streamAnthropic` with provider-neutral options: `reasoning` becomes adaptive thinking with an
 * effort (Claude 4.6+) or a thinking budget, clamped to the model, with `max_tokens` raised to
 * leave room for it.
 */
const streamSimpleAnthropic: StreamFunction<"anthropic-messages", SimpleStreamOptions> = (
  model,
  context,
  options,
) => {
  const { reasoning, ...rest } = options ?? {};
  const params = anthropicThinkingParams(model, reasoning, options?.maxTokens);
  const anthropicOptions: AnthropicOptions = { ...rest, maxTokens: params.maxTokens };
  if (params.thinking) anthropicOptions.thinking = params.thinking;
  if (params.effort) anthropicOptions.effort = params.effort;
  return streamAnthropic(model, context, anthropicOptions);
};

/** The `anthropic-messages` provider, for `registerApiProvider`. */
export const anthropicProvider: ApiProvider<"anthropic-messages", AnthropicOptions> = {
  api: "anthropic-messages",
  stream: streamAnthropic,
  streamSimple: streamSimpleAnthropic,
};
