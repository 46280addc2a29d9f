import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { defineOpenAICompatibleModel } from "../../src/agent/llm/models.js";
import {
  openAICompletionsProvider,
  streamOpenAICompletions,
} from "../../src/agent/llm/providers/openai-completions.js";
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
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

const API = "openai-completions";
const KEY = "sk-proj-test-key-0123456789abcdef";
let llm: FakeLlmServer;
/** OpenAI's own endpoint, a reasoning model: developer role, max_completion_tokens, reasoning_effort. */
let openai: Model<"openai-completions">;
/** A local OpenAI-compatible server (Ollama-like): system role, max_tokens, no reasoning_effort. */
let local: Model<"openai-completions">;
/** Backoff waits end at once (the retry behaviour itself is the provider contract's). */
const retry = { sleep: async () => {} };

beforeAll(async () => {
  llm = await startFakeLlmServer();
  openai = {
    id: "gpt-5-mini",
    name: "GPT-5 mini",
    api: API,
    provider: "openai",
    baseUrl: llm.baseUrl(API),
    reasoning: true,
    thinkingLevels: ["minimal", "low", "medium", "high"],
    input: ["text", "image"],
    cost: { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 },
    contextWindow: 400_000,
    maxTokens: 128_000,
  };
  local = defineOpenAICompatibleModel({
    id: "qwen3:8b",
    baseUrl: llm.baseUrl(API),
    provider: "ollama",
    reasoning: true,
  }) as Model<"openai-completions">;
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

function run(
  context: Context = hello,
  options: SimpleStreamOptions = {},
  m: Model = openai,
): AssistantMessageEventSource {
  return openAICompletionsProvider.streamSimple(m as Model<"openai-completions">, context, {
    apiKey: KEY,
    retry,
    ...options,
  } as SimpleStreamOptions);
}

async function collect(
  source: AssistantMessageEventSource,
): Promise<{ events: AssistantMessageEvent[]; message: AssistantMessage }> {
  const events: AssistantMessageEvent[] = [];
  for await (const e of source) events.push(e);
  return { events, message: await source.result() };
}

/** Event types with runs of the same delta collapsed, e.g. `text_delta+`. */
function shape(events: AssistantMessageEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (e.type.endsWith("_delta") && (last === e.type || last === `${e.type}+`))
      out[out.length - 1] = `${e.type}+`;
    else out.push(e.type);
  }
  return out;
}

function body(i = 0): Record<string, unknown> {
  const request = llm.requests[i];
  if (!request) throw new Error(`no request #${i}`);
  return request.body;
}

describe("openai-completions: streaming", () => {
  // Writes of 3 bytes always cut the 4-byte "👋" (any 4 consecutive bytes contain a multiple of 3).
  it("streams reasoning_content from a compatible server as thinking, then text", async () => {
    llm.enqueue(API, { thinking: "User greets; greet back.", text: "Hello!", chunkSize: 5 });
    const { events, message } = await collect(run(hello, { reasoning: "high" }, local));
    expect(shape(events)).toEqual([
      "start",
      "thinking_start",
      "thinking_delta+",
      "thinking_end",
      "text_start",
      "text_delta+",
      "text_end",
      "done",
    ]);
    expect(message.content).toEqual([
      { type: "thinking", thinking: "User greets; greet back." },
      { type: "text", text: "Hello!" },
    ]);
  });
});

describe("openai-completions: failures are data", () => {
  it("names a local server in errors and never puts the API key in errorMessage", async () => {
    llm.enqueue(API, {
      httpError: { status: 401, code: "invalid_api_key", message: `Incorrect API key provided: ${KEY}` },
    });
    const { message } = await collect(run(hello, {}, local));
    expect(message.errorMessage).toBe(
      "ollama (OpenAI-compatible) API error (HTTP 401, invalid_api_key): Incorrect API key provided: [redacted]",
    );
  });
});

describe("openai-completions: requests", () => {
  it("follows OpenAI's own conventions: developer role, max_completion_tokens, bearer key from the environment", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-from-env-abcdefghijklmnop");
    llm.enqueue(API, { text: "ok" });
    await collect(
      openAICompletionsProvider.streamSimple(openai, hello, { maxTokens: 500, retry } as SimpleStreamOptions),
    );
    expect(llm.requests[0]?.path).toBe("/v1/chat/completions");
    expect(llm.requests[0]?.headers.authorization).toBe("Bearer sk-from-env-abcdefghijklmnop");
    expect(body()).toEqual({
      model: "gpt-5-mini",
      stream: true,
      stream_options: { include_usage: true },
      // gpt-5-mini cannot turn reasoning off, so "no thinking" asks for its lowest effort, and the
      // output limit is raised by that effort's budget (1024), as on the Responses API.
      max_completion_tokens: 1524,
      reasoning_effort: "minimal",
      messages: [
        { role: "developer", content: "You are terse." },
        { role: "user", content: "Say hello" },
      ],
    });
  });

  it("follows a local server's compat settings: system role, max_tokens, no reasoning_effort, no key", async () => {
    llm.enqueue(API, { text: "ok" });
    await collect(
      openAICompletionsProvider.streamSimple(local, hello, {
        maxTokens: 300,
        reasoning: "high",
        retry,
      } as SimpleStreamOptions),
    );
    expect(llm.requests[0]?.headers.authorization).toBeUndefined();
    expect(body()).toEqual({
      model: "qwen3:8b",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 300,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Say hello" },
      ],
    });
  });

  it("omits stream_options for servers that reject it, and then reports no usage", async () => {
    const strict = { ...local, compat: { ...local.compat, supportsStreamOptions: false } };
    llm.enqueue(API, { text: "ok", usage: { input: 5, output: 5 } });
    const { message } = await collect(run(hello, {}, strict));
    expect(body().stream_options).toBeUndefined();
    expect(message.usage.totalTokens).toBe(0);
    expect(message.stopReason).toBe("stop");
  });

  it.each([
    ["off", undefined],
    ["minimal", "minimal"],
    ["low", "low"],
    ["medium", "medium"],
    ["high", "high"],
    ["xhigh", "high"],
  ] as const)("reasoning_effort for %s on an OpenAI reasoning model", async (level, effort) => {
    llm.enqueue(API, { text: "ok" });
    const withOff = {
      ...openai,
      thinkingLevels: ["off", "minimal", "low", "medium", "high"] as ThinkingLevel[],
    };
    await collect(run(hello, { reasoning: level }, withOff));
    expect(body().reasoning_effort).toBe(level === "off" ? "none" : effort);
  });

  it("sends low for minimal where the model has no minimal effort", async () => {
    llm.enqueue(API, { text: "ok" });
    const noMinimal = { ...openai, thinkingLevels: ["low", "medium", "high"] as ThinkingLevel[] };
    await collect(run(hello, { reasoning: "minimal" }, noMinimal));
    expect(body().reasoning_effort).toBe("low");
  });

  it("sends reasoning_effort to a compatible server only when its compat allows it", async () => {
    llm.enqueue(API, { text: "ok" });
    const vllm = { ...local, compat: { ...local.compat, supportsReasoningEffort: true } };
    await collect(run(hello, { reasoning: "medium" }, vllm));
    expect(body().reasoning_effort).toBe("medium");
  });

  it("sends images as data URLs and moves tool-result images into a following user message", async () => {
    llm.enqueue(API, { text: "ok" });
    const previous: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "private reasoning" },
        { type: "text", text: "Taking screenshots." },
        { type: "toolCall", id: "call_1", name: "screenshot", arguments: { screen: 1 } },
        { type: "toolCall", id: "call_2", name: "screenshot", arguments: { screen: 2 } },
      ],
      api: API,
      provider: "openai",
      model: "gpt-5-mini",
      usage: emptyUsage(),
      stopReason: "toolUse",
      timestamp: 2,
    };
    await collect(
      run({
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Compare with this:" },
              { type: "image", data: "aW1n", mimeType: "image/jpeg" },
            ],
            timestamp: 1,
          },
          previous,
          {
            role: "toolResult",
            toolCallId: "call_1",
            toolName: "screenshot",
            content: [
              { type: "text", text: "screen 1" },
              { type: "image", data: "czE=", mimeType: "image/png" },
            ],
            isError: false,
            timestamp: 3,
          },
          {
            role: "toolResult",
            toolCallId: "call_2",
            toolName: "screenshot",
            content: [{ type: "image", data: "czI=", mimeType: "image/png" }],
            isError: false,
            timestamp: 4,
          },
        ],
        tools: [
          {
            name: "screenshot",
            description: "Take a screenshot",
            parameters: { type: "object", properties: {} } as never,
          },
        ],
      }),
    );
    expect(body().tools).toEqual([
      {
        type: "function",
        function: {
          name: "screenshot",
          description: "Take a screenshot",
          parameters: { type: "object", properties: {} },
        },
      },
    ]);
    expect(body().messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Compare with this:" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,aW1n" } },
        ],
      },
      {
        role: "assistant",
        content: "Taking screenshots.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "screenshot", arguments: '{"screen":1}' } },
          { id: "call_2", type: "function", function: { name: "screenshot", arguments: '{"screen":2}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "screen 1" },
      { role: "tool", tool_call_id: "call_2", content: "(image attached in the next message)" },
      {
        role: "user",
        content: [
          { type: "text", text: "Images returned by the tool calls above:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,czE=" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,czI=" } },
        ],
      },
    ]);
  });

  it("turns an Anthropic history into valid completions messages with short tool-call ids", async () => {
    llm.enqueue(API, { text: "ok" });
    const longId = `toolu_${"x".repeat(50)}`;
    const fromClaude: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Claude's reasoning", thinkingSignature: "sig" },
        { type: "toolCall", id: longId, name: "ls", arguments: {} },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage: emptyUsage(),
      stopReason: "toolUse",
      timestamp: 2,
    };
    await collect(
      run({
        messages: [
          { role: "user", content: "hi", timestamp: 1 },
          fromClaude,
          {
            role: "toolResult",
            toolCallId: longId,
            toolName: "ls",
            content: [{ type: "text", text: "a" }],
            isError: false,
            timestamp: 3,
          },
        ],
      }),
    );
    const messages = body().messages as Record<string, unknown>[];
    const assistant = messages[1] as { content: string; tool_calls: { id: string }[] };
    expect(assistant.content).toBe("Claude's reasoning");
    const id = assistant.tool_calls[0]?.id ?? "";
    expect(id.length).toBeLessThanOrEqual(40);
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: id, content: "a" });
  });

  it("passes raw options through stream() and reports the payload", async () => {
    llm.enqueue(API, { text: "ok" });
    let seen: unknown;
    await collect(
      streamOpenAICompletions(openai, hello, {
        apiKey: KEY,
        temperature: 0.3,
        toolChoice: "required",
        reasoningEffort: "low",
        onPayload: (p) => {
          seen = p;
        },
      }),
    );
    expect(body()).toMatchObject({ temperature: 0.3, tool_choice: "required", reasoning_effort: "low" });
    expect(seen).toEqual(body());
  });
});

// Live check against the real API. Skipped unless OPENAI_API_KEY is set, because CI and most
// development machines have no OpenAI credentials or network access.
describe.skipIf(!process.env.OPENAI_API_KEY)("openai-completions: live API", () => {
  it("answers a tiny prompt", async () => {
    const live: Model<"openai-completions"> = {
      ...openai,
      id: "gpt-4.1-mini",
      baseUrl: "https://api.openai.com/v1",
      reasoning: false,
    };
    const message = await openAICompletionsProvider
      .streamSimple(
        live,
        { messages: [{ role: "user", content: "Reply with the single word: pong", timestamp: 1 }] },
        { maxTokens: 20 },
      )
      .result();
    expect(message.errorMessage).toBeUndefined();
    expect(message.stopReason).toBe("stop");
    expect(JSON.stringify(message.content).toLowerCase()).toContain("pong");
    expect(message.usage.input).toBeGreaterThan(0);
  }, 60_000);
});
