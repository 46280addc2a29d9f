/**
 * OpenAI Responses API (`POST {baseUrl}/responses`, streamed): request building from the shared
 * `Context` and translation of its typed SSE events into `AssistantMessageEvent`s.
 *
 * Replay rules: a reasoning item is kept whole (with `encrypted_content`) as the thinking
 * block's `thinkingSignature` and sent back verbatim to the same model (`store: false` plus
 * `include: ["reasoning.encrypted_content"]` makes that possible without server-side state).
 * Tool-call ids are `call_id|item_id`; the item id goes back only for the same model, since a
 * function-call item id without its reasoning item is rejected.
 */
import { clampThinkingLevel, openaiReasoningEffort, outputLimit, thinkingTokenBudget } from "../thinking.js";
import { transformMessages } from "../transform-messages.js";
import type {
  ApiProvider,
  AssistantMessage,
  Context,
  ImageContent,
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

const PROVIDER_NAME = "OpenAI";
const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Options of the raw Responses stream. */
export interface OpenAIResponsesOptions extends StreamOptions {
  /** `reasoning.effort` (`none`, `minimal`, `low`, `medium`, `high`, `xhigh`); absent sends no `reasoning`. */
  reasoningEffort?: string;
  /** `reasoning.summary`. Default `auto` whenever an effort other than `none` is sent. */
  reasoningSummary?: "auto" | "concise" | "detailed";
  /** Backoff tuning (tests make it instant). */
  retry?: RetryTuning;
}

type InputItem = Record<string, unknown>;

function userContent(content: string | (TextContent | ImageContent)[]): InputItem[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  return content.map((c) =>
    c.type === "text"
      ? { type: "input_text", text: c.text }
      : { type: "input_image", image_url: `data:${c.mimeType};base64,${c.data}`, detail: "auto" },
  );
}

function sameModel(message: AssistantMessage, model: Model): boolean {
  return message.provider === model.provider && message.api === model.api && message.model === model.id;
}

function assistantItems(message: AssistantMessage, model: Model): InputItem[] {
  const items: InputItem[] = [];
  const same = sameModel(message, model);
  for (const block of message.content) {
    if (block.type === "thinking") {
      // Only a signed reasoning item can be replayed; transformMessages turned foreign thinking into text.
      if (!block.thinkingSignature) continue;
      try {
        const item: unknown = JSON.parse(block.thinkingSignature);
        if (typeof item === "object" && item !== null) items.push(item as InputItem);
      } catch {
        // A signature that is not a reasoning item (another API's) cannot be replayed here.
      }
    } else if (block.type === "text") {
      if (block.text === "") continue;
      if (same && block.textSignature?.startsWith("msg_")) {
        items.push({
          type: "message",
          role: "assistant",
          id: block.textSignature,
          status: "completed",
          content: [{ type: "output_text", text: block.text, annotations: [] }],
        });
      } else items.push({ role: "assistant", content: block.text });
    } else {
      const [callId, itemId] = block.id.split("|");
      const item: InputItem = {
        type: "function_call",
        call_id: callId,
        name: block.name,
        arguments: JSON.stringify(block.arguments),
      };
      if (same && itemId?.startsWith("fc_")) item.id = itemId;
      items.push(item);
    }
  }
  return items;
}

/** The `input` array of a Responses request (after `transformMessages`). */
function convertResponsesInput(context: Context, model: Model): InputItem[] {
  const input: InputItem[] = [];
  for (const message of transformMessages(context.messages, model)) {
    if (message.role === "user") {
      input.push({ role: "user", content: userContent(message.content) });
    } else if (message.role === "assistant") {
      input.push(...assistantItems(message, model));
    } else {
      const text = message.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const images = message.content.filter((c): c is ImageContent => c.type === "image");
      input.push({
        type: "function_call_output",
        call_id: message.toolCallId.split("|")[0],
        output: text !== "" ? text : images.length > 0 ? "(image attached below)" : "(no output)",
      });
      // Tool outputs are text here; images travel in a user message right after the output.
      if (images.length > 0) {
        input.push({
          role: "user",
          content: [
            { type: "input_text", text: `Image output of tool ${message.toolName}:` },
            ...userContent(images),
          ],
        });
      }
    }
  }
  return input;
}

function convertTools(tools: Tool[]): InputItem[] {
  return tools.map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    strict: false,
  }));
}

