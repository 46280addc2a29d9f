/**
 * One thread that switches model between all four wire APIs mid-conversation, with thinking and
 * tool calls on every turn, run through `streamSimple` against the fake LLM server. Each request
 * body is checked against the rules of its API: tool-call ids in the API's pattern, every call
 * paired with its result, thinking of other models sent as plain text, signed thinking only to
 * the model that signed it, and failed turns left out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getModel } from "../../src/agent/llm/models.js";
import { anthropicProvider } from "../../src/agent/llm/providers/anthropic.js";
import { googleProvider } from "../../src/agent/llm/providers/google.js";
import { openAICompletionsProvider } from "../../src/agent/llm/providers/openai-completions.js";
import { openaiResponsesProvider } from "../../src/agent/llm/providers/openai-responses.js";
import { registerApiProvider, unregisterApiProviders } from "../../src/agent/llm/registry.js";
import { streamSimple } from "../../src/agent/llm/stream.js";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  Context,
  Message,
  Model,
  ToolCall,
} from "../../src/agent/llm/types.js";
import {
  type FakeApi,
  type FakeLlmServer,
  type ScriptedReply,
  startFakeLlmServer,
} from "../fakes/llm-server.js";

type Json = Record<string, unknown>;
const SOURCE = "cross-provider-test";
const ANTHROPIC_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const OPENAI_CHAT_ID = /^[a-zA-Z0-9_-]{1,40}$/;

let llm: FakeLlmServer;
let models: Record<FakeApi, Model>;

beforeAll(async () => {
  llm = await startFakeLlmServer();
  registerApiProvider(anthropicProvider, SOURCE);
  registerApiProvider(openaiResponsesProvider, SOURCE);
  registerApiProvider(googleProvider, SOURCE);
  registerApiProvider(openAICompletionsProvider, SOURCE);
  const at = (m: Model, api: FakeApi): Model => ({ ...m, baseUrl: llm.baseUrl(api) });
  models = {
    "anthropic-messages": at(getModel("anthropic", "claude-sonnet-4-5"), "anthropic-messages"),
    "openai-responses": at(getModel("openai", "gpt-5.2"), "openai-responses"),
    "google-generative-ai": at(getModel("google", "gemini-3-pro-preview"), "google-generative-ai"),
    "openai-completions": at(
      { ...getModel("openai", "gpt-5-mini"), api: "openai-completions", provider: "openai" },
      "openai-completions",
    ),
  };
});

afterAll(async () => {
  unregisterApiProviders(SOURCE);
  await llm.close();
});

const bash = {
  name: "bash",
  description: "Run a shell command",
  parameters: {
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
  },
} as unknown as NonNullable<Context["tools"]>[number];

/** Runs one turn on `api` with `reply` scripted, checks the event shape, appends the result. */
async function turn(
  api: FakeApi,
  history: Message[],
  reply: ScriptedReply,
): Promise<{ message: AssistantMessage; body: Json }> {
  llm.enqueue(api, reply);
  const before = llm.requests.length;
  const source = streamSimple(
    models[api],
    { systemPrompt: "You are a helpful bot.", messages: history, tools: [bash] },
    { apiKey: "test-key-0123456789", reasoning: "high", maxRetries: 0 },
  );
  const events: AssistantMessageEvent[] = [];
  for await (const e of source) events.push(e);
  const message = await source.result();
  expect(events[0]?.type).toBe("start");
  expect(["done", "error"]).toContain(events.at(-1)?.type);
  history.push(message);
  const body = llm.requests[before]?.body;
  if (!body) throw new Error(`no request reached the ${api} fake`);
  return { message, body };
}

function runTools(history: Message[], message: AssistantMessage): void {
  for (const call of message.content.filter((c): c is ToolCall => c.type === "toolCall")) {
    history.push({
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: [{ type: "text", text: `output of ${String(call.arguments.command)}` }],
      isError: false,
      timestamp: Date.now(),
    });
  }
}

