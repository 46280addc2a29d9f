import { describe, expect, it } from "vitest";
import { defineOpenAICompatibleModel, getModel } from "../../src/agent/llm/models.js";
import {
  anthropicThinkingParams,
  clampThinkingLevel,
  googleThinkingParams,
  openaiReasoningEffort,
  supportedThinkingLevels,
  thinkingTokenBudget,
  usesAdaptiveThinking,
} from "../../src/agent/llm/thinking.js";
import { THINKING_LEVELS, type ThinkingLevel } from "../../src/agent/llm/types.js";

const anthropic = (id: string) => getModel("anthropic", id);

describe("clamping thinking levels to the model", () => {
  it("falls back from xhigh to high where the model has no xhigh", () => {
    expect(clampThinkingLevel(anthropic("claude-sonnet-4-5"), "xhigh")).toBe("high");
    expect(clampThinkingLevel(getModel("openai", "gpt-5.1"), "xhigh")).toBe("high");
    expect(clampThinkingLevel(getModel("google", "gemini-2.5-flash"), "xhigh")).toBe("high");
    expect(clampThinkingLevel(getModel("openai", "gpt-5.2"), "xhigh")).toBe("xhigh");
    expect(clampThinkingLevel(anthropic("claude-opus-4-7"), "xhigh")).toBe("xhigh");
  });

  it("gives off for every level on a model without reasoning", () => {
    const plain = getModel("openai", "gpt-4.1");
    expect(supportedThinkingLevels(plain)).toEqual(["off"]);
    for (const level of THINKING_LEVELS) expect(clampThinkingLevel(plain, level)).toBe("off");
  });

  it("rounds up to the lowest level where reasoning cannot be turned off", () => {
    expect(clampThinkingLevel(getModel("openai", "o3"), "off")).toBe("low");
    expect(clampThinkingLevel(getModel("openai", "o3"), "minimal")).toBe("low");
    expect(clampThinkingLevel(getModel("google", "gemini-2.5-pro"), "off")).toBe("minimal");
    expect(clampThinkingLevel(getModel("google", "gemini-3-pro-preview"), "medium")).toBe("low");
  });

  it("lists xhigh only for models that have a level above high", () => {
    const withXhigh = ["claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6", "gpt-5.4", "gpt-5.2"];
    for (const m of [
      ...[
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-opus-4-5",
        "claude-haiku-4-5",
      ].map(anthropic),
      ...["gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5", "o3"].map((id) => getModel("openai", id)),
      ...["gemini-3-pro-preview", "gemini-2.5-pro"].map((id) => getModel("google", id)),
    ]) {
      expect(supportedThinkingLevels(m).includes("xhigh"), m.id).toBe(withXhigh.includes(m.id));
    }
  });
});

describe("Anthropic thinking parameters", () => {
  it("detects adaptive thinking from the model id, including dated and prefixed ids", () => {
    expect(usesAdaptiveThinking({ id: "claude-opus-4-6" })).toBe(true);
    expect(usesAdaptiveThinking({ id: "claude-sonnet-4-6-20260217" })).toBe(true);
    expect(usesAdaptiveThinking({ id: "anthropic.claude-opus-4-7" })).toBe(true);
    expect(usesAdaptiveThinking({ id: "claude-opus-4-5-20251101" })).toBe(false);
    expect(usesAdaptiveThinking({ id: "claude-sonnet-4-20250514" })).toBe(false);
    expect(usesAdaptiveThinking({ id: "claude-haiku-4-5" })).toBe(false);
    expect(usesAdaptiveThinking({ id: "gpt-5.2" })).toBe(false);
  });

  it.each<[string, ThinkingLevel, unknown]>([
    ["claude-sonnet-4-5", "off", { maxTokens: 4000 }],
    ["claude-sonnet-4-5", "low", { maxTokens: 6048, thinking: { type: "enabled", budget_tokens: 2048 } }],
    ["claude-sonnet-4-5", "xhigh", { maxTokens: 20384, thinking: { type: "enabled", budget_tokens: 16384 } }],
    ["claude-opus-4-6", "minimal", { maxTokens: 5024, thinking: { type: "adaptive" }, effort: "low" }],
    ["claude-opus-4-6", "medium", { maxTokens: 12192, thinking: { type: "adaptive" }, effort: "medium" }],
    ["claude-opus-4-6", "xhigh", { maxTokens: 36768, thinking: { type: "adaptive" }, effort: "max" }],
    ["claude-opus-4-7", "xhigh", { maxTokens: 36768, thinking: { type: "adaptive" }, effort: "xhigh" }],
    ["claude-opus-4-7", "off", { maxTokens: 4000 }],
  ])("%s at %s", (id, level, expected) => {
    expect(anthropicThinkingParams(anthropic(id), level, 4000)).toEqual(expected);
  });

  it("keeps the budget inside the model's output limit and leaves room for the answer", () => {
    const small = { ...anthropic("claude-haiku-4-5"), maxTokens: 10_000 };
    const params = anthropicThinkingParams(small, "high");
    expect(params.maxTokens).toBe(10_000);
    expect(params.thinking).toEqual({ type: "enabled", budget_tokens: 10_000 - 1024 });
    expect(thinkingTokenBudget(small, "high", 2000)).toEqual({ maxTokens: 10_000, budgetTokens: 8976 });
  });
});

