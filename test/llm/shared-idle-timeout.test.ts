/**
 * The shared HTTP layer's idle watchdog: a slow stream that keeps sending is not cut, a server that
 * never answers is, after 120 s by default. That every provider ends a stalled stream with its
 * partial content is part of the provider contract (test/llm/provider-contract.ts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { streamAnthropic } from "../../src/agent/llm/providers/anthropic.js";
import {
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  fetchWithRetry,
  ProviderError,
} from "../../src/agent/llm/providers/shared/http.js";
import type { Context, Model } from "../../src/agent/llm/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

let llm: FakeLlmServer;
const hello: Context = { messages: [{ role: "user", content: "Say hello", timestamp: 1 }] };

function modelFor<A extends "anthropic-messages" | "openai-completions">(api: A): Model<A> {
  return {
    id: "fake-model",
    name: "Fake",
    api,
    provider: api === "anthropic-messages" ? "anthropic" : "local",
    baseUrl: llm.baseUrl(api),
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 8000,
    maxTokens: 1000,
  };
}

/** A server that accepts requests and never answers them (until closed). */
function silentServer(): Promise<{ url: string; seen: () => number; close: () => Promise<void> }> {
  let seen = 0;
  const server: Server = createServer(() => {
    seen++;
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/v1/messages`,
        seen: () => seen,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

beforeAll(async () => {
  llm = await startFakeLlmServer();
});
afterAll(async () => {
  await llm.close();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a stalled LLM stream", () => {
  it("does not trip on a slow stream that keeps sending", async () => {
    llm.enqueue("anthropic-messages", { text: "a slow but steady answer", writeDelayMs: 60 });
    const message = await streamAnthropic(modelFor("anthropic-messages"), hello, {
      apiKey: "sk-ant-test",
      retry: { idleTimeoutMs: 250 },
    }).result();
    expect(message.stopReason).toBe("stop");
    expect(message.content).toEqual([{ type: "text", text: "a slow but steady answer" }]);
  });

  it("ends a request whose response never starts, without retrying it", async () => {
    const server = await silentServer();
    try {
      const request = fetchWithRetry({
        provider: "Anthropic",
        url: server.url,
        headers: { "content-type": "application/json" },
        body: {},
        idleTimeoutMs: 150,
        maxRetries: 3,
        retry: { sleep: async () => {} },
      });
      await expect(request).rejects.toThrow(new ProviderError("Anthropic stream stalled: no data for 0.2 s"));
      expect(server.seen()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("waits 120 s by default", async () => {
    expect(DEFAULT_STREAM_IDLE_TIMEOUT_MS).toBe(120_000);
    const server = await silentServer();
    try {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const request = fetchWithRetry({
        provider: "Anthropic",
        url: server.url,
        headers: { "content-type": "application/json" },
        body: {},
      });
      const outcome = request.then(
        () => "answered",
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      // Wait (in real time) until the request reached the server, then let two minutes pass.
      for (let i = 0; i < 500 && server.seen() === 0; i++) await new Promise((r) => setImmediate(r));
      expect(server.seen()).toBe(1);
      await vi.advanceTimersByTimeAsync(119_000);
      let settled = false;
      void outcome.then(() => {
        settled = true;
      });
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await outcome).toBe("Anthropic stream stalled: no data for 120 s");
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  });
});