/** The request body the stream sends (exported for tests and `onPayload` users). */
function buildResponsesRequest(
  model: Model,
  context: Context,
  options: OpenAIResponsesOptions = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: model.id,
    input: convertResponsesInput(context, model),
    stream: true,
    store: false,
  };
  if (context.systemPrompt) body.instructions = context.systemPrompt;
  body.max_output_tokens = outputLimit(model, options.maxTokens);
  // OpenAI's reasoning models reject `temperature`; it is sent only to the others.
  if (options.temperature !== undefined && !model.reasoning) body.temperature = options.temperature;
  if (context.tools && context.tools.length > 0) body.tools = convertTools(context.tools);
  if (options.sessionId) body.prompt_cache_key = options.sessionId;
  if (model.reasoning) {
    body.include = ["reasoning.encrypted_content"];
    if (options.reasoningEffort !== undefined) {
      body.reasoning =
        options.reasoningEffort === "none"
          ? { effort: "none" }
          : { effort: options.reasoningEffort, summary: options.reasoningSummary ?? "auto" };
    }
  }
  return body;
}

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
}

interface ResponseObject {
  id?: string;
  status?: string;
  usage?: ResponsesUsage;
  incomplete_details?: { reason?: string } | null;
  error?: { message?: string; code?: string } | null;
}

interface OutputItem {
  id?: string;
  type?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  summary?: { text?: string }[];
}

interface StreamEvent {
  type?: string;
  output_index?: number;
  summary_index?: number;
  delta?: string;
  arguments?: string;
  item?: OutputItem;
  response?: ResponseObject;
  message?: string;
  code?: string;
}

