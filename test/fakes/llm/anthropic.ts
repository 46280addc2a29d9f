/**
 * Anthropic Messages API (`POST /v1/messages`, `stream: true`) for the fake LLM server: renders a
 * neutral scripted reply as the event sequence the real API sends — `message_start` (input and
 * cache usage), `ping`, per block `content_block_start` / `content_block_delta`
 * (`thinking_delta` + `signature_delta`, `text_delta`, `input_json_delta`) / `content_block_stop`,
 * `message_delta` (stop reason, output usage), `message_stop`. Errors use Anthropic's
 * `{"type":"error","error":{"type","message"}}` shape, in the body and as `event: error`.
 */
import {
  fragments,
  type NormalizedReply,
  type ScriptedHttpError,
  type ScriptedStopReason,
  type SseFrame,
  sseEvent,
  type WireProtocol,
} from "../llm-server.js";

const STOP_REASONS: Record<ScriptedStopReason, string> = {
  stop: "end_turn",
  length: "max_tokens",
  toolUse: "tool_use",
  refusal: "refusal",
};

function errorTypeFor(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}

function renderStream(reply: NormalizedReply): SseFrame[] {
  const { usage } = reply;
  const frames: SseFrame[] = [
    sseEvent("message_start", {
      type: "message_start",
      message: {
        id: reply.responseId,
        type: "message",
        role: "assistant",
        model: reply.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          cache_creation_input_tokens: usage.cacheWrite,
          cache_read_input_tokens: usage.cacheRead,
          output_tokens: 1,
        },
      },
    }),
    sseEvent("ping", { type: "ping" }),
  ];
  const delta = (index: number, d: Record<string, unknown>, token = true) =>
    sseEvent("content_block_delta", { type: "content_block_delta", index, delta: d }, token);

  reply.content.forEach((block, index) => {
    const start = (content_block: Record<string, unknown>) =>
      frames.push(sseEvent("content_block_start", { type: "content_block_start", index, content_block }));
    switch (block.type) {
      case "thinking":
        start({ type: "thinking", thinking: "", signature: "" });
        for (const piece of fragments(block.text, reply.fragmentSize))
          frames.push(delta(index, { type: "thinking_delta", thinking: piece }));
        if (block.signature !== undefined)
          frames.push(delta(index, { type: "signature_delta", signature: block.signature }, false));
        break;
      case "redactedThinking":
        start({ type: "redacted_thinking", data: block.data });
        break;
      case "text":
        start({ type: "text", text: "" });
        for (const piece of fragments(block.text, reply.fragmentSize))
          frames.push(delta(index, { type: "text_delta", text: piece }));
        break;
      case "toolCall": {
        start({ type: "tool_use", id: block.id, name: block.name, input: {} });
        const json = typeof block.args === "string" ? block.args : JSON.stringify(block.args);
        for (const piece of fragments(json, reply.fragmentSize))
          frames.push(delta(index, { type: "input_json_delta", partial_json: piece }));
        break;
      }
    }
    frames.push(sseEvent("content_block_stop", { type: "content_block_stop", index }));
  });

  frames.push(
    sseEvent("message_delta", {
      type: "message_delta",
      delta: { stop_reason: STOP_REASONS[reply.stopReason], stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
    sseEvent("message_stop", { type: "message_stop" }),
  );
  return frames;
}

export const anthropicProtocol: WireProtocol = {
  api: "anthropic-messages",
  matches: (method, pathname) => method === "POST" && pathname === "/v1/messages",
  baseUrl: (origin) => origin,
  requestedModel: (request) => String(request.body.model ?? ""),
  renderStream,
  renderStreamError: (error) =>
    sseEvent("error", { type: "error", error: { type: error.code ?? "api_error", message: error.message } }),
  renderHttpError(error: ScriptedHttpError) {
    const body =
      error.body !== undefined
        ? typeof error.body === "string"
          ? error.body
          : JSON.stringify(error.body)
        : JSON.stringify({
            type: "error",
            error: { type: error.code ?? errorTypeFor(error.status), message: error.message ?? "Error" },
          });
    return { status: error.status, headers: { "request-id": "req_fake" }, body };
  },
};
