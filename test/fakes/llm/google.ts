/**
 * Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`) for the fake LLM server.
 * Renders a neutral scripted reply as the data-only SSE chunks Gemini sends: each a
 * `GenerateContentResponse` with `candidates[0].content.parts` — thought parts
 * (`{text, thought: true}`, the last one carrying the scripted signature as `thoughtSignature`),
 * text parts, and one whole `functionCall` part per tool call (Gemini never fragments arguments;
 * the first call repeats the thinking signature, as Gemini 3 does). The last chunk has
 * `finishReason` (`STOP`, `MAX_TOKENS`, `SAFETY`) and `usageMetadata`, where `promptTokenCount`
 * includes cached tokens and output is split into `candidatesTokenCount` and
 * `thoughtsTokenCount`. A scripted tool-call id of `""` is left out, as the Gemini API leaves
 * ids out. Errors use `{"error":{"code","message","status"}}`.
 */
import {
  fragments,
  type NormalizedReply,
  type RecordedRequest,
  type ScriptedHttpError,
  type ScriptedStopReason,
  type SseFrame,
  sseEvent,
  type WireProtocol,
} from "../llm-server.js";

const FINISH_REASONS: Record<ScriptedStopReason, string> = {
  stop: "STOP",
  length: "MAX_TOKENS",
  toolUse: "STOP",
  refusal: "SAFETY",
};

const ROUTE = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/;

function statusFor(code: number): string {
  if (code === 400) return "INVALID_ARGUMENT";
  if (code === 401) return "UNAUTHENTICATED";
  if (code === 403) return "PERMISSION_DENIED";
  if (code === 404) return "NOT_FOUND";
  if (code === 429) return "RESOURCE_EXHAUSTED";
  if (code === 503) return "UNAVAILABLE";
  return "INTERNAL";
}

function parseArgs(args: Record<string, unknown> | string): Record<string, unknown> {
  if (typeof args !== "string") return args;
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function renderStream(reply: NormalizedReply): SseFrame[] {
  const chunk = (parts: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    modelVersion: reply.model,
    responseId: reply.responseId,
  });
  const frames: SseFrame[] = [];
  let signature: string | undefined;
  let firstCall = true;
  for (const block of reply.content) {
    switch (block.type) {
      case "thinking": {
        const pieces = fragments(block.text, reply.fragmentSize);
        pieces.forEach((piece, i) => {
          const part: Record<string, unknown> = { text: piece, thought: true };
          if (i === pieces.length - 1 && block.signature !== undefined)
            part.thoughtSignature = block.signature;
          frames.push(sseEvent(undefined, chunk([part]), true));
        });
        signature = block.signature ?? signature;
        break;
      }
      case "redactedThinking":
        break;
      case "text":
        for (const piece of fragments(block.text, reply.fragmentSize))
          frames.push(sseEvent(undefined, chunk([{ text: piece }]), true));
        break;
      case "toolCall": {
        const call: Record<string, unknown> = { name: block.name, args: parseArgs(block.args) };
        if (block.id !== "") call.id = block.id;
        const part: Record<string, unknown> = { functionCall: call };
        if (firstCall && signature !== undefined) part.thoughtSignature = signature;
        firstCall = false;
        frames.push(sseEvent(undefined, chunk([part]), true));
        break;
      }
    }
  }
  const { usage } = reply;
  const hasThinking = reply.content.some((b) => b.type === "thinking");
  const thoughts = hasThinking ? Math.floor(usage.output / 2) : 0;
  const prompt = usage.input + usage.cacheRead;
  const usageMetadata: Record<string, unknown> = {
    promptTokenCount: prompt,
    candidatesTokenCount: usage.output - thoughts,
    totalTokenCount: prompt + usage.output,
  };
  if (thoughts > 0) usageMetadata.thoughtsTokenCount = thoughts;
  if (usage.cacheRead > 0) usageMetadata.cachedContentTokenCount = usage.cacheRead;
  frames.push(
    sseEvent(undefined, {
      ...chunk([{ text: "" }], { finishReason: FINISH_REASONS[reply.stopReason] }),
      usageMetadata,
    }),
  );
  return frames;
}

function errorBody(code: number, message: string, status?: string): string {
  return JSON.stringify({ error: { code, message, status: status ?? statusFor(code) } });
}

/** The Gemini protocol module; pass it in `startFakeLlmServer({ protocols })` if not built in. */
export const googleProtocol: WireProtocol = {
  api: "google-generative-ai",
  matches: (method, pathname) => method === "POST" && ROUTE.test(pathname),
  baseUrl: (origin) => `${origin}/v1beta`,
  requestedModel: (request: RecordedRequest) => ROUTE.exec(request.path.split("?")[0] ?? "")?.[1] ?? "",
  renderStream,
  renderStreamError: (error) =>
    sseEvent(undefined, JSON.parse(errorBody(500, error.message, error.code ?? "INTERNAL")) as unknown),
  renderHttpError(error: ScriptedHttpError) {
    const body =
      error.body !== undefined
        ? typeof error.body === "string"
          ? error.body
          : JSON.stringify(error.body)
        : errorBody(error.status, error.message ?? "Error", error.code);
    return { status: error.status, headers: {}, body };
  },
};
