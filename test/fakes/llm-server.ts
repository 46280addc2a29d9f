/**
 * A fake LLM server: one local HTTP server that speaks the four wire APIs and replays scripted
 * replies as real SSE bytes, so providers (and everything above them: the agent loop, the queue
 * runtime, end-to-end gateway tests, benchmarks) run against the network exactly as in production.
 *
 * ```ts
 * const llm = await startFakeLlmServer();
 * const model = { ...someModel, baseUrl: llm.baseUrl("anthropic-messages") };
 * llm.enqueue("anthropic-messages", { thinking: "Let me see", text: "Hello!", usage: { input: 12, output: 5 } });
 * const message = await complete(model, context, { apiKey: "test-key" });
 * expect(llm.requests[0]?.body).toMatchObject({ model: model.id, stream: true });
 * await llm.close();
 * ```
 *
 * Routes (see `baseUrl(api)` for what to put in `model.baseUrl`):
 * - `anthropic-messages`: `POST /v1/messages` — baseUrl is the origin (the provider appends `/v1/messages`);
 * - `openai-completions`: `POST /v1/chat/completions` — baseUrl `<origin>/v1`;
 * - `openai-responses`: `POST /v1/responses` — baseUrl `<origin>/v1`;
 * - `google-generative-ai`: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` — baseUrl `<origin>/v1beta`.
 *
 * A reply is provider-neutral (`ScriptedReply`); the protocol module of the route
 * (`test/fakes/llm/<api>.ts`, a `WireProtocol`) renders it into that API's SSE events or error body.
 * Replies are consumed in order per api (`enqueue`); when the queue is empty the handler set with
 * `respondWith(api, fn)` answers (conversation-driven tests); with neither, the server answers
 * HTTP 500 with a message saying no reply was scripted. Failure injection and byte-level
 * splitting are fields of the reply (see `ScriptedReply`). Every request is recorded in
 * `requests` with its parsed JSON body, in arrival order.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicProtocol } from "./llm/anthropic.js";
import { googleProtocol } from "./llm/google.js";
import { openAICompletionsProtocol } from "./llm/openai-completions.js";
import { openAIResponsesProtocol } from "./llm/openai-responses.js";

/** The wire APIs the server speaks. */
export type FakeApi =
  | "anthropic-messages"
  | "openai-completions"
  | "openai-responses"
  | "google-generative-ai";

/** One content block of a scripted reply, streamed in order. */
export type ScriptedBlock =
  | { type: "thinking"; text: string; signature?: string }
  /** Anthropic `redacted_thinking`; other protocols skip it. */
  | { type: "redactedThinking"; data: string }
  | { type: "text"; text: string }
  /** `args` as an object is serialised; as a string it is sent verbatim (for malformed-JSON tests). */
  | { type: "toolCall"; id: string; name: string; args: Record<string, unknown> | string };

/** Provider-neutral stop reasons; each protocol maps them (`refusal`: Anthropic `refusal`, OpenAI `content_filter`, Google `SAFETY`). */
export type ScriptedStopReason = "stop" | "length" | "toolUse" | "refusal";

/** Token counts as the neutral reply states them; `input` excludes cached tokens. */
export interface ScriptedUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** An HTTP error answer instead of a stream. */
export interface ScriptedHttpError {
  status: number;
  /** The provider's error message, rendered into the API's error body. */
  message?: string;
  /** The provider's error type/code (Anthropic `error.type`, OpenAI `error.code`, Google `error.status`). */
  code?: string;
  /** Raw body (object → JSON) replacing the rendered one. */
  body?: unknown;
  /** `retry-after` header, in seconds. */
  retryAfter?: number;
  /** `retry-after-ms` header. */
  retryAfterMs?: number;
  headers?: Record<string, string>;
}

/**
 * A scripted reply. Content is either `content` (explicit order) or the shorthand fields,
 * streamed as thinking → text → tool calls. Stop reason defaults to `toolUse` when there are
 * tool calls, else `stop`.
 */
export interface ScriptedReply {
  content?: ScriptedBlock[];
  thinking?: string;
  thinkingSignature?: string;
  text?: string;
  toolCalls?: { id: string; name: string; args: Record<string, unknown> | string }[];
  stopReason?: ScriptedStopReason;
  /** Default: all zero. */
  usage?: ScriptedUsage;
  /** Response id (Anthropic message id, OpenAI completion id). A default is generated. */
  responseId?: string;
  /** Characters per delta event (text, thinking, tool arguments). Default 4. */
  fragmentSize?: number;

