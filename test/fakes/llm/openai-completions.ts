/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`, `stream: true`) for the fake LLM server:
 * `data: <chunk>` events — a role chunk, `reasoning_content` deltas for thinking (as vLLM,
 * DeepSeek and other OpenAI-compatible servers send it; OpenAI itself never streams reasoning
 * here), `content` deltas, `tool_calls` deltas (first with id and name, then argument fragments),
 * a chunk with `finish_reason`, a usage chunk when the request asked for
 * `stream_options.include_usage`, then `data: [DONE]`. Errors use `{"error":{"message","type","code"}}`.
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
  stop: "stop",
  length: "length",
  toolUse: "tool_calls",
  refusal: "content_filter",
};

function errorTypeFor(status: number): string {
  if (status === 401) return "invalid_api_key";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

function renderStream(reply: NormalizedReply, request: RecordedRequest): SseFrame[] {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id: reply.responseId,
    object: "chat.completion.chunk",
    created,
    model: reply.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const frames: SseFrame[] = [sseEvent(undefined, chunk({ role: "assistant", content: "" }))];
  let toolIndex = 0;
  for (const block of reply.content) {
    switch (block.type) {
      case "thinking":
        for (const piece of fragments(block.text, reply.fragmentSize))
          frames.push(sseEvent(undefined, chunk({ reasoning_content: piece }), true));
        break;
      case "redactedThinking":
        break;
      case "text":
        for (const piece of fragments(block.text, reply.fragmentSize))
          frames.push(sseEvent(undefined, chunk({ content: piece }), true));
        break;
      case "toolCall": {
        const index = toolIndex++;
        frames.push(
          sseEvent(
            undefined,
            chunk({
              tool_calls: [
                { index, id: block.id, type: "function", function: { name: block.name, arguments: "" } },
              ],
            }),
          ),
        );
        const json = typeof block.args === "string" ? block.args : JSON.stringify(block.args);
        for (const piece of fragments(json, reply.fragmentSize))
          frames.push(
            sseEvent(undefined, chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), true),
          );
        break;
      }
    }
  }
  frames.push(sseEvent(undefined, chunk({}, FINISH_REASONS[reply.stopReason])));
  const streamOptions = request.body.stream_options as { include_usage?: boolean } | undefined;
  if (streamOptions?.include_usage) {
    const { usage } = reply;
    const prompt = usage.input + usage.cacheRead;
    frames.push(
      sseEvent(undefined, {
        id: reply.responseId,
        object: "chat.completion.chunk",
        created,
        model: reply.model,
        choices: [],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: usage.output,
          total_tokens: prompt + usage.output,
          prompt_tokens_details: { cached_tokens: usage.cacheRead },
        },
      }),
    );
  }
  frames.push(sseEvent(undefined, "[DONE]"));
  return frames;
}

export const openAICompletionsProtocol: WireProtocol = {
  api: "openai-completions",
  matches: (method, pathname) => method === "POST" && pathname === "/v1/chat/completions",
  baseUrl: (origin) => `${origin}/v1`,
  requestedModel: (request) => String(request.body.model ?? ""),
  renderStream,
  renderStreamError: (error) =>
    sseEvent(undefined, {
      error: { message: error.message, type: "server_error", code: error.code ?? null },
    }),
  renderHttpError(error: ScriptedHttpError) {
    const body =
      error.body !== undefined
        ? typeof error.body === "string"
          ? error.body
          : JSON.stringify(error.body)
        : JSON.stringify({
            error: {
              message: error.message ?? "Error",
              type: errorTypeFor(error.status),
              param: null,
              code: error.code ?? null,
            },
          });
    return { status: error.status, headers: { "x-request-id": "req_fake" }, body };
  },
};
