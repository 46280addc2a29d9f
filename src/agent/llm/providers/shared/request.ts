/**
 * Small pieces every provider needs before it sends a request.
 *
 * ```ts
 * const apiKey = resolveApiKey(model, options?.apiKey, "OpenAI");   // throws ProviderError when missing
 * const url = endpointUrl(model.baseUrl ?? "https://api.openai.com/v1", "/chat/completions");
 * const headers = mergeHeaders({ "content-type": "application/json" }, model.headers, options?.headers);
 * ```
 * Call these inside the `runProviderStream` body so a missing key becomes an `error` event, then
 * `postForStream` to send the request with the caller's transport options.
 */
import { envKeyNames, getEnvApiKey, requiresApiKey } from "../../models.js";
import { redactSecrets } from "../../redact.js";
import type { Model, StreamOptions } from "../../types.js";
import { fetchWithRetry, ProviderError, providerMessageOf, type RetryTuning } from "./http.js";

/** The options of a provider's `stream` that concern the transport, handed to `fetchWithRetry` as they are. */
export type TransportOptions = Pick<
  StreamOptions,
  "signal" | "maxRetries" | "maxRetryDelayMs" | "idleTimeoutMs" | "onPayload"
> & { retry?: RetryTuning };

/** One streaming request of a provider. */
export interface StreamRequest {
  /** Human-readable provider name for error messages, e.g. "Anthropic". */
  provider: string;
  url: string;
  headers: Record<string, string>;
  /** The JSON payload; reported to `onPayload` first. */
  body: unknown;
  /** The key in use, scrubbed from every error message. */
  apiKey: string | undefined;
}

/**
 * Reports the payload to `options.onPayload`, POSTs it with `fetchWithRetry` (retries before the
 * first byte, the stall watchdog, the caller's signal) and resolves with the response's unread body.
 * Throws what `fetchWithRetry` throws, and a `ProviderError` for a response without a body.
 */
export async function postForStream(
  request: StreamRequest,
  options: TransportOptions | undefined,
): Promise<ReadableStream<Uint8Array>> {
  options?.onPayload?.(request.body);
  const response = await fetchWithRetry({
    ...request,
    signal: options?.signal,
    maxRetries: options?.maxRetries,
    maxRetryDelayMs: options?.maxRetryDelayMs,
    idleTimeoutMs: options?.idleTimeoutMs,
    retry: options?.retry,
  });
  if (!response.body) throw new ProviderError(`${request.provider} returned an empty response body`);
  return expectEventStream(response, response.body, request);
}

/** How much of an answer that is not an event stream its error message quotes. */
const QUOTED_BYTES = 200;
/** The fields an SSE stream's first line starts with (or a `:` comment). */
const SSE_START = /^(?:\uFEFF)?\s*(?:data|event|id|retry)?:/;

/**
 * `body` when it is an event stream. A server that answers 2xx with something else (an HTML page
 * from a proxy or a wrong `baseUrl`, a JSON completion from a server that ignores `stream: true`,
 * a JSON error with status 200) fails with a `ProviderError` naming the status, the content type and
 * the first bytes, instead of a stream that ends with nothing. The content type decides; without an
 * `event-stream` one, the first bytes do (some compatible servers send SSE as `text/plain`).
 */
async function expectEventStream(
  response: Response,
  body: ReadableStream<Uint8Array>,
  request: StreamRequest,
): Promise<ReadableStream<Uint8Array>> {
  const type = response.headers.get("content-type") ?? "";
  if (/text\/event-stream/i.test(type)) return body;
  const reader = body.getReader();
  const head: Uint8Array[] = [];
  let bytes = 0;
  let done = false;
  while (bytes < QUOTED_BYTES && !done) {
    const chunk = await reader.read();
    done = chunk.done;
    if (chunk.value) {
      head.push(chunk.value);
      bytes += chunk.value.length;
    }
  }
  const text = new TextDecoder().decode(Buffer.concat(head));
  if (text.trim() !== "" && SSE_START.test(text)) return replay(head, reader, done);
  reader.cancel().catch(() => {});
  const kind = type.split(";")[0]?.trim() || "no content type";
  const quoted = text.replace(/\s+/g, " ").trim().slice(0, QUOTED_BYTES);
  const { message } = /json/i.test(type) ? providerMessageOf(text) : {};
  throw new ProviderError(
    redactSecrets(
      `${request.provider} answered HTTP ${response.status} with ${kind} instead of an event stream` +
        (message
          ? `: ${message}`
          : `${quoted ? `: ${quoted}${bytes >= QUOTED_BYTES ? "…" : ""}` : " and an empty body"}. ` +
            "Check the model's baseUrl (it must be the API's address, e.g. http://127.0.0.1:11434/v1)"),
      [request.apiKey],
    ),
    { code: "provider.stream" },
  );
}

/** A stream of the chunks already read, then the rest of `reader`. */
function replay(
  head: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
  done: boolean,
): ReadableStream<Uint8Array> {
  const queued = [...head];
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = queued.shift();
      if (next) return controller.enqueue(next);
      if (done) return controller.close();
      const chunk = await reader.read();
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * The API key for `model`: `explicit` when given, else the provider's environment variable
 * (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, or what `setProviderApiKeyEnv` set).
 * Undefined for keyless providers and servers on this machine. Throws a `ProviderError` saying
 * which variable to set when a key is required and missing.
 */
export function resolveApiKey(
  model: Model,
  explicit: string | undefined,
  providerName: string,
): string | undefined {
  if (explicit !== undefined && explicit.trim() !== "") return explicit.trim();
  const fromEnv = getEnvApiKey(model.provider);
  if (fromEnv !== undefined) return fromEnv;
  if (!requiresApiKey(model)) return undefined;
  const names = envKeyNames(model.provider);
  const hint =
    names.length > 0 ? `set ${names.join(" or ")}` : `configure an API key for provider "${model.provider}"`;
  throw new ProviderError(`No API key for ${providerName} (model ${model.id}): ${hint}, or pass apiKey.`, {
    code: "provider.no_api_key",
  });
}

/** `base` without trailing slashes, plus `path` (which starts with `/`). */
export function endpointUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/**
 * The headers of a streaming request: JSON in and server-sent events out, then `own` (the
 * provider's: its key header, API version, betas), the model's configured headers and the call's,
 * each later set overriding the earlier (see `mergeHeaders`).
 */
export function streamHeaders(
  own: Record<string, string>,
  model: Model,
  callHeaders: Record<string, string> | undefined,
): Record<string, string> {
  return mergeHeaders(
    { "content-type": "application/json", accept: "text/event-stream" },
    own,
    model.headers,
    callHeaders,
  );
}

/** Later header sets override earlier ones, case-insensitively; names come out lower-cased. */
function mergeHeaders(...sets: (Record<string, string> | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const set of sets) {
    if (!set) continue;
    for (const [name, value] of Object.entries(set)) out[name.toLowerCase()] = value;
  }
  return out;
}