  /** Answer with an HTTP error instead of a stream. */
  httpError?: ScriptedHttpError;
  /**
   * Answer with these bytes instead of a stream (default status 200): a proxy's HTML page, a JSON
   * completion from a server that ignores `stream: true`.
   */
  rawAnswer?: { status?: number; contentType: string; body: string };
  /** The stream's content type. Default `text/event-stream; charset=utf-8`. */
  streamContentType?: string;
  /** After this many delta events, send the API's in-stream error event and end the response. */
  errorAfterTokens?: { tokens: number; message: string; code?: string };
  /** After this many delta events, stop writing and keep the connection open until closed or aborted. */
  stallAfterTokens?: number;
  /** Write only this many bytes of the stream, then destroy the connection. */
  dropAfterBytes?: number;
  /** Split the byte stream into writes of this many bytes (1 splits inside every UTF-8 character). */
  chunkSize?: number;
  /** Split the byte stream at these byte offsets. Default (neither set): one write per SSE event. */
  splitAt?: number[];
  /** Wait this long between writes (benchmarks, slow-stream tests). Default 0. */
  writeDelayMs?: number;
}

/** Chooses a reply from the request (conversation-driven tests). */
export type ReplyFunction = (request: RecordedRequest) => ScriptedReply;

export interface RecordedRequest {
  api: FakeApi;
  method: string;
  /** Path with query string, e.g. `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  /** The pictures in the request, in order, whatever the wire format (see `imagesOf`). */
  images: RecordedImage[];
}

/** A picture a request carried. */
export interface RecordedImage {
  mimeType: string;
  /** The decoded bytes. */
  bytes: Buffer;
}

/**
 * The pictures anywhere in a request body, in document order: Anthropic's base64 `image` blocks,
 * OpenAI's `image_url` (chat completions) and `input_image` (responses) data URLs, Google's
 * `inlineData`.
 */
function imagesOf(body: unknown): RecordedImage[] {
  const out: RecordedImage[] = [];
  const fromDataUrl = (url: unknown) => {
    const m = typeof url === "string" ? /^data:([^;]+);base64,(.*)$/s.exec(url) : null;
    if (m) out.push({ mimeType: m[1] ?? "", bytes: Buffer.from(m[2] ?? "", "base64") });
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (typeof v !== "object" || v === null) return;
    const o = v as Record<string, unknown>;
    const source = o.source as Record<string, unknown> | undefined;
    const inline = o.inlineData as Record<string, unknown> | undefined;
    if (o.type === "image" && source?.type === "base64")
      out.push({ mimeType: String(source.media_type), bytes: Buffer.from(String(source.data), "base64") });
    else if (o.type === "image_url") fromDataUrl((o.image_url as Record<string, unknown> | undefined)?.url);
    else if (o.type === "input_image") fromDataUrl(o.image_url);
    else if (inline && typeof inline.data === "string")
      out.push({ mimeType: String(inline.mimeType), bytes: Buffer.from(inline.data, "base64") });
    else for (const x of Object.values(o)) walk(x);
  };
  walk(body);
  return out;
}

/** A scripted reply with its defaults resolved, as protocol modules receive it. */
export interface NormalizedReply {
  content: ScriptedBlock[];
  stopReason: ScriptedStopReason;
  usage: Required<ScriptedUsage>;
  responseId: string;
  fragmentSize: number;
  /** The model id the request asked for. */
  model: string;
}

/** One SSE event's text; `token` marks content deltas, which the token-based failures count. */
export interface SseFrame {
  text: string;
  token: boolean;
}

/** What a protocol module implements to plug one wire API into the server. */
export interface WireProtocol {
  api: FakeApi;
  /** Whether `pathname` (no query) is this API's streaming endpoint. */
  matches(method: string, pathname: string): boolean;
  /** The `model.baseUrl` a provider needs to reach this route on `origin`. */
  baseUrl(origin: string): string;
  /** The model id a request asks for (body field or path segment). */
  requestedModel(request: RecordedRequest): string;
  /** The full SSE event sequence of a successful reply. */
  renderStream(reply: NormalizedReply, request: RecordedRequest): SseFrame[];
  /** The in-stream error event sent by `errorAfterTokens`. */
  renderStreamError(error: { message: string; code?: string }): SseFrame;
  /** Status, headers and body of an HTTP error answer. */
  renderHttpError(error: ScriptedHttpError): {
    status: number;
    headers: Record<string, string>;
    body: string;
  };
}

