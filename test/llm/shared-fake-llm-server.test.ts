import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Model } from "../../src/agent/llm/index.js";
import { openAICompletionsProvider } from "../../src/agent/llm/providers/openai-completions.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

const API = "openai-completions";
let llm: FakeLlmServer;
let model: Model<"openai-completions">;

beforeAll(async () => {
  llm = await startFakeLlmServer();
  model = {
    id: "fake-model",
    name: "Fake",
    api: API,
    provider: "local",
    baseUrl: llm.baseUrl(API),
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 8000,
    maxTokens: 1000,
    compat: { maxTokensField: "max_tokens" },
  };
});
afterAll(async () => {
  await llm.close();
});

function ask(text: string, signal?: AbortSignal) {
  return openAICompletionsProvider.streamSimple(
    model,
    { messages: [{ role: "user", content: text, timestamp: 1 }] },
    { maxRetries: 0, ...(signal && { signal }) },
  );
}

describe("fake LLM server", () => {
  it("answers from a reply function once the queue is empty, and records each request", async () => {
    llm.enqueue(API, { text: "queued first" });
    llm.respondWith(API, (request) => {
      const messages = request.body.messages as { content: string }[];
      return { text: `echo: ${messages.at(-1)?.content}` };
    });
    const first = await ask("one").result();
    const second = await ask("two").result();
    llm.respondWith(API, undefined);
    expect(first.content).toEqual([{ type: "text", text: "queued first" }]);
    expect(second.content).toEqual([{ type: "text", text: "echo: two" }]);
    expect(llm.requests.slice(-2).map((r) => [r.api, r.method, r.path])).toEqual([
      [API, "POST", "/v1/chat/completions"],
      [API, "POST", "/v1/chat/completions"],
    ]);
    expect(llm.pending(API)).toBe(0);
  });

  it("answers an unscripted request with an error that says what to do", async () => {
    const message = await ask("nobody scripted this").result();
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toContain("no reply scripted for openai-completions; call enqueue() first");
  });

  it("keeps a stalled stream open until the client aborts", async () => {
    llm.enqueue(API, { text: "never finishes", stallAfterTokens: 1 });
    const controller = new AbortController();
    const source = ask("stall", controller.signal);
    for await (const e of source) if (e.type === "text_delta") controller.abort();
    expect((await source.result()).stopReason).toBe("aborted");
  });

  it("speaks every wire API at its documented base URL", () => {
    expect(llm.baseUrl("anthropic-messages")).toBe(llm.url);
    expect(llm.baseUrl("openai-completions")).toBe(`${llm.url}/v1`);
    expect(llm.baseUrl("openai-responses")).toBe(`${llm.url}/v1`);
    expect(llm.baseUrl("google-generative-ai")).toBe(`${llm.url}/v1beta`);
  });
});