describe("OpenAI reasoning effort", () => {
  it.each<[string, ThinkingLevel | undefined, string | undefined]>([
    ["gpt-5.2", "off", "none"],
    ["gpt-5.2", undefined, "none"],
    ["gpt-5.2", "minimal", "none"],
    ["gpt-5.2", "xhigh", "xhigh"],
    ["gpt-5.1", "xhigh", "high"],
    ["gpt-5", "off", "minimal"],
    ["o4-mini", "off", "low"],
    ["gpt-4.1", "high", undefined],
  ])("%s at %s → %s", (id, level, expected) => {
    expect(openaiReasoningEffort(getModel("openai", id), level)).toBe(expected);
  });

  it("sends nothing for off on a local reasoning model", () => {
    const local = defineOpenAICompatibleModel({
      id: "qwen3:8b",
      baseUrl: "http://localhost:11434/v1",
      reasoning: true,
    });
    expect(openaiReasoningEffort(local, "off")).toBeUndefined();
    expect(openaiReasoningEffort(local, "high")).toBe("high");
  });
});

describe("Google thinking config", () => {
  it.each<[string, ThinkingLevel, unknown]>([
    ["gemini-2.5-flash", "off", { maxTokens: 4000, thinkingConfig: { thinkingBudget: 0 } }],
    [
      "gemini-2.5-flash",
      "high",
      { maxTokens: 20384, thinkingConfig: { includeThoughts: true, thinkingBudget: 16384 } },
    ],
    [
      "gemini-2.5-pro",
      "off",
      { maxTokens: 5024, thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
    ],
    [
      "gemini-3-pro-preview",
      "high",
      { maxTokens: 20384, thinkingConfig: { includeThoughts: true, thinkingLevel: "HIGH" } },
    ],
    [
      "gemini-3-flash-preview",
      "minimal",
      { maxTokens: 5024, thinkingConfig: { includeThoughts: true, thinkingLevel: "MINIMAL" } },
    ],
  ])("%s at %s", (id, level, expected) => {
    expect(googleThinkingParams(getModel("google", id), level, 4000)).toEqual(expected);
  });

  it("caps the Gemini 2.5 budget at what the model accepts", () => {
    const flash = getModel("google", "gemini-2.5-flash");
    const big = { minimal: 1024, low: 2048, medium: 8192, high: 60_000, xhigh: 60_000 };
    expect(googleThinkingParams(flash, "high", 4000, big).thinkingConfig?.thinkingBudget).toBe(24_576);
  });

  it("sends no thinking config for a model without reasoning", () => {
    const plain = { ...getModel("google", "gemini-2.5-flash"), reasoning: false };
    expect(googleThinkingParams(plain, "high", 4000)).toEqual({ maxTokens: 4000 });
  });
});
