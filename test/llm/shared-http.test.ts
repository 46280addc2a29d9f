import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SwitchboardError } from "../../src/agent/errors.js";
import {
  describeError,
  fetchWithRetry,
  formatHttpError,
  type ProviderHttpRequest,
  retryAfterMs,
} from "../../src/agent/llm/providers/shared/http.js";
import { redactSecrets } from "../../src/agent/llm/redact.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

const KEY = "sk-test-0123456789abcdefSECRET";
let llm: FakeLlmServer;
let delays: number[];

beforeAll(async () => {
  llm = await startFakeLlmServer();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  delays = [];
  llm.requests.length = 0;
});

function request(overrides: Partial<ProviderHttpRequest> = {}): ProviderHttpRequest {
  return {
    provider: "OpenAI",
    url: `${llm.baseUrl("openai-completions")}/chat/completions`,
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    body: { model: "gpt-test", stream: true },
    apiKey: KEY,
    // Instant backoff that records what it was asked to wait.
    retry: {
      sleep: async (ms) => {
        delays.push(ms);
      },
    },
    ...overrides,
  };
}

describe("fetchWithRetry", () => {
  it("retries a 429 after the server's retry-after and returns the successful stream unread", async () => {
    llm.enqueue("openai-completions", [
      { httpError: { status: 429, message: "Rate limit reached", retryAfter: 2 } },
      { text: "hello", fragmentSize: 10 },
    ]);
    const response = await fetchWithRetry(request());
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"content":"hello"');
    expect(delays).toEqual([2000]);
    expect(llm.requests).toHaveLength(2);
  });

  it("retries 5xx and 'overloaded' answers with growing backoff, then gives up with the last error", async () => {
    llm.enqueue("openai-completions", [
      { httpError: { status: 503, message: "Service unavailable" } },
      { httpError: { status: 400, message: "Model is overloaded, try later" } },
      { httpError: { status: 500, message: "Internal error" } },
    ]);
    await expect(
      fetchWithRetry(
        request({ maxRetries: 2, retry: { baseDelayMs: 100, sleep: async (ms) => void delays.push(ms) } }),
      ),
    ).rejects.toThrow("OpenAI API error (HTTP 500, server_error): Internal error (gave up after 2 retries)");
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(75);
    expect(delays[0]).toBeLessThanOrEqual(125);
    expect(delays[1]).toBeGreaterThanOrEqual(150);
    expect(delays[1]).toBeLessThanOrEqual(250);
  });

  it("does not retry a client error and reports the provider's message and code", async () => {
    llm.enqueue("openai-completions", {
      httpError: {
        status: 400,
        message: "This model's maximum context length is 8192 tokens",
        code: "context_length_exceeded",
      },
    });
    await expect(fetchWithRetry(request())).rejects.toMatchObject({
      status: 400,
      code: "provider.http",
      providerCode: "context_length_exceeded",
      message:
        "OpenAI API error (HTTP 400, context_length_exceeded): This model's maximum context length is 8192 tokens",
    });
    expect(llm.requests).toHaveLength(1);
  });

  it("gives up at once when the server asks for a longer wait than maxRetryDelayMs", async () => {
    llm.enqueue("openai-completions", { httpError: { status: 429, message: "Slow down", retryAfter: 120 } });
    await expect(fetchWithRetry(request({ maxRetryDelayMs: 10_000 }))).rejects.toThrow(
      "The server asked to retry after 120 s, longer than the allowed 10 s (maxRetryDelayMs)",
    );
    expect(delays).toEqual([]);
  });

  it("stops waiting when the signal aborts during a backoff", async () => {
    llm.enqueue("openai-completions", { httpError: { status: 429, message: "wait", retryAfterMs: 30_000 } });
    const controller = new AbortController();
    const pending = fetchWithRetry(request({ signal: controller.signal, retry: undefined }));
    // The wait starts only after the 429 has arrived.
    await expect.poll(() => llm.requests.length).toBe(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("names the unreachable server without leaking the key", async () => {
    const closed = await startFakeLlmServer();
    const url = `${closed.baseUrl("openai-completions")}/chat/completions`;
    await closed.close();
    const error = await fetchWithRetry(request({ url, maxRetries: 1 })).catch((e: unknown) => e);
    expect(String((error as Error).message)).toMatch(
      /^Could not reach OpenAI at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
    // One of the project's errors, with a namespaced code (docs/errors.md).
    expect(error).toBeInstanceOf(SwitchboardError);
    expect(error).toMatchObject({ name: "ProviderError", code: "provider.unreachable" });
    expect(delays).toHaveLength(1);
  });
});

describe("error messages", () => {
  it("reads each vendor's error body shape", () => {
    expect(
      formatHttpError(
        "Anthropic",
        400,
        "Bad Request",
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
      ),
    ).toBe(
      "Anthropic API error (HTTP 400, invalid_request_error): prompt is too long: 210000 tokens > 200000 maximum",
    );
    expect(
      formatHttpError(
        "Google",
        400,
        "Bad Request",
        '[{"error":{"code":400,"message":"The input token count exceeds the maximum number of tokens allowed","status":"INVALID_ARGUMENT"}}]',
      ),
    ).toBe(
      "Google API error (HTTP 400, INVALID_ARGUMENT): The input token count exceeds the maximum number of tokens allowed",
    );
    expect(formatHttpError("Ollama", 502, "Bad Gateway", "<html>  upstream\n down </html>")).toBe(
      "Ollama API error (HTTP 502 Bad Gateway): <html> upstream down </html>",
    );
    expect(formatHttpError("OpenAI", 503, "Service Unavailable", "")).toBe(
      "OpenAI API error (HTTP 503 Service Unavailable)",
    );
  });

  it("scrubs the key in use and anything shaped like an API key", () => {
    const body = `{"error":{"message":"Incorrect API key provided: ${KEY}. Also sk-ant-api03-abcdefghijk and AIzaSyA1234567890abcdefghijklmnop","code":"invalid_api_key"}}`;
    const message = formatHttpError("OpenAI", 401, "Unauthorized", body, [KEY]);
    expect(message).not.toContain("SECRET");
    expect(message).not.toContain("sk-ant-api03");
    expect(message).not.toContain("AIzaSy");
    expect(message).toContain("Incorrect API key provided: [redacted]");
    expect(redactSecrets("Authorization: Bearer abcdefghijklmnop", [])).toBe(
      "Authorization: Bearer [redacted]",
    );
  });

  it("describes a dropped connection without a stack trace", () => {
    const dropped = new TypeError("terminated", {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    expect(describeError(dropped, "Anthropic")).toBe(
      "Anthropic connection dropped before the response finished (terminated: UND_ERR_SOCKET other side closed)",
    );
    expect(describeError(new Error(`bad ${KEY}`), "OpenAI", [KEY])).toBe(
      "OpenAI request failed: bad [redacted]",
    );
  });

  it("parses retry-after in every form", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "3" }))).toBe(3000);
    const inFiveSeconds = new Date(Date.now() + 5000).toUTCString();
    expect(retryAfterMs(new Headers({ "retry-after": inFiveSeconds }))).toBeGreaterThan(3000);
    expect(retryAfterMs(new Headers(), '{"error":{"details":[{"retryDelay":"12s"}]}}')).toBe(12_000);
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });
});