/** Anthropic: ids in pattern; every tool_use answered in the next user turn; signed thinking only from Claude. */
function checkAnthropic(body: Json): string[] {
  const messages = body.messages as { role: string; content: Json[] }[];
  const texts: string[] = [];
  messages.forEach((m, i) => {
    if (i > 0) expect(m.role, "roles alternate").not.toBe(messages[i - 1]?.role);
    for (const block of m.content) {
      if (block.type === "text") texts.push(String(block.text));
      if (block.type === "thinking") expect(block.signature).toBe("sig-claude-1");
    }
    const uses = m.content.filter((b) => b.type === "tool_use").map((b) => String(b.id));
    for (const id of uses) expect(id).toMatch(ANTHROPIC_ID);
    if (uses.length > 0) {
      const next = messages[i + 1];
      expect(next?.role).toBe("user");
      const results = (next?.content ?? []).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
      expect(results).toEqual(uses);
    }
  });
  return texts;
}

/** Responses: call ids in pattern, each call answered once, reasoning items only our own. */
function checkResponses(body: Json): string[] {
  const input = body.input as Json[];
  const calls = input.filter((i) => i.type === "function_call").map((i) => String(i.call_id));
  const outputs = input.filter((i) => i.type === "function_call_output").map((i) => String(i.call_id));
  for (const id of calls) expect(id).toMatch(ANTHROPIC_ID);
  expect(outputs).toEqual(calls);
  for (const item of input.filter((i) => i.type === "reasoning"))
    expect(item.encrypted_content).toBe("enc-gpt-1");
  for (const item of input.filter((i) => i.type === "function_call" && i.id !== undefined)) {
    expect(String(item.id)).toMatch(/^fc_/);
  }
  return input.filter((i) => i.role === "assistant").map((i) => String(i.content));
}

/** Gemini: each model turn's calls answered by the next user turn, ids matched; thoughts only our own. */
function checkGoogle(body: Json): string[] {
  const contents = body.contents as { role: string; parts: Json[] }[];
  const texts: string[] = [];
  contents.forEach((c, i) => {
    if (i > 0) expect(c.role, "roles alternate").not.toBe(contents[i - 1]?.role);
    for (const part of c.parts) {
      if (typeof part.text === "string" && part.thought !== true) texts.push(part.text);
      if (part.thought === true) expect(part.thoughtSignature).toBe("sig-gemini-1");
    }
    const calls = c.parts.filter((p) => p.functionCall).map((p) => p.functionCall as Json);
    for (const call of calls) expect(String(call.id)).toMatch(ANTHROPIC_ID);
    for (const p of c.parts.filter((q) => q.functionCall)) expect(typeof p.thoughtSignature).toBe("string");
    if (calls.length > 0) {
      const responses = (contents[i + 1]?.parts ?? [])
        .filter((p) => p.functionResponse)
        .map((p) => p.functionResponse as Json);
      expect(responses.map((r) => [r.id, r.name])).toEqual(calls.map((cl) => [cl.id, cl.name]));
    }
  });
  return texts;
}

/** Chat Completions: ids ≤ 40 chars, each assistant's tool_calls answered by the tool messages that follow. */
function checkCompletions(body: Json): string[] {
  const messages = body.messages as Json[];
  const texts: string[] = [];
  messages.forEach((m, i) => {
    if (m.role === "assistant" && typeof m.content === "string") texts.push(m.content);
    const calls = (m.tool_calls as Json[] | undefined) ?? [];
    for (const c of calls) expect(String(c.id)).toMatch(OPENAI_CHAT_ID);
    if (calls.length > 0) {
      const answered = messages.slice(i + 1, i + 1 + calls.length).map((t) => [t.role, t.tool_call_id]);
      expect(answered).toEqual(calls.map((c) => ["tool", c.id]));
    }
  });
  return texts;
}

