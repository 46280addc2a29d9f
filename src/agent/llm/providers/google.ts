/**
 * Gemini API (`POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`, key in
 * `x-goog-api-key`): request building from the shared `Context` and translation of its streamed
 * `GenerateContentResponse` chunks into `AssistantMessageEvent`s.
 *
 * Gemini sends a function call's arguments whole, in one part; the provider still emits
 * `toolcall_start`, one `toolcall_delta` and `toolcall_end`, so consumers see the same shape as
 * from the other APIs. Calls without an id get a generated one. Thought signatures (on thought,
 * text and function-call parts) are kept and replayed to the same model; Gemini 3 rejects a
 * function call without one, so calls from other models carry Google's documented
 * "skip validator" placeholder instead.
 */
import { randomBytes } from "node:crypto";
import {
  type GoogleThinkingConfig,
  googleThinkingParams,
  outputLimit,
  usesThinkingLevel,
} from "../thinking.js";
import { transformMessages } from "../transform-messages.js";
import type {
  ApiProvider,
  AssistantMessage,
  Context,
  ImageContent,
  Model,
  SimpleStreamOptions,
  StreamFunction,
  StreamOptions,
  TextContent,
  ThinkingContent,
} from "../types.js";
import { ProviderError, type RetryTuning } from "./shared/http.js";
import { type AssistantMessageBuilder, runProviderStream } from "./shared/message-builder.js";
import { endpointUrl, postForStream, resolveApiKey, streamHeaders } from "./shared/request.js";
import { parseSSE } from "./shared/sse.js";

const PROVIDER_NAME = "Google";
const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta";
/** Google's documented placeholder for function calls whose real signature is unknown. */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** Options of the raw Gemini stream. */
export interface GoogleOptions extends StreamOptions {
  /** `generationConfig.thinkingConfig`, sent as given. */
  thinkingConfig?: GoogleThinkingConfig;
  /** Backoff tuning (tests make it instant). */
  retry?: RetryTuning;
}

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

function mediaParts(content: string | (TextContent | ImageContent)[]): Part[] {
  if (typeof content === "string") return [{ text: content }];
  return content.map((c) =>
    c.type === "text" ? { text: c.text } : { inlineData: { mimeType: c.mimeType, data: c.data } },
  );
}

function sameModel(message: AssistantMessage, model: Model): boolean {
  return message.provider === model.provider && message.api === model.api && message.model === model.id;
}

function modelParts(message: AssistantMessage, model: Model): Part[] {
  const same = sameModel(message, model);
  const parts: Part[] = [];
  for (const block of message.content) {
    if (block.type === "thinking") {
      // transformMessages turned foreign thinking into text; what is left is this model's own.
      if (block.redacted) continue;
      const part: Part = { text: block.thinking, thought: true };
      if (block.thinkingSignature) part.thoughtSignature = block.thinkingSignature;
      parts.push(part);
    } else if (block.type === "text") {
      if (block.text === "") continue;
      const part: Part = { text: block.text };
      if (same && block.textSignature) part.thoughtSignature = block.textSignature;
      parts.push(part);
    } else {
      const part: Part = { functionCall: { id: block.id, name: block.name, args: block.arguments } };
      const signature = same ? block.thoughtSignature : undefined;
      if (signature) part.thoughtSignature = signature;
      else if (usesThinkingLevel(model)) part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
      parts.push(part);
    }
  }
  return parts;
}

/** The `contents` array of a Gemini request (after `transformMessages`); consecutive turns of one role merge. */
function convertGoogleContents(context: Context, model: Model): Content[] {
  const contents: Content[] = [];
  const push = (role: Content["role"], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of transformMessages(context.messages, model)) {
    if (message.role === "user") push("user", mediaParts(message.content));
    else if (message.role === "assistant") push("model", modelParts(message, model));
    else {
      const text = message.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const images = message.content.filter((c): c is ImageContent => c.type === "image");
      const response = message.isError ? { error: text } : { output: text };
      push("user", [
        { functionResponse: { id: message.toolCallId, name: message.toolName, response } },
        ...mediaParts(images),
      ]);
    }
  }
  return contents;
}

/** The request body the stream sends (exported for tests and `onPayload` users). */
function buildGoogleRequest(
  model: Model,
  context: Context,
  options: GoogleOptions = {},
): Record<string, unknown> {
  const generationConfig: Record<string, unknown> = {
    maxOutputTokens: outputLimit(model, options.maxTokens),
  };
  if (options.temperature !== undefined) generationConfig.temperature = options.temperature;
  if (options.thinkingConfig) generationConfig.thinkingConfig = options.thinkingConfig;
  const body: Record<string, unknown> = { contents: convertGoogleContents(context, model), generationConfig };
  if (context.systemPrompt) body.systemInstruction = { parts: [{ text: context.systemPrompt }] };
  if (context.tools && context.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: context.tools.map((t) => ({
          name: t.name,
          description: t.description,
          // Full JSON Schema (TypeBox output), not the OpenAPI subset that `parameters` takes.
          parametersJsonSchema: t.parameters,
        })),
      },
    ];
  }
  return body;
}

interface GooglePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
}

interface GoogleChunk {
  candidates?: { content?: { parts?: GooglePart[] }; finishReason?: string; finishMessage?: string }[];
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
  };
  promptFeedback?: { blockReason?: string };
  responseId?: string;
  error?: { code?: number; message?: string; status?: string };
}

function generatedCallId(): string {
  return `call_${randomBytes(8).toString("hex")}`;
}

