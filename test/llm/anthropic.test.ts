import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getModel } from "../../src/agent/llm/models.js";
import { anthropicProvider, streamAnthropic } from "../../src/agent/llm/providers/anthropic.js";
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

const API = "anthropic-messages";
const KEY = "sk-ant-api03-test-key-0123456789";
let llm: FakeLlmServer;
let model: Model<"anthropic-messages">;
/** Backoff waits end at once (the retry behaviour itself is the provider contract's). */
const retry = { sleep: async () => {} };

/** A Claude 4.5 model (thinking budgets) served by the fake. */
function budgetModel(): Model<"anthropic-messages"> {
  return {
    id: "claude-sonnet-4-5",
    name: "Claude Sonnet 4.5",
    api: API,
    provider: "anthropic",
    baseUrl: llm.baseUrl(API),
    reasoning: true,
    thinkingLevels: ["off", "minimal", "low", "medium", "high"],
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  };
}

beforeAll(async () => {
  llm = await startFakeLlmServer();
  model = budgetModel();
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
  m: Model = model,
): AssistantMessageEventSource {
  return anthropicProvider.streamSimple(m as Model<"anthropic-messages">, context, {
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

describe("anthropic-messages: streaming", () => {
  // Writes of 3 bytes always cut the 4-byte "👋" (any 4 consecutive bytes contain a multiple of 3).
  it("streams signed thinking, then text, and keeps redacted thinking", async () => {
    llm.enqueue(API, {
      content: [
        { type: "thinking", text: "The user wants a greeting.", signature: "sig-abc==" },
        { type: "redactedThinking", data: "opaque-redacted-data" },
        { type: "text", text: "Hello!" },
      ],
      splitAt: [10, 333, 334, 700],
    });
    const { events, message } = await collect(run(hello, { reasoning: "medium" }));
    expect(shape(events)).toEqual([
      "start",
      "thinking_start",
      "thinking_delta+",
      "thinking_end",
      "thinking_start",
      "thinking_end",
      "text_start",
      "text_delta+",
      "text_end",
      "done",
    ]);
    expect(message.content).toEqual([
      { type: "thinking", thinking: "The user wants a greeting.", thinkingSignature: "sig-abc==" },
      { type: "thinking", thinking: "", thinkingSignature: "opaque-redacted-data", redacted: true },
      { type: "text", text: "Hello!" },
    ]);
  });

  it("reports usage with cache reads and writes, and its cost from the model's prices", async () => {
    llm.enqueue(API, {
      text: "ok",
      usage: { input: 1000, output: 500, cacheRead: 20_000, cacheWrite: 3000 },
    });
    const { message } = await collect(run());
    expect(message.usage).toMatchObject({
      input: 1000,
      output: 500,
      cacheRead: 20_000,
      cacheWrite: 3000,
      totalTokens: 24_500,
    });
    // 1000×3 + 500×15 + 20000×0.3 + 3000×3.75, per million tokens.
    expect(message.usage.cost.total).toBeCloseTo(0.003 + 0.0075 + 0.006 + 0.01125, 10);
  });
});

describe("anthropic-messages: requests", () => {
  it("sends headers, the key from the environment, cached system prompt and last user turn, and tools", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-from-env-123456789");
    llm.enqueue(API, { text: "ok" });
    const context: Context = {
      systemPrompt: "Be brief.",
      messages: [
        { role: "user", content: "first", timestamp: 1 },
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image", data: "aW1n", mimeType: "image/png" },
          ],
          timestamp: 2,
        },
      ],
      tools: [
        {
          name: "read_file",
          description: "Read a file",
          parameters: {
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
          } as never,
        },
      ],
    };
    await collect(anthropicProvider.streamSimple(model, context, { retry } as SimpleStreamOptions));
    const request = llm.requests[0];
    expect(request?.path).toBe("/v1/messages");
    expect(request?.headers).toMatchObject({
      "x-api-key": "sk-ant-from-env-123456789",
      "anthropic-version": "2023-06-01",
      "content-type": "application/json",
    });
    expect(request?.body).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 32_000,
      stream: true,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "first" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: "aW1n" },
              cache_control: { type: "ephemeral" },
            },
          ],
        },
      ],
      tools: [
        {
          name: "read_file",
          description: "Read a file",
          input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        },
      ],
    });
  });

  it("replays signed thinking and tool calls, and groups tool results with their images in one user turn", async () => {
    llm.enqueue(API, { text: "done" });
    const previous: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should list both.", thinkingSignature: "sig-1" },
        { type: "toolCall", id: "toolu_a", name: "ls", arguments: { path: "/a" } },
        { type: "toolCall", id: "toolu_b", name: "screenshot", arguments: {} },
      ],
      api: API,
      provider: "anthropic",
      model: model.id,
      usage: emptyUsage(),
      stopReason: "toolUse",
      timestamp: 2,
    };
    await collect(
      run({
        messages: [
          { role: "user", content: "look", timestamp: 1 },
          previous,
          {
            role: "toolResult",
            toolCallId: "toolu_a",
            toolName: "ls",
            content: [{ type: "text", text: "x.txt" }],
            isError: false,
            timestamp: 3,
          },
          {
            role: "toolResult",
            toolCallId: "toolu_b",
            toolName: "screenshot",
            content: [{ type: "image", data: "cG5n", mimeType: "image/png" }],
            isError: true,
            timestamp: 4,
          },
        ],
      }),
    );
    expect(body().messages).toEqual([
      { role: "user", content: [{ type: "text", text: "look" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should list both.", signature: "sig-1" },
          { type: "tool_use", id: "toolu_a", name: "ls", input: { path: "/a" } },
          { type: "tool_use", id: "toolu_b", name: "screenshot", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_a",
            content: [{ type: "text", text: "x.txt" }],
            is_error: false,
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_b",
            content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "cG5n" } }],
            is_error: true,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it("turns another provider's history into valid Anthropic turns", async () => {
    llm.enqueue(API, { text: "ok" });
    const fromOpenAI: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Reasoning from GPT", thinkingSignature: "{encrypted}" },
        { type: "toolCall", id: "call_9f|fc_item.with.dots", name: "ls", arguments: {} },
      ],
      api: "openai-responses",
      provider: "openai",
      model: "gpt-5.2",
      usage: emptyUsage(),
      stopReason: "toolUse",
      timestamp: 2,
    };
    await collect(
      run({
        messages: [
          { role: "user", content: "hi", timestamp: 1 },
          fromOpenAI,
          {
            role: "toolResult",
            toolCallId: "call_9f|fc_item.with.dots",
            toolName: "ls",
            content: [{ type: "text", text: "a" }],
            isError: false,
            timestamp: 3,
          },
        ],
      }),
    );
    const messages = body().messages as { role: string; content: Record<string, unknown>[] }[];
    const toolUse = messages[1]?.content.find((b) => b.type === "tool_use");
    expect(messages[1]?.content[0]).toEqual({ type: "text", text: "Reasoning from GPT" });
    expect(toolUse?.id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(messages[2]?.content[0]).toMatchObject({ type: "tool_result", tool_use_id: toolUse?.id });
  });

  it.each([
    ["off", undefined, 32_000],
    ["minimal", { type: "enabled", budget_tokens: 1024 }, 33_024],
    ["low", { type: "enabled", budget_tokens: 2048 }, 34_048],
    ["medium", { type: "enabled", budget_tokens: 8192 }, 40_192],
    ["high", { type: "enabled", budget_tokens: 16_384 }, 48_384],
    ["xhigh", { type: "enabled", budget_tokens: 16_384 }, 48_384],
  ] as const)("thinking budget for %s on a budget model", async (level, thinking, maxTokens) => {
    llm.enqueue(API, { text: "ok" });
    await collect(run(hello, { reasoning: level as ThinkingLevel, temperature: 0.2 }));
    expect(body().thinking).toEqual(thinking);
    expect(body().max_tokens).toBe(maxTokens);
    // Anthropic rejects a custom temperature with thinking on.
    expect(body().temperature).toBe(thinking ? undefined : 0.2);
    expect(llm.requests[0]?.headers["anthropic-beta"]).toBe(
      thinking ? "interleaved-thinking-2025-05-14" : undefined,
    );
  });

  it.each([
    ["low", "low"],
    ["medium", "medium"],
    ["high", "high"],
    ["xhigh", "max"],
  ] as const)("adaptive thinking with effort for %s on Claude Opus 4.6", async (level, effort) => {
    llm.enqueue(API, { text: "ok" });
    const opus = { ...getModel("anthropic", "claude-opus-4-6"), baseUrl: llm.baseUrl(API) };
    await collect(run(hello, { reasoning: level }, opus));
    expect(body().thinking).toEqual({ type: "adaptive" });
    expect(body().output_config).toEqual({ effort });
  });

  it("passes raw options through stream() and reports the payload", async () => {
    llm.enqueue(API, { text: "ok" });
    let seen: unknown;
    await collect(
      streamAnthropic(model, hello, {
        apiKey: KEY,
        maxTokens: 100,
        toolChoice: "any",
        promptCaching: false,
        onPayload: (p) => {
          seen = p;
        },
      }),
    );
    expect(body()).toMatchObject({
      max_tokens: 100,
      tool_choice: { type: "any" },
      system: [{ type: "text", text: "You are terse." }],
    });
    expect(JSON.stringify(body())).not.toContain("cache_control");
    expect(seen).toEqual(body());
  });
});

// Live check against the real API. Skipped unless ANTHROPIC_API_KEY is set, because CI and most
// development machines have no Anthropic credentials or network access.
describe.skipIf(!process.env.ANTHROPIC_API_KEY)("anthropic-messages: live API", () => {
  it("answers a tiny prompt", async () => {
    const live = getModel("anthropic", "claude-haiku-4-5") as Model<"anthropic-messages">;
    const message = await anthropicProvider
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