/** Splits `text` into pieces of `size` characters (code points, so no piece splits a character). */
export function fragments(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += Math.max(1, size)) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** `event: <name>\ndata: <json>\n\n` (or a data-only event when `event` is undefined). */
export function sseEvent(event: string | undefined, data: unknown, token = false): SseFrame {
  const json = typeof data === "string" ? data : JSON.stringify(data);
  return { text: `${event === undefined ? "" : `event: ${event}\n`}data: ${json}\n\n`, token };
}

/**
 * The four built-in protocol modules. A function, not a constant: the modules import helpers from
 * this file, so whichever side a test imports first, the list is read only after both are loaded.
 */
function builtInProtocols(): WireProtocol[] {
  return [anthropicProtocol, openAICompletionsProtocol, openAIResponsesProtocol, googleProtocol];
}

export interface FakeLlmServerOptions {
  /** Extra or replacement protocol modules (a later one for the same api wins). */
  protocols?: WireProtocol[];
}

export interface FakeLlmServer {
  /** The server origin, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** What to put in `model.baseUrl` for `api`. */
  baseUrl(api: FakeApi): string;
  /** Queues replies for `api`, consumed one per request in order. */
  enqueue(api: FakeApi, reply: ScriptedReply | ScriptedReply[]): void;
  /** Answers `api` requests with `fn` whenever its queue is empty; `undefined` removes it. */
  respondWith(api: FakeApi, fn: ReplyFunction | undefined): void;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Replies still queued for `api`. */
  pending(api: FakeApi): number;
  /** Stops the server and destroys open connections (including stalled streams). */
  close(): Promise<void>;
}

