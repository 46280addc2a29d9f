/**
 * HTTP for providers: one POST with retries, and error messages people can read.
 *
 * Providers call it through `postForStream` (request.ts), which hands on the caller's transport
 * options; the body is then read with `parseSSE`.
 *
 * `fetchWithRetry` resolves only with a 2xx response whose body has not been read, so retries
 * happen strictly before the first token: an error that arrives inside the stream is never
 * retried (the caller may already have shown the tokens before it). It retries 408, 429, 5xx,
 * any response whose body says "overloaded", and connection failures, with exponential backoff
 * and jitter that honours `retry-after-ms`, `retry-after` (seconds or HTTP date) and Google's
 * `retryDelay`. Every error it throws is a `ProviderError` whose message names the provider,
 * the HTTP status and the provider's own message, with credentials scrubbed.
 *
 * Tests make backoff instant by passing `retry: { sleep }` (record the delay, resolve at once).
 */
import { SwitchboardError } from "../../../errors.js";
import { abortableSleep } from "../../abortable-sleep.js";
import { redactSecrets } from "../../redact.js";
import { abortError } from "./sse.js";

/** Knobs for tests and unusual deployments; production code leaves them unset. */
export interface RetryTuning {
  /** First backoff delay; doubles each attempt (with ±25% jitter). Default 1000 ms. */
  baseDelayMs?: number;
  /** Waits `ms` or rejects when `signal` aborts. Default: a real timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * The stall limit when the request itself sets no `idleTimeoutMs` (every provider passes its
   * `retry` options through, so this reaches the stream layer from any provider's options).
   */
  idleTimeoutMs?: number;
}

export interface ProviderHttpRequest {
  /** Human-readable provider name used in error messages, e.g. "Anthropic". */
  provider: string;
  url: string;
  headers: Record<string, string>;
  /** JSON-serialisable request body. */
  body: unknown;
  /** The credential in use: scrubbed from every error message. */
  apiKey?: string;
  signal?: AbortSignal;
  /** Default 3. */
  maxRetries?: number;
  /** Upper bound of one wait, including a server's retry-after. Default 60 000 ms. */
  maxRetryDelayMs?: number;
  /**
   * A stalled response ends: when no byte arrives for this long, while waiting for the response
   * or while the caller reads its body, the request fails with "<provider> stream stalled: no
   * data for 120 s" (a `ProviderError`; not retried) and the connection is released. Default
   * `retry.idleTimeoutMs`, else 120 000 ms; 0 or less turns the watchdog off. Providers pass
   * `StreamOptions.idleTimeoutMs` here.
   */
  idleTimeoutMs?: number;
  retry?: RetryTuning;
}

/** How long a response may send nothing before it counts as stalled (`idleTimeoutMs`). */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 120_000;

/**
 * What kind of provider failure a `ProviderError` is: an HTTP error response (`provider.http`, with
 * its status), the server not reached (`provider.unreachable`), a stream that stalled, broke off or
 * made no sense (`provider.stream`), or no API key for the model (`provider.no_api_key`).
 */
type ProviderErrorCode = "provider.http" | "provider.unreachable" | "provider.stream" | "provider.no_api_key";

/**
 * A provider failure with a message that is safe to show: no stack trace, no credential. Inside a
 * stream it becomes data (an `error` event and a final message with `stopReason: "error"`).
 */
export class ProviderError extends SwitchboardError {
  /** HTTP status, when the failure was an HTTP error response. */
  readonly status: number | undefined;
  /** The provider's own error type or code (e.g. `rate_limit_error`, `context_length_exceeded`). */
  readonly providerCode: string | undefined;

  /** `code` defaults to `provider.http` with a status, else `provider.stream`. */
  constructor(
    message: string,
    details: { code?: ProviderErrorCode; status?: number; providerCode?: string } = {},
  ) {
    super(details.code ?? (details.status === undefined ? "provider.stream" : "provider.http"), message);
    this.status = details.status;
    this.providerCode = details.providerCode;
  }
}

const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
const DEFAULT_BASE_DELAY_MS = 1000;

