import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getModel } from "../../src/agent/llm/models.js";
import {
  googleProvider,
  SKIP_THOUGHT_SIGNATURE,
  streamGoogle,
} from "../../src/agent/llm/providers/google.js";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventSource,
  Context,
  Model,
  SimpleStreamOptions,
  ThinkingLevel,
} from "../../src/agent/llm/types.js";
import { emptyUsage } from "../../src/agent/llm/usage.js";
import { googleProtocol } from "../fakes/llm/google.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

let llm: FakeLlmServer;
let model: Model;
const API = "google-generative-ai";
const KEY = "AIzaTestKey0123456789abcdefghij";
/** Backoff waits end at once (the retry behaviour itself is the provider contract's). */
const retry = { sleep: async () => {} };

beforeAll(async () => {
  llm = await startFakeLlmServer({ protocols: [googleProtocol] });
  model = { ...getModel("google", "gemini-2.5-flash"), baseUrl: llm.baseUrl(API) };
});
afterAll(async () => {
  await llm.close();
});
afterEach(() => {
  llm.requests.length = 0;
  vi.unstubAllEnvs();
});

const hello: Context = {
  systemPrompt: "You are terse.",
  messages: [{ role: "user", content: "Say hello", timestamp: 1 }],
};

function run(context: Context = hello, options: SimpleStreamOptions = {}, m: Model = model) {
  return googleProvider.streamSimple(m as Model<"google-generative-ai">, context, {
    apiKey: KEY,
    retry,
    ...options,
  } as SimpleStreamOptions);
}

async function collect(source: AssistantMessageEventSource): Promise<{
  events: AssistantMessageEvent[];
  message: AssistantMessage;
}> {
  const events: AssistantMessageEvent[] = [];
  for await (const e of source) events.push(e);
  return { events, message: await source.result() };
}

function lastBody(): Record<string, unknown> {
  const body = llm.requests.at(-1)?.body;
  if (!body) throw new Error("no request recorded");
  return body;
}

