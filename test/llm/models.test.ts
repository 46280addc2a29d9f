import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  closeModelMatches,
  defineOpenAICompatibleModel,
  findModel,
  getEnvApiKey,
  getModel,
  hasCredentials,
  LOCAL_SERVER_COMPAT,
  listModels,
  registerModel,
  resetRegisteredModels,
  resolveOpenAICompat,
  setProviderApiKeyEnv,
} from "../../src/agent/llm/models.js";
import { openAICompletionsProvider } from "../../src/agent/llm/providers/openai-completions.js";
import type { Model, Usage } from "../../src/agent/llm/types.js";
import { calculateCost, emptyUsage } from "../../src/agent/llm/usage.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";

afterEach(() => {
  resetRegisteredModels();
  vi.unstubAllEnvs();
});

describe("the built-in catalogue", () => {
  it("has current models of all three vendors with their wire API and endpoint", () => {
    const expected = {
      anthropic: ["anthropic-messages", "https://api.anthropic.com"],
      openai: ["openai-responses", "https://api.openai.com/v1"],
      google: ["google-generative-ai", "https://generativelanguage.googleapis.com/v1beta"],
    } as const;
    for (const [provider, [api, baseUrl]] of Object.entries(expected)) {
      const models = listModels(provider);
      expect(models.length, provider).toBeGreaterThanOrEqual(5);
      for (const m of models) {
        expect(m.api).toBe(api);
        expect(m.baseUrl).toBe(baseUrl);
        expect(m.contextWindow).toBeGreaterThanOrEqual(128_000);
        expect(m.maxTokens).toBeGreaterThan(0);
        expect(m.maxTokens).toBeLessThanOrEqual(m.contextWindow);
        expect(m.cost.input).toBeGreaterThan(0);
        expect(m.cost.output).toBeGreaterThan(m.cost.input);
        expect(m.cost.cacheRead).toBeLessThan(m.cost.input);
        expect(m.input).toContain("text");
        if (!m.reasoning) expect(m.thinkingLevels).toBeUndefined();
      }
    }
    expect(getModel("anthropic", "claude-sonnet-4-5")).toMatchObject({
      contextWindow: 200_000,
      reasoning: true,
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    });
  });

  it("lists every model once, and only the asked provider's", () => {
    const all = listModels();
    const keys = all.map((m) => `${m.provider}/${m.id}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(listModels("google").every((m) => m.provider === "google")).toBe(true);
    expect(listModels("nobody")).toEqual([]);
  });
});

describe("looking models up", () => {
  it("names close matches when a model is unknown", () => {
    expect(() => getModel("anthropic", "claude-opus-4")).toThrow(
      /Unknown model "anthropic\/claude-opus-4"\. Did you mean: .*anthropic\/claude-opus-4-5/,
    );
    expect(() => getModel("openai", "gpt5.2")).toThrow(/openai\/gpt-5\.2/);
    expect(() => getModel("openai", "zzzzzzzzzzzzzzzz")).toThrow(/listModels\("openai"\)/);
    expect(closeModelMatches("gemini-flash")).toContain("google/gemini-2.5-flash");
  });

  it("finds by provider/id or by bare id, and undefined when unknown", () => {
    expect(findModel("openai/gpt-5.2")?.id).toBe("gpt-5.2");
    expect(findModel("gemini-2.5-pro")?.provider).toBe("google");
    expect(findModel(" claude-haiku-4-5 ")?.provider).toBe("anthropic");
    expect(findModel("openai/claude-haiku-4-5")).toBeUndefined();
    expect(findModel("nope")).toBeUndefined();
  });

  it("finds registered ids that contain a slash", () => {
    registerModel(
      defineOpenAICompatibleModel({
        id: "anthropic/claude-sonnet-4.5",
        provider: "openrouter",
        baseUrl: "https://openrouter.ai/api/v1",
      }),
    );
    expect(findModel("openrouter/anthropic/claude-sonnet-4.5")?.provider).toBe("openrouter");
    expect(findModel("anthropic/claude-sonnet-4.5")?.provider).toBe("openrouter");
  });

  it("lets a registered model replace a built-in one, and refuses a broken definition", () => {
    const cheaper: Model = {
      ...getModel("openai", "gpt-5"),
      cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    };
    registerModel(cheaper);
    expect(getModel("openai", "gpt-5").cost.input).toBe(1);
    expect(listModels("openai").filter((m) => m.id === "gpt-5")).toHaveLength(1);
    resetRegisteredModels();
    expect(getModel("openai", "gpt-5").cost.input).toBe(1.25);

    expect(() => registerModel({ ...cheaper, id: "x", contextWindow: 0, baseUrl: "localhost:1234" })).toThrow(
      /Cannot register model "openai\/x": contextWindow must be a positive number; baseUrl "localhost:1234" must start with http/,
    );
  });
});

describe("API keys", () => {
  it("reads each vendor's variable, with GOOGLE_API_KEY as Gemini's fallback", () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-1");
    vi.stubEnv("OPENAI_API_KEY", " sk-2 ");
    vi.stubEnv("GEMINI_API_KEY", "");
    vi.stubEnv("GOOGLE_API_KEY", "AIza-3");
    expect(getEnvApiKey("anthropic")).toBe("sk-ant-1");
    expect(getEnvApiKey("openai")).toBe("sk-2");
    expect(getEnvApiKey("google")).toBe("AIza-3");
    vi.stubEnv("GEMINI_API_KEY", "AIza-gemini");
    expect(getEnvApiKey("google")).toBe("AIza-gemini");
    expect(getEnvApiKey("ollama")).toBeUndefined();
  });

  it("says which models can be called now", () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    vi.stubEnv("OPENAI_API_KEY", "sk-live");
    const claude = getModel("anthropic", "claude-haiku-4-5");
    expect(hasCredentials(claude)).toBe(false);
    expect(hasCredentials(claude, (p) => (p === "anthropic" ? "sk-from-store" : undefined))).toBe(true);
    expect(hasCredentials(getModel("openai", "gpt-5"))).toBe(true);

    const local = defineOpenAICompatibleModel({
      id: "llama3.2",
      baseUrl: "http://127.0.0.1:11434/v1",
      provider: "ollama",
    });
    expect(hasCredentials(local)).toBe(true);
    const hosted = defineOpenAICompatibleModel({
      id: "m",
      baseUrl: "https://api.together.xyz/v1",
      provider: "together",
    });
    expect(hasCredentials(hosted)).toBe(false);
    setProviderApiKeyEnv("together", ["TOGETHER_API_KEY"]);
    vi.stubEnv("TOGETHER_API_KEY", "tg-key");
    expect(hasCredentials(hosted)).toBe(true);
    expect(getEnvApiKey("together")).toBe("tg-key");
    setProviderApiKeyEnv("vllm-lan", []);
    const lan = defineOpenAICompatibleModel({
      id: "qwen",
      baseUrl: "http://10.0.0.5:8000/v1",
      provider: "vllm-lan",
    });
    expect(hasCredentials(lan)).toBe(true);
  });
});

describe("custom OpenAI-compatible models", () => {
  it("fills in local-server defaults and detects OpenAI's own settings", () => {
    const local = defineOpenAICompatibleModel({
      id: "qwen3:8b",
      baseUrl: "http://localhost:11434/v1/",
      provider: "ollama",
    });
    expect(local).toMatchObject({
      id: "qwen3:8b",
      name: "qwen3:8b",
      api: "openai-completions",
      provider: "ollama",
      baseUrl: "http://localhost:11434/v1",
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    });
    expect(resolveOpenAICompat(local)).toEqual(LOCAL_SERVER_COMPAT);

    const vllm = defineOpenAICompatibleModel({
      id: "deepseek-r1",
      baseUrl: "http://gpu:8000/v1",
      reasoning: true,
      compat: { supportsReasoningEffort: true, supportsUsageInStreaming: false },
    });
    expect(resolveOpenAICompat(vllm)).toMatchObject({
      maxTokensField: "max_tokens",
      supportsReasoningEffort: true,
      supportsUsageInStreaming: false,
    });

    const openai = { ...getModel("openai", "gpt-5.2"), api: "openai-completions" };
    expect(resolveOpenAICompat(openai)).toEqual({
      maxTokensField: "max_completion_tokens",
      supportsReasoningEffort: true,
      supportsDeveloperRole: true,
      supportsUsageInStreaming: true,
      supportsStreamOptions: true,
    });
    expect(resolveOpenAICompat(getModel("openai", "gpt-4.1")).supportsReasoningEffort).toBe(false);
  });

  describe("against a fake local server", () => {
    let llm: FakeLlmServer;
    beforeAll(async () => {
      llm = await startFakeLlmServer();
    });
    afterAll(async () => {
      await llm.close();
    });

    it("streams from a keyless local model with its compat settings and prices the usage", async () => {
      const local = defineOpenAICompatibleModel({
        id: "qwen3:8b",
        baseUrl: llm.baseUrl("openai-completions"),
        provider: "ollama",
        cost: { input: 0.1, output: 0.2 },
      });
      registerModel(local);
      llm.enqueue("openai-completions", { text: "hi from qwen", usage: { input: 100, output: 10 } });
      const model = getModel("ollama", "qwen3:8b") as Model<"openai-completions">;
      const message = await openAICompletionsProvider
        .streamSimple(
          model,
          { systemPrompt: "sys", messages: [{ role: "user", content: "hi", timestamp: 1 }] },
          { maxTokens: 256 },
        )
        .result();

      expect(message.stopReason).toBe("stop");
      expect(message.content).toEqual([{ type: "text", text: "hi from qwen" }]);
      const request = llm.requests[0];
      expect(request?.headers.authorization).toBeUndefined();
      expect(request?.body).toMatchObject({
        model: "qwen3:8b",
        max_tokens: 256,
        stream_options: { include_usage: true },
      });
      expect(request?.body).not.toHaveProperty("max_completion_tokens");
      expect(request?.body).not.toHaveProperty("reasoning_effort");
      expect(request?.body.messages).toMatchObject([{ role: "system", content: "sys" }, { role: "user" }]);
      expect(message.usage.cost.total).toBeCloseTo((100 * 0.1 + 10 * 0.2) / 1_000_000, 12);
    });
  });
});

describe("cost from usage", () => {
  it("prices every token kind at the catalogue rate", () => {
    const usage: Usage = {
      ...emptyUsage(),
      input: 2_000_000,
      output: 1_000_000,
      cacheRead: 4_000_000,
      cacheWrite: 1_000_000,
    };
    const cost = calculateCost(getModel("anthropic", "claude-opus-4-6"), usage);
    expect(cost).toEqual({ input: 10, output: 25, cacheRead: 2, cacheWrite: 6.25, total: 43.25 });
  });
});