/** Waits `ms`, rejecting early with an abort error when `signal` aborts. */
function backoffSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return abortableSleep(ms, signal).catch(() => {
    throw abortError(signal);
  });
}

/**
 * POSTs `request.body` as JSON and resolves with the first 2xx response, its body unread.
 * Retries transient failures as described in the file header; throws `ProviderError` for an
 * HTTP error or an unreachable server, and an abort error when `request.signal` aborts
 * (including during a backoff wait).
 */
export async function fetchWithRetry(request: ProviderHttpRequest): Promise<Response> {
  const maxRetries = request.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxDelay = request.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
  const baseDelay = request.retry?.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const sleep = request.retry?.sleep ?? backoffSleep;
  const secrets = [request.apiKey];
  const body = JSON.stringify(request.body);
  const idleMs = request.idleTimeoutMs ?? request.retry?.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  const stalled = () =>
    new ProviderError(`${request.provider} stream stalled: no data for ${formatSeconds(idleMs)}`);

  for (let attempt = 0; ; attempt++) {
    if (request.signal?.aborted) throw abortError(request.signal);
    const backoff = Math.min(maxDelay, baseDelay * 2 ** attempt * (0.75 + Math.random() * 0.5));
    let response: Response;
    // Our own controller, so a stall can cut the connection; the caller's signal still aborts it.
    const connection = linkedController(request.signal);
    let headerTimer: ReturnType<typeof setTimeout> | undefined;
    let stalledBeforeHeaders = false;
    if (idleMs > 0) {
      headerTimer = setTimeout(() => {
        stalledBeforeHeaders = true;
        connection.controller.abort();
      }, idleMs);
    }
    try {
      response = await fetch(request.url, {
        method: "POST",
        headers: request.headers,
        body,
        signal: connection.controller.signal,
      });
    } catch (error) {
      connection.unlink();
      if (request.signal?.aborted) throw abortError(request.signal);
      if (stalledBeforeHeaders) throw stalled();
      if (attempt >= maxRetries) {
        throw new ProviderError(
          redactSecrets(
            `Could not reach ${request.provider} at ${safeOrigin(request.url)}: ${networkCause(error)}` +
              retriesNote(attempt),
            secrets,
          ),
          { code: "provider.unreachable" },
        );
      }
      await sleep(backoff, request.signal);
      continue;
    } finally {
      clearTimeout(headerTimer);
    }
    if (response.ok) {
      if (idleMs <= 0 || !response.body) {
        connection.unlink();
        return response;
      }
      const watched = watchIdle(response.body, idleMs, stalled, {
        ended: () => connection.unlink(),
        abandoned: () => {
          connection.controller.abort();
          connection.unlink();
        },
      });
      return new Response(watched, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    connection.unlink();

    const text = await response.text().catch(() => "");
    const parsed = providerMessageOf(text);
    const message = formatHttpError(request.provider, response.status, response.statusText, text, secrets);
    const retryable = isRetryableStatus(response.status) || /overloaded/i.test(text);
    if (!retryable || attempt >= maxRetries) {
      throw new ProviderError(message + retriesNote(attempt), {
        status: response.status,
        providerCode: parsed.code,
      });
    }
    const asked = retryAfterMs(response.headers, text);
    if (asked !== undefined && asked > maxDelay) {
      throw new ProviderError(
        `${message}. The server asked to retry after ${formatSeconds(asked)}, longer than the allowed ` +
          `${formatSeconds(maxDelay)} (maxRetryDelayMs); try again later or raise maxRetryDelayMs.`,
        { status: response.status, providerCode: parsed.code },
      );
    }
    await sleep(asked ?? backoff, request.signal);
  }
}

/** An AbortController that also aborts when `parent` does, until `unlink()`. */
function linkedController(parent: AbortSignal | undefined): {
  controller: AbortController;
  unlink: () => void;
} {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onAbort();
  else parent?.addEventListener("abort", onAbort, { once: true });
  return { controller, unlink: () => parent?.removeEventListener("abort", onAbort) };
}

/**
 * `body` as a stream that errors with `stalled()` when a read waits longer than `idleMs` (only
 * while the consumer waits: a slow consumer never trips it). `abandoned` cuts the connection
 * after a stall, a read error or a cancel; `ended` runs when the body ended normally.
 */
function watchIdle(
  body: ReadableStream<Uint8Array>,
  idleMs: number,
  stalled: () => Error,
  on: { ended: () => void; abandoned: () => void },
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(stalled()), idleMs);
      });
      try {
        const chunk = await Promise.race([reader.read(), timeout]);
        if (chunk.done) {
          controller.close();
          on.ended();
        } else controller.enqueue(chunk.value);
      } catch (error) {
        controller.error(error);
        reader.cancel().catch(() => {});
        on.abandoned();
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      clearTimeout(timer);
      on.abandoned();
      return reader.cancel(reason).catch(() => {});
    },
  });
}