/** Reads the chunks into `b`; returns the finish reason, or undefined when the stream was cut first. */
async function readChunks(
  b: AssistantMessageBuilder,
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  let current: { index: number; kind: "text" | "thinking" } | undefined;
  let finishReason: string | undefined;
  const usedIds = new Set<string>();
  const close = () => {
    if (current) b.endBlock(current.index);
    current = undefined;
  };
  for await (const sse of parseSSE(body, signal)) {
    let chunk: GoogleChunk;
    try {
      chunk = JSON.parse(sse.data) as GoogleChunk;
    } catch {
      throw new ProviderError(`${PROVIDER_NAME} sent a malformed stream chunk (not JSON)`);
    }
    if (chunk.error) {
      const { code, status, message } = chunk.error;
      throw new ProviderError(
        `${PROVIDER_NAME} stream error${status ? ` (${status})` : ""}: ${message ?? "unknown error"}`,
        {
          code: "provider.stream",
          ...(code !== undefined && { status: code }),
          ...(status !== undefined && { providerCode: status }),
        },
      );
    }
    if (chunk.responseId) b.setResponseId(chunk.responseId);
    if (chunk.promptFeedback?.blockReason) finishReason = `BLOCKED:${chunk.promptFeedback.blockReason}`;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        close();
        let id = part.functionCall.id;
        if (!id || usedIds.has(id)) id = generatedCallId();
        usedIds.add(id);
        const index = b.startToolCall(
          id,
          part.functionCall.name ?? "",
          part.thoughtSignature ? { thoughtSignature: part.thoughtSignature } : {},
        );
        b.appendToolCallArguments(index, JSON.stringify(part.functionCall.args ?? {}));
        b.endBlock(index);
        continue;
      }
      if (part.text === undefined) continue;
      const kind = part.thought ? "thinking" : "text";
      if (part.text === "") {
        // An empty part may still carry the signature of the block it ends.
        if (part.thoughtSignature && current?.kind === "text")
          b.setTextSignature(current.index, part.thoughtSignature);
        if (part.thoughtSignature && current?.kind === "thinking") {
          (b.message.content[current.index] as ThinkingContent).thinkingSignature = part.thoughtSignature;
        }
        continue;
      }
      if (current?.kind !== kind) {
        close();
        current = { index: kind === "thinking" ? b.startThinking() : b.startText(), kind };
      }
      if (kind === "thinking") {
        b.appendThinking(current.index, part.text);
        if (part.thoughtSignature) {
          // A later signature replaces an earlier one: it covers everything thought so far.
          (b.message.content[current.index] as ThinkingContent).thinkingSignature = part.thoughtSignature;
        }
      } else {
        b.appendText(current.index, part.text);
        if (part.thoughtSignature) b.setTextSignature(current.index, part.thoughtSignature);
      }
    }
    const usage = chunk.usageMetadata;
    if (usage) {
      const cached = usage.cachedContentTokenCount ?? 0;
      b.setUsage({
        input: Math.max(0, (usage.promptTokenCount ?? 0) - cached),
        output: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
        cacheRead: cached,
      });
    }
    if (candidate?.finishReason) finishReason = candidate.finishReason;
  }
  close();
  return finishReason;
}

function finishFrom(b: AssistantMessageBuilder, finishReason: string): void {
  if (finishReason === "STOP" || finishReason === "FINISH_REASON_UNSPECIFIED") {
    b.finish(b.message.content.some((c) => c.type === "toolCall") ? "toolUse" : "stop");
  } else if (finishReason === "MAX_TOKENS") b.finish("length");
  else if (finishReason.startsWith("BLOCKED:")) {
    b.finish("error", `${PROVIDER_NAME} blocked the prompt (${finishReason.slice(8)})`);
  } else b.finish("error", `${PROVIDER_NAME} stopped the response (finishReason ${finishReason})`);
}

/** Streams one assistant message from the Gemini API. Never throws; see `StreamFunction`. */
export const streamGoogle: StreamFunction<"google-generative-ai", GoogleOptions> = (
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
        apiKey !== undefined ? { "x-goog-api-key": apiKey } : {},
        model,
        options.headers,
      );
      const stream = await postForStream(
        {
          provider: PROVIDER_NAME,
          url: endpointUrl(
            model.baseUrl ?? DEFAULT_BASE_URL,
            `/models/${encodeURIComponent(model.id)}:streamGenerateContent?alt=sse`,
          ),
          headers,
          body: buildGoogleRequest(model, context, options),
          apiKey,
        },
        options,
      );
      b.start();
      const finishReason = await readChunks(b, stream, options.signal);
      // No finish reason means the stream was cut; the builder reports that as an error.
      if (finishReason !== undefined) finishFrom(b, finishReason);
    },
  );
};

/**
 * `streamSimple` for Gemini: the thread's thinking level becomes `thinkingConfig` (Gemini 3:
 * `thinkingLevel`; Gemini 2.5: `thinkingBudget`, 0 for `off` where allowed), clamped to the model,
 * with `maxOutputTokens` raised to leave room for thoughts.
 */
const streamSimpleGoogle: StreamFunction<"google-generative-ai", SimpleStreamOptions> = (
  model,
  context,
  options = {},
) => {
  const { reasoning, ...rest } = options;
  const { maxTokens, thinkingConfig } = googleThinkingParams(model, reasoning, options.maxTokens);
  const raw: GoogleOptions = { ...rest, maxTokens };
  if (thinkingConfig) raw.thinkingConfig = thinkingConfig;
  return streamGoogle(model, context, raw);
};

/** The `google-generative-ai` wire API. */
export const googleProvider: ApiProvider<"google-generative-ai", GoogleOptions> = {
  api: "google-generative-ai",
  stream: streamGoogle,
  streamSimple: streamSimpleGoogle,
};