/** Starts the server on a random loopback port. */
export async function startFakeLlmServer(options: FakeLlmServerOptions = {}): Promise<FakeLlmServer> {
  const protocols = new Map<FakeApi, WireProtocol>();
  for (const p of [...builtInProtocols(), ...(options.protocols ?? [])]) protocols.set(p.api, p);
  const queues = new Map<FakeApi, ScriptedReply[]>();
  const handlers = new Map<FakeApi, ReplyFunction>();
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake LLM server failed: ${String(error)}` } }));
      } else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? "/";
    const pathname = path.split("?")[0] ?? "/";
    const method = req.method ?? "GET";
    const protocol = [...protocols.values()].find((p) => p.matches(method, pathname));
    const raw = await readBody(req);
    if (!protocol) {
      sendJson(res, 404, { error: { message: `fake LLM server: no route for ${method} ${pathname}` } });
      return;
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      body = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      sendJson(res, 400, { error: { message: "fake LLM server: request body is not JSON" } });
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const request: RecordedRequest = {
      api: protocol.api,
      method,
      path,
      headers,
      body,
      images: imagesOf(body),
    };
    requests.push(request);

    const reply = queues.get(protocol.api)?.shift() ?? handlers.get(protocol.api)?.(request);
    if (!reply) {
      sendJson(res, 500, {
        error: { message: `fake LLM server: no reply scripted for ${protocol.api}; call enqueue() first` },
      });
      return;
    }
    if (reply.httpError) {
      const rendered = protocol.renderHttpError(reply.httpError);
      const errorHeaders: Record<string, string> = {
        "content-type": "application/json",
        ...rendered.headers,
      };
      if (reply.httpError.retryAfter !== undefined)
        errorHeaders["retry-after"] = String(reply.httpError.retryAfter);
      if (reply.httpError.retryAfterMs !== undefined)
        errorHeaders["retry-after-ms"] = String(reply.httpError.retryAfterMs);
      res.writeHead(rendered.status, { ...errorHeaders, ...reply.httpError.headers });
      res.end(rendered.body);
      return;
    }
    if (reply.rawAnswer) {
      res.writeHead(reply.rawAnswer.status ?? 200, { "content-type": reply.rawAnswer.contentType });
      res.end(reply.rawAnswer.body);
      return;
    }
    await streamReply(res, protocol, normalize(reply, protocol.requestedModel(request)), reply, request);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    requests,
    baseUrl(api) {
      const protocol = protocols.get(api);
      if (!protocol) throw new Error(`fake LLM server: no protocol module for ${api}`);
      return protocol.baseUrl(url);
    },
    enqueue(api, reply) {
      if (!protocols.has(api)) throw new Error(`fake LLM server: no protocol module for ${api}`);
      const queue = queues.get(api) ?? [];
      queue.push(...(Array.isArray(reply) ? reply : [reply]));
      queues.set(api, queue);
    },
    respondWith(api, fn) {
      if (fn) handlers.set(api, fn);
      else handlers.delete(api);
    },
    pending(api) {
      return queues.get(api)?.length ?? 0;
    },
    async close() {
      server.closeAllConnections();
      if (server.listening) {
        server.close();
        await once(server, "close");
      }
    },
  };
}

function normalize(reply: ScriptedReply, model: string): NormalizedReply {
  const content: ScriptedBlock[] = reply.content ?? [
    ...(reply.thinking !== undefined
      ? [
          {
            type: "thinking" as const,
            text: reply.thinking,
            ...(reply.thinkingSignature !== undefined && { signature: reply.thinkingSignature }),
          },
        ]
      : []),
    ...(reply.text !== undefined ? [{ type: "text" as const, text: reply.text }] : []),
    ...(reply.toolCalls ?? []).map((c) => ({ type: "toolCall" as const, ...c })),
  ];
  const hasToolCalls = content.some((b) => b.type === "toolCall");
  return {
    content,
    stopReason: reply.stopReason ?? (hasToolCalls ? "toolUse" : "stop"),
    usage: { cacheRead: 0, cacheWrite: 0, ...(reply.usage ?? { input: 0, output: 0 }) },
    responseId: reply.responseId ?? `fake_${Math.random().toString(36).slice(2, 12)}`,
    fragmentSize: reply.fragmentSize ?? 4,
    model,
  };
}

/** The frames to send: all of them, or those up to the Nth token plus what the failure adds. */
function selectFrames(
  protocol: WireProtocol,
  frames: SseFrame[],
  reply: ScriptedReply,
): { frames: SseFrame[]; stall: boolean } {
  const cut = reply.errorAfterTokens?.tokens ?? reply.stallAfterTokens;
  if (cut === undefined) return { frames, stall: false };
  const kept: SseFrame[] = [];
  let tokens = 0;
  for (const frame of frames) {
    if (frame.token && tokens >= cut) break;
    kept.push(frame);
    if (frame.token) tokens++;
  }
  if (reply.errorAfterTokens) {
    kept.push(protocol.renderStreamError(reply.errorAfterTokens));
    return { frames: kept, stall: false };
  }
  return { frames: kept, stall: true };
}

async function streamReply(
  res: ServerResponse,
  protocol: WireProtocol,
  normalized: NormalizedReply,
  reply: ScriptedReply,
  request: RecordedRequest,
): Promise<void> {
  const { frames, stall } = selectFrames(protocol, protocol.renderStream(normalized, request), reply);
  let bytes = Buffer.from(frames.map((f) => f.text).join(""), "utf8");
  const drop = reply.dropAfterBytes !== undefined && reply.dropAfterBytes < bytes.length;
  if (drop) bytes = bytes.subarray(0, reply.dropAfterBytes);

  let boundaries: number[];
  if (reply.splitAt) boundaries = [...reply.splitAt].sort((a, b) => a - b);
  else if (reply.chunkSize) {
    boundaries = [];
    for (let at = reply.chunkSize; at < bytes.length; at += reply.chunkSize) boundaries.push(at);
  } else {
    boundaries = [];
    let at = 0;
    for (const frame of frames) {
      at += Buffer.byteLength(frame.text);
      boundaries.push(at);
    }
  }
  boundaries = boundaries.filter((b) => b > 0 && b < bytes.length);

  res.socket?.setNoDelay(true);
  res.writeHead(200, {
    "content-type": reply.streamContentType ?? "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  let start = 0;
  for (const end of [...boundaries, bytes.length]) {
    if (res.destroyed) return;
    if (end > start) await write(res, bytes.subarray(start, end));
    start = end;
    // One write per event-loop turn, so the client sees the chunks as separate reads.
    await new Promise<void>((resolve) =>
      reply.writeDelayMs ? setTimeout(resolve, reply.writeDelayMs) : setImmediate(resolve),
    );
  }
  if (drop) res.destroy();
  else if (!stall) res.end();
  // A stalled stream stays open until the client aborts or close() destroys it.
}

/** Writes `chunk`, waiting only when the socket buffer is full. */
async function write(res: ServerResponse, chunk: Uint8Array): Promise<void> {
  if (!res.write(chunk)) await Promise.race([once(res, "drain"), once(res, "close")]);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
