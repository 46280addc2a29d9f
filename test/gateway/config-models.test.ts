import { afterEach, describe, expect, it } from "vitest";
import {
  findModel,
  registerModels,
  requiresApiKey,
  resetRegisteredModels,
} from "../../src/agent/llm/models.js";
import { customModelToModel, formatIssue, parseConfigText } from "../../src/gateway/config/index.js";

afterEach(() => resetRegisteredModels());

describe("custom models from config", () => {
  it("become engine models the catalogue accepts and finds by provider/id", () => {
    const r = parseConfigText(
      [
        "models:",
        "  default: ollama/llama3.1:8b",
        "  custom:",
        "    - provider: ollama",
        "      id: llama3.1:8b",
        "      api: openai-completions",
        "      baseUrl: http://127.0.0.1:11434/v1",
        "      compat: { maxTokensField: max_tokens, supportsDeveloperRole: false }",
        "    - provider: proxy",
        "      id: big-model",
        "      name: Big Model",
        "      api: anthropic-messages",
        "      baseUrl: https://llm.example.com",
        "      apiKeyEnv: PROXY_KEY",
        "      reasoning: true",
        "      thinkingLevels: [off, low, high]",
        "      input: [text, image]",
        "      cost: { input: 3, output: 15 }",
      ].join("\n"),
      { env: {}, baseDir: "/srv/sb" },
    );
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    const models = r.config.models.custom.map(customModelToModel);
    registerModels(models);
    const local = findModel(r.config.models.default as string);
    expect(local).toEqual({
      id: "llama3.1:8b",
      name: "llama3.1:8b",
      api: "openai-completions",
      provider: "ollama",
      baseUrl: "http://127.0.0.1:11434/v1",
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 128000,
      maxTokens: 8192,
      compat: { maxTokensField: "max_tokens", supportsDeveloperRole: false },
    });
    expect(local && requiresApiKey(local)).toBe(false);
    expect(findModel("proxy/big-model")).toMatchObject({
      name: "Big Model",
      reasoning: true,
      thinkingLevels: ["off", "low", "high"],
      input: ["text", "image"],
      cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 },
    });
  });
});