/** Whether an HTTP status is worth retrying: timeouts, rate limits and server errors. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The delay a response asks for, in milliseconds: `retry-after-ms`, then `retry-after`
 * (seconds or an HTTP date), then a Google `retryDelay: "12s"` in the body. Undefined when absent.
 */
export function retryAfterMs(headers: Headers, bodyText = ""): number | undefined {
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers.get("retry-after");
  if (after !== null && after.trim() !== "") {
    const seconds = Number(after);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  const google = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(bodyText);
  if (google?.[1] !== undefined) return Number.parseFloat(google[1]) * 1000;
  return undefined;
}

/** The provider's own message and error code/type from an error body, in any vendor's shape. */
export function providerMessageOf(text: string): { message?: string; code?: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    return trimmed ? { message: truncate(trimmed.replace(/\s+/g, " "), 300) } : {};
  }
  if (Array.isArray(json)) json = json[0];
  if (!isRecord(json)) return {};
  const error = json.error;
  if (typeof error === "string") return { message: error };
  if (isRecord(error)) {
    // Prefer the most specific text: OpenAI `code`, Google `status` (its `code` is the HTTP number), Anthropic `type`.
    const code = firstString(error.code, error.status, error.type);
    const message = firstString(error.message);
    return { ...(message !== undefined && { message }), ...(code !== undefined && { code }) };
  }
  const message = firstString(json.message, json.detail);
  const code = firstString(json.code, json.type);
  return { ...(message !== undefined && { message }), ...(code !== undefined && { code }) };
}

/**
 * `"<Provider> API error (HTTP <status>[, <code>]): <provider message>"`, with `secrets`
 * and anything shaped like an API key replaced by `[redacted]`.
 */
export function formatHttpError(
  provider: string,
  status: number,
  statusText: string,
  bodyText: string,
  secrets: readonly (string | undefined)[] = [],
): string {
  const { message, code } = providerMessageOf(bodyText);
  const head = `${provider} API error (HTTP ${status}${code ? `, ${code}` : statusText ? ` ${statusText}` : ""})`;
  return redactSecrets(message ? `${head}: ${message}` : head, secrets);
}

/**
 * A one-line, credential-free description of any failure during a provider request, for
 * `errorMessage`. `ProviderError`s pass through; connection drops and other exceptions get
 * the provider name and the underlying cause, never a stack trace.
 */
export function describeError(
  error: unknown,
  provider: string,
  secrets: readonly (string | undefined)[] = [],
): string {
  if (error instanceof ProviderError) return redactSecrets(error.message, secrets);
  if (error instanceof Error && error.name === "AbortError") return "Request was aborted";
  const cause = networkCause(error);
  if (error instanceof TypeError && /terminated|other side closed|socket/i.test(cause)) {
    return redactSecrets(`${provider} connection dropped before the response finished (${cause})`, secrets);
  }
  return redactSecrets(`${provider} request failed: ${cause}`, secrets);
}

function networkCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const detail =
      typeof code === "string" && !cause.message.includes(code) ? `${code} ${cause.message}` : cause.message;
    return error.message === "fetch failed" ? detail : `${error.message}: ${detail}`;
  }
  return error.message;
}

function retriesNote(attempt: number): string {
  return attempt > 0 ? ` (gave up after ${attempt} ${attempt === 1 ? "retry" : "retries"})` : "";
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the configured baseUrl";
  }
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function firstString(...values: unknown[]): string | undefined {
  for (const v of values) {
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