describe("a thread that switches between all four providers", () => {
  it("produces a valid request for each API at every switch", async () => {
    const history: Message[] = [{ role: "user", content: "List the files, then read one.", timestamp: 1 }];

    // 1. Claude thinks (signed) and calls a tool.
    const claude1 = await turn("anthropic-messages", history, {
      thinking: "Claude: I should list files.",
      thinkingSignature: "sig-claude-1",
      text: "Listing.",
      toolCalls: [{ id: "toolu_01AbC", name: "bash", args: { command: "ls" } }],
    });
    expect(claude1.message.stopReason).toBe("toolUse");
    checkAnthropic(claude1.body);
    runTools(history, claude1.message);

    // 2. GPT-5.2 over Responses: Claude's thinking arrives as text; GPT reasons and calls a tool.
    const gpt = await turn("openai-responses", history, {
      thinking: "GPT: read a.txt next.",
      thinkingSignature: "enc-gpt-1",
      toolCalls: [{ id: "call_Gx7", name: "bash", args: { command: "cat a.txt" } }],
    });
    expect(gpt.message.content.find((c) => c.type === "toolCall")).toMatchObject({ id: "call_Gx7|fc_fake2" });
    expect(checkResponses(gpt.body)).toContain("Claude: I should list files.");
    expect(gpt.body.input).not.toContainEqual(expect.objectContaining({ type: "reasoning" }));
    runTools(history, gpt.message);

    // 3. Gemini 3 fails once (the failed turn stays in history), then thinks and calls a tool without an id.
    const failed = await turn("google-generative-ai", history, {
      httpError: { status: 400, message: "Request contains an invalid argument." },
    });
    expect(failed.message.stopReason).toBe("error");
    const gemini = await turn("google-generative-ai", history, {
      thinking: "Gemini: check the size too.",
      thinkingSignature: "sig-gemini-1",
      toolCalls: [{ id: "", name: "bash", args: { command: "wc -c a.txt" } }],
    });
    const geminiTexts = checkGoogle(gemini.body);
    expect(geminiTexts).toEqual(
      expect.arrayContaining(["Claude: I should list files.", "GPT: read a.txt next."]),
    );
    const geminiModelTurns = (gemini.body.contents as { role: string }[]).filter((c) => c.role === "model");
    expect(geminiModelTurns).toHaveLength(2);
    runTools(history, gemini.message);

    // 4. A Chat Completions model: ids within 40 characters, every call answered.
    const chat = await turn("openai-completions", history, { text: "a.txt has 42 bytes." });
    expect(chat.message.stopReason).toBe("stop");
    const chatTexts = checkCompletions(chat.body);
    expect(chatTexts.join("\n")).toContain("Gemini: check the size too.");
    expect(JSON.stringify(chat.body)).not.toContain("enc-gpt-1");
    expect(JSON.stringify(chat.body)).not.toContain("sig-claude-1");

    // 5. Back to Claude: its own signed thinking is replayed, everyone else's is text.
    history.push({ role: "user", content: "Thanks! Summarise.", timestamp: Date.now() });
    const claude2 = await turn("anthropic-messages", history, { text: "Done: a.txt, 42 bytes." });
    expect(claude2.message.stopReason).toBe("stop");
    const claudeTexts = checkAnthropic(claude2.body);
    expect(claudeTexts).toEqual(
      expect.arrayContaining(["GPT: read a.txt next.", "Gemini: check the size too.", "a.txt has 42 bytes."]),
    );
    const replayed = (claude2.body.messages as { content: Json[] }[]).flatMap((m) =>
      m.content.filter((b) => b.type === "thinking"),
    );
    expect(replayed).toEqual([
      { type: "thinking", thinking: "Claude: I should list files.", signature: "sig-claude-1" },
    ]);
    expect(JSON.stringify(claude2.body)).not.toContain("invalid argument");

    // 6. And GPT again: its own reasoning item and call item id come back; the rest is paired and valid.
    const gpt2 = await turn("openai-responses", history, { text: "Bye." });
    checkResponses(gpt2.body);
    const input = gpt2.body.input as Json[];
    expect(input).toContainEqual(
      expect.objectContaining({ type: "reasoning", encrypted_content: "enc-gpt-1" }),
    );
    expect(input).toContainEqual(
      expect.objectContaining({ type: "function_call", call_id: "call_Gx7", id: "fc_fake2" }),
    );
  });
});
