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
import type { Model, StreamOptions } from "../../types.js";
import { fetchWithRetry, ProviderError, type RetryTuning } from "./http.js";

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
  return response.body;
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

/** Later header sets override earlier ones, case-insensitively; names come out lower-cased. */
export function mergeHeaders(...sets: (Record<string, string> | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const set of sets) {
    if (!set) continue;
    for (const [name, value] of Object.entries(set)) out[name.toLowerCase()] = value;
  }
  return out;
}
