import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getModel } from "../../src/agent/llm/models.js";
import { openaiResponsesProvider } from "../../src/agent/llm/providers/openai-responses.js";
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
import { openAIResponsesProtocol } from "../fakes/llm/openai-responses.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

let llm: FakeLlmServer;
let model: Model;
const API = "openai-responses";
/** Backoff waits end at once (the retry behaviour itself is the provider contract's). */
const retry = { sleep: async () => {} };

beforeAll(async () => {
  llm = await startFakeLlmServer({ protocols: [openAIResponsesProtocol] });
  model = { ...getModel("openai", "gpt-5.2"), baseUrl: llm.baseUrl(API) };
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
  options: SimpleStreamOptions & { retry?: typeof retry } = {},
  m: Model = model,
): AssistantMessageEventSource {
  return openaiResponsesProvider.streamSimple(m as Model<"openai-responses">, context, {
    apiKey: "sk-test-key-0123456789abcdef",
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

describe("openai-responses provider", () => {
  it("streams text split inside UTF-8 characters and sends a valid request", async () => {
    llm.enqueue(API, { text: "Grüße 👋 from the fake", chunkSize: 1, usage: { input: 10, output: 6 } });
    const { events, message } = await collect(run());

    expect(message.stopReason).toBe("stop");
    expect(message.content).toEqual([
      { type: "text", text: "Grüße 👋 from the fake", textSignature: "msg_fake1" },
    ]);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("start");
    expect(types[1]).toBe("text_start");
    expect(types.at(-2)).toBe("text_end");
    expect(types.at(-1)).toBe("done");
    expect(types.filter((t) => t === "text_delta").length).toBeGreaterThan(1);

    const request = llm.requests[0];
    expect(request?.path).toBe("/v1/responses");
    expect(request?.headers.authorization).toBe("Bearer sk-test-key-0123456789abcdef");
    expect(request?.body).toMatchObject({
      model: "gpt-5.2",
      stream: true,
      store: false,
      instructions: "You are terse.",
      input: [{ role: "user", content: [{ type: "input_text", text: "Say hello" }] }],
    });
  });

  it("streams reasoning then text and keeps the reasoning item for replay", async () => {
    llm.enqueue(API, {
      thinking: "The user wants a greeting.",
      thinkingSignature: "gAAAAencrypted",
      text: "Hello!",
    });
    const { events, message } = await collect(run(hello, { reasoning: "high" }));

    expect(events.map((e) => e.type).filter((t) => t.endsWith("_start") || t.endsWith("_end"))).toEqual([
      "thinking_start",
      "thinking_end",
      "text_start",
      "text_end",
    ]);
    const thinking = message.content[0];
    expect(thinking?.type).toBe("thinking");
    if (thinking?.type !== "thinking") return;
    expect(thinking.thinking).toBe("The user wants a greeting.");
    expect(JSON.parse(thinking.thinkingSignature ?? "{}")).toMatchObject({
      type: "reasoning",
      id: "rs_fake1",
      encrypted_content: "gAAAAencrypted",
    });
    expect(lastBody()).toMatchObject({
      reasoning: { effort: "high", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    });
  });

  it.each<[string, ThinkingLevel | undefined, unknown]>([
    ["gpt-5.2", "off", { effort: "none" }],
    ["gpt-5.2", "xhigh", { effort: "xhigh", summary: "auto" }],
    ["gpt-5.1", "xhigh", { effort: "high", summary: "auto" }],
    ["gpt-5", "off", { effort: "minimal", summary: "auto" }],
    ["o3", "minimal", { effort: "low", summary: "auto" }],
    ["gpt-4.1", "high", undefined],
  ])("maps thinking level for %s at %s to reasoning %j", async (id, level, expected) => {
    llm.enqueue(API, { text: "ok" });
    const m = { ...getModel("openai", id), baseUrl: llm.baseUrl(API) };
    const { message } = await collect(run(hello, level ? { reasoning: level } : {}, m));
    expect(message.stopReason).toBe("stop");
    expect(lastBody().reasoning).toEqual(expected);
    if (expected === undefined) expect(lastBody().include).toBeUndefined();
  });

  it("sends temperature only to models without reasoning", async () => {
    llm.enqueue(API, [{ text: "a" }, { text: "b" }]);
    await collect(run(hello, { temperature: 0.3 }));
    expect(lastBody()).not.toHaveProperty("temperature");
    await collect(
      run(hello, { temperature: 0.3 }, { ...getModel("openai", "gpt-4.1"), baseUrl: llm.baseUrl(API) }),
    );
    expect(lastBody().temperature).toBe(0.3);
  });

  it("raises max_output_tokens to leave room for reasoning", async () => {
    llm.enqueue(API, [{ text: "a" }, { text: "b" }]);
    await collect(run(hello, { maxTokens: 1000 }));
    expect(lastBody().max_output_tokens).toBe(1000);
    await collect(run(hello, { maxTokens: 1000, reasoning: "medium" }));
    expect(lastBody().max_output_tokens).toBe(1000 + 8192);
  });

  it("assembles two tool calls from fragmented arguments, an object at every delta", async () => {
    llm.enqueue(API, {
      text: "Checking.",
      toolCalls: [
        { id: "call_A1", name: "read", args: { path: "/tmp/ä.txt", lines: 3 } },
        { id: "call_B2", name: "bash", args: { command: "ls -la" } },
      ],
      fragmentSize: 3,
      chunkSize: 7,
    });
    const { events, message } = await collect(run());

    expect(message.stopReason).toBe("toolUse");
    const calls = message.content.filter((c) => c.type === "toolCall");
    expect(calls).toEqual([
      { type: "toolCall", id: "call_A1|fc_fake2", name: "read", arguments: { path: "/tmp/ä.txt", lines: 3 } },
      { type: "toolCall", id: "call_B2|fc_fake3", name: "bash", arguments: { command: "ls -la" } },
    ]);
    const deltas = events.filter((e) => e.type === "toolcall_delta");
    expect(deltas.length).toBeGreaterThan(4);
    for (const d of deltas) {
      const block = d.partial.content[d.contentIndex];
      expect(block?.type === "toolCall" && typeof block.arguments === "object").toBe(true);
    }
    expect(events.filter((e) => e.type === "toolcall_end")).toHaveLength(2);
  });

  it("replays its own reasoning and call ids, and converts another model's history", async () => {
    const usage = emptyUsage();
    const own: AssistantMessage = {
      role: "assistant",
      api: "openai-responses",
      provider: "openai",
      model: "gpt-5.2",
      usage,
      stopReason: "toolUse",
      timestamp: 2,
      content: [
        {
          type: "thinking",
          thinking: "",
          thinkingSignature: JSON.stringify({
            type: "reasoning",
            id: "rs_1",
            summary: [],
            encrypted_content: "E",
          }),
        },
        { type: "toolCall", id: "call_own|fc_own", name: "read", arguments: { path: "a" } },
      ],
    };
    const foreign: AssistantMessage = {
      role: "assistant",
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage,
      stopReason: "toolUse",
      timestamp: 4,
      content: [
        { type: "thinking", thinking: "Claude thought", thinkingSignature: "sig-anthropic" },
        { type: "toolCall", id: "toolu_01.weird/id", name: "bash", arguments: { command: "ls" } },
      ],
    };
    const context: Context = {
      messages: [
        { role: "user", content: "go", timestamp: 1 },
        own,
        {
          role: "toolResult",
          toolCallId: "call_own|fc_own",
          toolName: "read",
          content: [{ type: "text", text: "A" }],
          isError: false,
          timestamp: 3,
        },
        foreign,
        {
          role: "toolResult",
          toolCallId: "toolu_01.weird/id",
          toolName: "bash",
          content: [{ type: "text", text: "B" }],
          isError: false,
          timestamp: 5,
        },
      ],
    };
    llm.enqueue(API, { text: "ok" });
    await collect(run(context));
    const input = lastBody().input as Record<string, unknown>[];
    expect(input).toEqual([
      { role: "user", content: [{ type: "input_text", text: "go" }] },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "E" },
      { type: "function_call", id: "fc_own", call_id: "call_own", name: "read", arguments: '{"path":"a"}' },
      { type: "function_call_output", call_id: "call_own", output: "A" },
      { role: "assistant", content: "Claude thought" },
      { type: "function_call", call_id: "toolu_01_weird_id", name: "bash", arguments: '{"command":"ls"}' },
      { type: "function_call_output", call_id: "toolu_01_weird_id", output: "B" },
    ]);
  });
});

// Live check against the real API; runs only where OPENAI_API_KEY is set (never in CI by default).
describe.skipIf(!process.env.OPENAI_API_KEY)("openai-responses live", () => {
  it("answers a short prompt", async () => {
    const live = getModel("openai", "gpt-5-mini");
    const message = await openaiResponsesProvider
      .streamSimple(live as Model<"openai-responses">, hello, { reasoning: "minimal", maxTokens: 2000 })
      .result();
    expect(message.stopReason).toBe("stop");
    expect(message.usage.output).toBeGreaterThan(0);
  });
});
