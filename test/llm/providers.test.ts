/**
 * Every built-in wire API runs the provider contract (test/llm/provider-contract.ts); each file
 * `test/llm/<api>.test.ts` keeps only what is specific to its wire.
 */
import { getModel } from "../../src/agent/llm/models.js";
import { anthropicProvider } from "../../src/agent/llm/providers/anthropic.js";
import { googleProvider } from "../../src/agent/llm/providers/google.js";
import { openAICompletionsProvider } from "../../src/agent/llm/providers/openai-completions.js";
import { openaiResponsesProvider } from "../../src/agent/llm/providers/openai-responses.js";
import type { ApiProvider, StreamOptions } from "../../src/agent/llm/types.js";
import type { FakeApi } from "../fakes/llm-server.js";
import { providerContract } from "./provider-contract.js";

const asProvider = (p: unknown) => p as ApiProvider<FakeApi, StreamOptions>;

providerContract({
  api: "anthropic-messages",
  provider: asProvider(anthropicProvider),
  name: "Anthropic",
  model: (baseUrl) => ({ ...getModel("anthropic", "claude-sonnet-4-5"), baseUrl }),
  remoteBaseUrl: "https://api.anthropic.com",
  keyEnv: ["ANTHROPIC_API_KEY"],
  refusal: /^Anthropic stopped the response: the model refused to continue \(stop_reason: refusal\)$/,
  outputLimitOf: (body) => body.max_tokens,
  overflow: {
    status: 400,
    code: "invalid_request_error",
    message: "prompt is too long: 215000 tokens > 200000 maximum",
  },
});

providerContract({
  api: "openai-completions",
  provider: asProvider(openAICompletionsProvider),
  name: "OpenAI",
  model: (baseUrl) => ({ ...getModel("openai", "gpt-5-mini"), api: "openai-completions", baseUrl }),
  remoteBaseUrl: "https://api.openai.com/v1",
  keyEnv: ["OPENAI_API_KEY"],
  refusal: /^OpenAI stopped the response: content filter \(finish_reason: content_filter\)$/,
  outputLimitOf: (body) => body.max_completion_tokens,
  overflow: {
    status: 400,
    code: "context_length_exceeded",
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.",
  },
});

providerContract({
  api: "openai-responses",
  provider: asProvider(openaiResponsesProvider),
  name: "OpenAI",
  model: (baseUrl) => ({ ...getModel("openai", "gpt-5.2"), baseUrl }),
  remoteBaseUrl: "https://api.openai.com/v1",
  keyEnv: ["OPENAI_API_KEY"],
  refusal: /^OpenAI .*content_filter/,
  outputLimitOf: (body) => body.max_output_tokens,
  overflow: {
    status: 400,
    code: "context_length_exceeded",
    message: "Your input exceeds the context window of this model.",
  },
});

providerContract({
  api: "google-generative-ai",
  provider: asProvider(googleProvider),
  name: "Google",
  model: (baseUrl) => ({ ...getModel("google", "gemini-2.5-flash"), baseUrl }),
  remoteBaseUrl: "https://generativelanguage.googleapis.com/v1beta",
  keyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  refusal: /^Google .*SAFETY/,
  outputLimitOf: (body) =>
    (body.generationConfig as { maxOutputTokens?: number } | undefined)?.maxOutputTokens,
  overflow: {
    status: 400,
    message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
  },
});