describe("google-generative-ai provider", () => {
  it("streams text split inside UTF-8 characters and sends a valid request", async () => {
    llm.enqueue(API, { text: "Grüße 👋 aus Gemini", chunkSize: 1 });
    const { events, message } = await collect(run());

    expect(message.stopReason).toBe("stop");
    expect(message.content).toEqual([{ type: "text", text: "Grüße 👋 aus Gemini" }]);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(["start", "text_start"]);
    expect(types.slice(-2)).toEqual(["text_end", "done"]);

    const request = llm.requests[0];
    expect(request?.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(request?.headers["x-goog-api-key"]).toBe(KEY);
    expect(request?.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Say hello" }] }],
      systemInstruction: { parts: [{ text: "You are terse." }] },
      generationConfig: { maxOutputTokens: 32_000, thinkingConfig: { thinkingBudget: 0 } },
    });
  });

  it("streams thoughts then text, keeping the thought signature", async () => {
    llm.enqueue(API, { thinking: "Greeting needed.", thinkingSignature: "c2lnLTE=", text: "Hello!" });
    const { events, message } = await collect(run(hello, { reasoning: "medium" }));
    expect(events.map((e) => e.type).filter((t) => /_(start|end)$/.test(t))).toEqual([
      "thinking_start",
      "thinking_end",
      "text_start",
      "text_end",
    ]);
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Greeting needed.", thinkingSignature: "c2lnLTE=" },
      { type: "text", text: "Hello!" },
    ]);
  });

  it.each<[string, ThinkingLevel, unknown]>([
    ["gemini-2.5-flash", "off", { thinkingBudget: 0 }],
    ["gemini-2.5-flash", "medium", { includeThoughts: true, thinkingBudget: 8192 }],
    ["gemini-2.5-flash", "xhigh", { includeThoughts: true, thinkingBudget: 16384 }],
    ["gemini-2.5-pro", "off", { includeThoughts: true, thinkingBudget: 1024 }],
    ["gemini-3-pro-preview", "medium", { includeThoughts: true, thinkingLevel: "LOW" }],
    ["gemini-3-pro-preview", "xhigh", { includeThoughts: true, thinkingLevel: "HIGH" }],
    ["gemini-3-flash-preview", "off", { includeThoughts: true, thinkingLevel: "MINIMAL" }],
    ["gemini-3.1-pro-preview", "medium", { includeThoughts: true, thinkingLevel: "MEDIUM" }],
  ])("maps thinking level for %s at %s to thinkingConfig %j", async (id, level, expected) => {
    llm.enqueue(API, { text: "ok" });
    const m = { ...getModel("google", id), baseUrl: llm.baseUrl(API) };
    await collect(run(hello, { reasoning: level, maxTokens: 4000 }, m));
    const config = lastBody().generationConfig as Record<string, unknown>;
    expect(config.thinkingConfig).toEqual(expected);
    if (level !== "off") expect(config.maxOutputTokens).toBeGreaterThan(4000);
  });

  it("emits start/delta/end for whole function calls and generates missing ids", async () => {
    llm.enqueue(API, {
      thinking: "Two tools.",
      thinkingSignature: "c2lnLTI=",
      toolCalls: [
        { id: "", name: "read", args: { path: "/tmp/ä.txt" } },
        { id: "", name: "bash", args: { command: "ls" } },
      ],
      chunkSize: 5,
    });
    const { events, message } = await collect(run(hello, { reasoning: "low" }));

    expect(message.stopReason).toBe("toolUse");
    const calls = message.content.filter((c) => c.type === "toolCall");
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ["read", { path: "/tmp/ä.txt" }],
      ["bash", { command: "ls" }],
    ]);
    for (const c of calls) expect(c.id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    expect(calls[0]?.thoughtSignature).toBe("c2lnLTI=");
    const toolEvents = events.map((e) => e.type).filter((t) => t.startsWith("toolcall"));
    expect(toolEvents).toEqual([
      "toolcall_start",
      "toolcall_delta",
      "toolcall_end",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_end",
    ]);
  });

  it("keeps tool call ids Gemini sends", async () => {
    llm.enqueue(API, { toolCalls: [{ id: "fc-123", name: "read", args: {} }] });
    const { message } = await collect(run());
    expect(message.content[0]).toMatchObject({ type: "toolCall", id: "fc-123" });
  });

  it("reports usage with cached and thought tokens and computes the cost", async () => {
    llm.enqueue(API, { thinking: "hmm", text: "ok", usage: { input: 1000, output: 400, cacheRead: 3000 } });
    const { message } = await collect(run(hello, { reasoning: "low" }));
    expect(message.usage).toMatchObject({ input: 1000, output: 400, cacheRead: 3000, totalTokens: 4400 });
    const expected = (1000 * 0.3 + 400 * 2.5 + 3000 * 0.03) / 1_000_000;
    expect(message.usage.cost.total).toBeCloseTo(expected, 10);
  });

  it("takes GOOGLE_API_KEY when GEMINI_API_KEY is unset, and fails as data with neither", async () => {
    vi.stubEnv("GEMINI_API_KEY", "");
    vi.stubEnv("GOOGLE_API_KEY", "AIzaFromGoogleEnv0123456789abcdef");
    llm.enqueue(API, { text: "ok" });
    const ok = await streamGoogle(model as Model<"google-generative-ai">, hello, {}).result();
    expect(ok.stopReason).toBe("stop");
    expect(llm.requests[0]?.headers["x-goog-api-key"]).toBe("AIzaFromGoogleEnv0123456789abcdef");

    vi.stubEnv("GOOGLE_API_KEY", "");
    const failed = await streamGoogle(model as Model<"google-generative-ai">, hello, {}).result();
    expect(failed.stopReason).toBe("error");
    expect(failed.errorMessage).toMatch(/GEMINI_API_KEY/);
    expect(llm.requests).toHaveLength(1);
  });

  it("sends images inline and replays signatures only to the same model", async () => {
    const usage = emptyUsage();
    const gemini3 = { ...getModel("google", "gemini-3-pro-preview"), baseUrl: llm.baseUrl(API) };
    const own: AssistantMessage = {
      role: "assistant",
      api: "google-generative-ai",
      provider: "google",
      model: "gemini-3-pro-preview",
      usage,
      stopReason: "toolUse",
      timestamp: 2,
      content: [
        { type: "thinking", thinking: "look", thinkingSignature: "T1" },
        { type: "toolCall", id: "call_g1", name: "read", arguments: { p: 1 }, thoughtSignature: "S1" },
      ],
    };
    const foreign: AssistantMessage = {
      role: "assistant",
      api: "openai-responses",
      provider: "openai",
      model: "gpt-5.2",
      usage,
      stopReason: "toolUse",
      timestamp: 4,
      content: [
        { type: "thinking", thinking: "GPT reasoning", thinkingSignature: '{"type":"reasoning"}' },
        { type: "toolCall", id: "call_o|fc_o", name: "bash", arguments: { c: "ls" } },
      ],
    };
    const context: Context = {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this" },
            { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          ],
          timestamp: 1,
        },
        own,
        {
          role: "toolResult",
          toolCallId: "call_g1",
          toolName: "read",
          content: [{ type: "text", text: "A" }],
          isError: false,
          timestamp: 3,
        },
        foreign,
        {
          role: "toolResult",
          toolCallId: "call_o|fc_o",
          toolName: "bash",
          content: [{ type: "text", text: "denied" }],
          isError: true,
          timestamp: 5,
        },
      ],
    };
    llm.enqueue(API, { text: "ok" });
    await collect(run(context, { reasoning: "high" }, gemini3));
    expect(lastBody().contents).toEqual([
      {
        role: "user",
        parts: [{ text: "what is this" }, { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }],
      },
      {
        role: "model",
        parts: [
          { text: "look", thought: true, thoughtSignature: "T1" },
          { functionCall: { id: "call_g1", name: "read", args: { p: 1 } }, thoughtSignature: "S1" },
        ],
      },
      {
        role: "user",
        parts: [{ functionResponse: { id: "call_g1", name: "read", response: { output: "A" } } }],
      },
      {
        role: "model",
        parts: [
          { text: "GPT reasoning" },
          {
            functionCall: { id: "call_o", name: "bash", args: { c: "ls" } },
            thoughtSignature: SKIP_THOUGHT_SIGNATURE,
          },
        ],
      },
      {
        role: "user",
        parts: [{ functionResponse: { id: "call_o", name: "bash", response: { error: "denied" } } }],
      },
    ]);
  });
});

// Live check against the real API; runs only where GEMINI_API_KEY is set (never in CI by default).
describe.skipIf(!process.env.GEMINI_API_KEY)("google-generative-ai live", () => {
  it("answers a short prompt", async () => {
    const live = getModel("google", "gemini-2.5-flash");
    const message = await googleProvider
      .streamSimple(live as Model<"google-generative-ai">, hello, { reasoning: "low", maxTokens: 500 })
      .result();
    expect(message.stopReason).toBe("stop");
    expect(message.usage.output).toBeGreaterThan(0);
  });
});