/** Reads the event stream into `b`; returns the final response object, or undefined if the stream was cut. */
async function readEvents(
  b: AssistantMessageBuilder,
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<ResponseObject | undefined> {
  const blocks = new Map<number, { index: number; kind: string; streamed: boolean }>();
  for await (const sse of parseSSE(body, signal)) {
    let event: StreamEvent;
    try {
      event = JSON.parse(sse.data) as StreamEvent;
    } catch {
      throw new ProviderError(`${PROVIDER_NAME} sent a malformed stream event (not JSON)`);
    }
    const at = event.output_index ?? -1;
    const open = blocks.get(at);
    switch (event.type) {
      case "response.created":
        if (event.response?.id) b.setResponseId(event.response.id);
        break;
      case "response.output_item.added": {
        const item = event.item ?? {};
        if (item.type === "reasoning") {
          blocks.set(at, { index: b.startThinking(), kind: "thinking", streamed: false });
        } else if (item.type === "message") {
          const index = b.startText();
          if (item.id) b.setTextSignature(index, item.id);
          blocks.set(at, { index, kind: "text", streamed: false });
        } else if (item.type === "function_call") {
          const id = `${item.call_id ?? ""}|${item.id ?? ""}`;
          const index = b.startToolCall(id, item.name ?? "");
          blocks.set(at, { index, kind: "toolCall", streamed: false });
          if (item.arguments) {
            b.appendToolCallArguments(index, item.arguments);
            blocks.set(at, { index, kind: "toolCall", streamed: true });
          }
        }
        break;
      }
      case "response.reasoning_summary_part.added":
        if (open?.kind === "thinking" && (event.summary_index ?? 0) > 0) b.appendThinking(open.index, "\n\n");
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        if (open?.kind === "thinking" && event.delta) {
          b.appendThinking(open.index, event.delta);
          open.streamed = true;
        }
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (open?.kind === "text" && event.delta) {
          b.appendText(open.index, event.delta);
          open.streamed = true;
        }
        break;
      case "response.function_call_arguments.delta":
        if (open?.kind === "toolCall" && event.delta) {
          b.appendToolCallArguments(open.index, event.delta);
          open.streamed = true;
        }
        break;
      case "response.function_call_arguments.done":
        if (open?.kind === "toolCall" && !open.streamed && event.arguments) {
          b.appendToolCallArguments(open.index, event.arguments);
          open.streamed = true;
        }
        break;
      case "response.output_item.done": {
        if (!open) break;
        const item = event.item ?? {};
        if (open.kind === "thinking") {
          const summary = (item.summary ?? []).map((s) => s.text ?? "").join("\n\n");
          if (!open.streamed && summary) b.appendThinking(open.index, summary);
          b.appendThinkingSignature(open.index, JSON.stringify(item));
        } else if (open.kind === "toolCall" && !open.streamed && item.arguments) {
          b.appendToolCallArguments(open.index, item.arguments);
        }
        b.endBlock(open.index);
        blocks.delete(at);
        break;
      }
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
      case "response.cancelled":
        return event.response ?? {};
      case "error":
        throw new ProviderError(
          `${PROVIDER_NAME} stream error${event.code ? ` (${event.code})` : ""}: ${event.message ?? "unknown error"}`,
          event.code !== undefined ? { providerCode: event.code } : {},
        );
      default:
        break;
    }
  }
  return undefined;
}

function finishFromResponse(b: AssistantMessageBuilder, response: ResponseObject): void {
  const usage = response.usage;
  if (usage) {
    const cached = usage.input_tokens_details?.cached_tokens ?? 0;
    b.setUsage({
      input: Math.max(0, (usage.input_tokens ?? 0) - cached),
      output: usage.output_tokens ?? 0,
      cacheRead: cached,
    });
  }
  if (response.id) b.setResponseId(response.id);
  const status = response.status;
  if (status === "failed" || status === "cancelled") {
    const error = response.error;
    b.finish(
      "error",
      `${PROVIDER_NAME} response ${status}${error?.code ? ` (${error.code})` : ""}: ${error?.message ?? "no reason given"}`,
    );
    return;
  }
  if (status === "incomplete") {
    const reason = response.incomplete_details?.reason;
    if (reason === "max_output_tokens") b.finish("length");
    else b.finish("error", `${PROVIDER_NAME} response incomplete: ${reason ?? "no reason given"}`);
    return;
  }
  const hasToolCalls = b.message.content.some((c) => c.type === "toolCall");
  const reason: StopReason = hasToolCalls ? "toolUse" : "stop";
  b.finish(reason);
}

/** Streams one assistant message from the Responses API. Never throws; see `StreamFunction`. */
const streamOpenAIResponses: StreamFunction<"openai-responses", OpenAIResponsesOptions> = (
  model,
  context,
  options = {},
) => {
  return runProviderStream(
    { model, provider: PROVIDER_NAME, signal: options.signal, secrets: [options.apiKey] },
    async (b) => {
      const apiKey = resolveApiKey(model, options.apiKey, PROVIDER_NAME);
      b.scrub(apiKey);
      const headers = streamHeaders(
        apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {},
        model,
        options.headers,
      );
      const stream = await postForStream(
        {
          provider: PROVIDER_NAME,
          url: endpointUrl(model.baseUrl ?? DEFAULT_BASE_URL, "/responses"),
          headers,
          body: buildResponsesRequest(model, context, options),
          apiKey,
        },
        options,
      );
      b.start();
      const final = await readEvents(b, stream, options.signal);
      // A stream cut before its final event returns here without finishing: the builder reports it.
      if (final) finishFromResponse(b, final);
    },
  );
};

/**
 * `streamSimple` for the Responses API: the thread's thinking level becomes `reasoning.effort`
 * (clamped to the model; `off` → `none` where the model accepts it), and `max_output_tokens`
 * is raised to leave room for reasoning.
 */
const streamSimpleOpenAIResponses: StreamFunction<"openai-responses", SimpleStreamOptions> = (
  model,
  context,
  options = {},
) => {
  const { reasoning, ...rest } = options;
  const raw: OpenAIResponsesOptions = { ...rest };
  const effort = openaiReasoningEffort(model, reasoning);
  if (effort !== undefined) raw.reasoningEffort = effort;
  const level = clampThinkingLevel(model, reasoning ?? "off");
  if (model.reasoning && level !== "off")
    raw.maxTokens = thinkingTokenBudget(model, level, options.maxTokens).maxTokens;
  return streamOpenAIResponses(model, context, raw);
};

/** The `openai-responses` wire API. */
export const openaiResponsesProvider: ApiProvider<"openai-responses", OpenAIResponsesOptions> = {
  api: "openai-responses",
  stream: streamOpenAIResponses,
  streamSimple: streamSimpleOpenAIResponses,
};
