/**
 * OpenAI Responses API (`POST /v1/responses`, `stream: true`) for the fake LLM server. Renders a
 * neutral scripted reply as the typed events the real API sends, each with `sequence_number`:
 * `response.created`, `response.in_progress`; per output item `response.output_item.added`, then
 * reasoning summary parts and `response.reasoning_summary_text.delta`, or
 * `response.content_part.added` and `response.output_text.delta`, or
 * `response.function_call_arguments.delta`; `response.output_item.done` with the whole item
 * (reasoning items carry `encrypted_content`, the scripted signature); and a final
 * `response.completed` or `response.incomplete` (`max_output_tokens`, `content_filter`) with
 * usage where `input_tokens` includes cached tokens. Errors use `{"error":{"message","type","code"}}`
 * in the body and a `{"type":"error"}` event in the stream.
 */
import {
  fragments,
  type NormalizedReply,
  type ScriptedHttpError,
  type SseFrame,
  sseEvent,
  type WireProtocol,
} from "../llm-server.js";

function errorTypeFor(status: number): string {
  if (status === 401) return "invalid_api_key";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

function renderStream(reply: NormalizedReply): SseFrame[] {
  let sequence = 0;
  const frames: SseFrame[] = [];
  const emit = (type: string, data: Record<string, unknown>, token = false) =>
    frames.push(sseEvent(type, { type, sequence_number: sequence++, ...data }, token));
  const createdAt = Math.floor(Date.now() / 1000);
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: reply.responseId,
    object: "response",
    created_at: createdAt,
    status,
    model: reply.model,
    output: [] as unknown[],
    ...extra,
  });
  emit("response.created", { response: response("in_progress") });
  emit("response.in_progress", { response: response("in_progress") });

  const output: Record<string, unknown>[] = [];
  reply.content.forEach((block, outputIndex) => {
    const n = outputIndex + 1;
    switch (block.type) {
      case "thinking": {
        const id = `rs_fake${n}`;
        emit("response.output_item.added", {
          output_index: outputIndex,
          item: { id, type: "reasoning", summary: [] },
        });
        const part = { output_index: outputIndex, item_id: id, summary_index: 0 };
        emit("response.reasoning_summary_part.added", { ...part, part: { type: "summary_text", text: "" } });
        for (const piece of fragments(block.text, reply.fragmentSize))
          emit("response.reasoning_summary_text.delta", { ...part, delta: piece }, true);
        emit("response.reasoning_summary_text.done", { ...part, text: block.text });
        emit("response.reasoning_summary_part.done", {
          ...part,
          part: { type: "summary_text", text: block.text },
        });
        const item = {
          id,
          type: "reasoning",
          summary: [{ type: "summary_text", text: block.text }],
          encrypted_content: block.signature ?? `enc_${id}`,
        };
        output.push(item);
        emit("response.output_item.done", { output_index: outputIndex, item });
        break;
      }
      case "redactedThinking":
        break;
      case "text": {
        const id = `msg_fake${n}`;
        emit("response.output_item.added", {
          output_index: outputIndex,
          item: { id, type: "message", status: "in_progress", role: "assistant", content: [] },
        });
        const at = { output_index: outputIndex, item_id: id, content_index: 0 };
        emit("response.content_part.added", {
          ...at,
          part: { type: "output_text", text: "", annotations: [] },
        });
        for (const piece of fragments(block.text, reply.fragmentSize))
          emit("response.output_text.delta", { ...at, delta: piece, logprobs: [] }, true);
        emit("response.output_text.done", { ...at, text: block.text, logprobs: [] });
        const content = { type: "output_text", text: block.text, annotations: [] };
        emit("response.content_part.done", { ...at, part: content });
        const item = { id, type: "message", status: "completed", role: "assistant", content: [content] };
        output.push(item);
        emit("response.output_item.done", { output_index: outputIndex, item });
        break;
      }
      case "toolCall": {
        const id = `fc_fake${n}`;
        const json = typeof block.args === "string" ? block.args : JSON.stringify(block.args);
        emit("response.output_item.added", {
          output_index: outputIndex,
          item: {
            id,
            type: "function_call",
            status: "in_progress",
            call_id: block.id,
            name: block.name,
            arguments: "",
          },
        });
        for (const piece of fragments(json, reply.fragmentSize))
          emit(
            "response.function_call_arguments.delta",
            { output_index: outputIndex, item_id: id, delta: piece },
            true,
          );
        emit("response.function_call_arguments.done", {
          output_index: outputIndex,
          item_id: id,
          arguments: json,
        });
        const item = {
          id,
          type: "function_call",
          status: "completed",
          call_id: block.id,
          name: block.name,
          arguments: json,
        };
        output.push(item);
        emit("response.output_item.done", { output_index: outputIndex, item });
        break;
      }
    }
  });

  const { usage } = reply;
  const usageBody = {
    input_tokens: usage.input + usage.cacheRead,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.cacheRead + usage.output,
  };
  if (reply.stopReason === "length" || reply.stopReason === "refusal") {
    const reason = reply.stopReason === "length" ? "max_output_tokens" : "content_filter";
    emit("response.incomplete", {
      response: response("incomplete", { output, usage: usageBody, incomplete_details: { reason } }),
    });
  } else {
    emit("response.completed", { response: response("completed", { output, usage: usageBody }) });
  }
  return frames;
}

/** The Responses protocol module; pass it in `startFakeLlmServer({ protocols })` if not built in. */
export const openAIResponsesProtocol: WireProtocol = {
  api: "openai-responses",
  matches: (method, pathname) => method === "POST" && pathname === "/v1/responses",
  baseUrl: (origin) => `${origin}/v1`,
  requestedModel: (request) => String(request.body.model ?? ""),
  renderStream,
  renderStreamError: (error) =>
    sseEvent("error", {
      type: "error",
      sequence_number: 9999,
      code: error.code ?? "server_error",
      message: error.message,
      param: null,
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
