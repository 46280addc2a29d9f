import { describe, expect, it } from "vitest";
import { type AssistantMessage, createAssistantMessage } from "../../src/agent/llm/index.js";
import { isContextOverflow } from "../../src/agent/llm/overflow.js";

function failed(errorMessage: string): AssistantMessage {
  return {
    ...createAssistantMessage({ api: "x", provider: "x", id: "m" }),
    stopReason: "error",
    errorMessage,
  };
}

describe("isContextOverflow", () => {
  it.each([
    "Anthropic API error (HTTP 400, invalid_request_error): prompt is too long: 213462 tokens > 200000 maximum",
    "OpenAI API error (HTTP 400, context_length_exceeded): This model's maximum context length is 8192 tokens.",
    "OpenAI API error (HTTP 400, context_length_exceeded): Your input exceeds the context window of this model.",
    "Google API error (HTTP 400, INVALID_ARGUMENT): The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "OpenAI API error (HTTP 400): the request exceeds the available context size, try increasing it", // llama.cpp
    "OpenAI API error (HTTP 400): Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input", // LM Studio
  ])("recognises %s", (text) => {
    expect(isContextOverflow(failed(text))).toBe(true);
  });

  it("ignores other errors, successes and aborts", () => {
    expect(
      isContextOverflow(failed("OpenAI API error (HTTP 429, rate_limit_exceeded): Rate limit reached")),
    ).toBe(false);
    const ok = createAssistantMessage({ api: "x", provider: "x", id: "m" });
    expect(isContextOverflow(ok)).toBe(false);
  });

  it("detects a silent overflow from usage above the context window", () => {
    const message = createAssistantMessage({ api: "x", provider: "x", id: "m" });
    message.usage.input = 3000;
    message.usage.cacheRead = 1500;
    expect(isContextOverflow(message, 4096)).toBe(true);
    expect(isContextOverflow(message, 8192)).toBe(false);
    expect(isContextOverflow(message)).toBe(false);
  });
});
