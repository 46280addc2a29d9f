/**
 * Built-in models: plain data, read by `models.ts`.
 *
 * Prices are US dollars per million tokens at the standard (non-batch, short-prompt) tier. They
 * were checked in November 2026 against copies of the vendors' pricing and model pages (Anthropic
 * "Pricing", OpenAI "API pricing", Google "Gemini API pricing") and model-gateway listings dated
 * early to mid 2026, not against the live pages, and some (Gemini cache reads, GPT-5 mini/nano)
 * come from memory of those pages. Newer generations (Claude 5.x, GPT-5.5, Gemini 3.5) exist and
 * are not listed here; register them with `registerModel`. Check the vendor page before relying on
 * a cost figure. Long-prompt surcharges (OpenAI
 * GPT-5.4 above 272K, Gemini Pro above 200K input tokens) are not modelled: costs of such requests
 * come out low. Google's context-cache storage is billed per hour, not per written token, so
 * Google `cacheWrite` is 0; OpenAI does not charge cache writes.
 *
 * `thinkingLevels` lists what each model accepts: `xhigh` only where the API has a level above
 * `high`; no `off` where reasoning cannot be disabled (o-series, GPT-5, Gemini 2.5 Pro, Gemini 3).
 */
import type { Model, ThinkingLevel } from "./types.js";

const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
const OPENAI_BASE_URL = "https://api.openai.com/v1";
const GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com/v1beta";

const ALL_LEVELS: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
const UP_TO_HIGH: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high"];

function anthropic(
  id: string,
  name: string,
  spec: Pick<Model, "contextWindow" | "maxTokens" | "cost"> & { levels: ThinkingLevel[] },
): Model<"anthropic-messages"> {
  return {
    id,
    name,
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: ANTHROPIC_BASE_URL,
    reasoning: true,
    thinkingLevels: spec.levels,
    input: ["text", "image"],
    cost: spec.cost,
    contextWindow: spec.contextWindow,
    maxTokens: spec.maxTokens,
  };
}

function openai(
  id: string,
  name: string,
  spec: Pick<Model, "contextWindow" | "maxTokens"> & {
    price: [input: number, output: number, cacheRead: number];
    levels?: ThinkingLevel[];
  },
): Model<"openai-responses"> {
  const [input, output, cacheRead] = spec.price;
  return {
    id,
    name,
    api: "openai-responses",
    provider: "openai",
    baseUrl: OPENAI_BASE_URL,
    reasoning: spec.levels !== undefined,
    ...(spec.levels ? { thinkingLevels: spec.levels } : {}),
    input: ["text", "image"],
    cost: { input, output, cacheRead, cacheWrite: 0 },
    contextWindow: spec.contextWindow,
    maxTokens: spec.maxTokens,
  };
}

function google(
  id: string,
  name: string,
  spec: { price: [input: number, output: number, cacheRead: number]; levels: ThinkingLevel[] },
): Model<"google-generative-ai"> {
  const [input, output, cacheRead] = spec.price;
  return {
    id,
    name,
    api: "google-generative-ai",
    provider: "google",
    baseUrl: GOOGLE_BASE_URL,
    reasoning: true,
    thinkingLevels: spec.levels,
    input: ["text", "image"],
    cost: { input, output, cacheRead, cacheWrite: 0 },
    contextWindow: 1_048_576,
    maxTokens: 65_536,
  };
}

const OPUS_PRICE = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };
const SONNET_PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** Every built-in model, newest first within each vendor. */
export const BUILT_IN_MODELS: readonly Model[] = [
  // Anthropic. 4.6 and later use adaptive thinking with effort (xhigh → "max" on 4.6, "xhigh" on 4.7);
  // 4.5 models use a thinking budget. 4.6 models are listed at their standard 200K window.
  anthropic("claude-opus-4-7", "Claude Opus 4.7", {
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    cost: OPUS_PRICE,
    levels: ALL_LEVELS,
  }),
  anthropic("claude-opus-4-6", "Claude Opus 4.6", {
    contextWindow: 200_000,
    maxTokens: 128_000,
    cost: OPUS_PRICE,
    levels: ALL_LEVELS,
  }),
  anthropic("claude-sonnet-4-6", "Claude Sonnet 4.6", {
    contextWindow: 200_000,
    maxTokens: 64_000,
    cost: SONNET_PRICE,
    levels: ALL_LEVELS,
  }),
  anthropic("claude-opus-4-5", "Claude Opus 4.5", {
    contextWindow: 200_000,
    maxTokens: 64_000,
    cost: OPUS_PRICE,
    levels: UP_TO_HIGH,
  }),
  anthropic("claude-sonnet-4-5", "Claude Sonnet 4.5", {
    contextWindow: 200_000,
    maxTokens: 64_000,
    cost: SONNET_PRICE,
    levels: UP_TO_HIGH,
  }),
  anthropic("claude-haiku-4-5", "Claude Haiku 4.5", {
    contextWindow: 200_000,
    maxTokens: 64_000,
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    levels: UP_TO_HIGH,
  }),

  // OpenAI, over the Responses API. GPT-5.1 and later accept effort "none" (our "off").
  openai("gpt-5.4", "GPT-5.4", {
    contextWindow: 1_050_000,
    maxTokens: 128_000,
    price: [2.5, 15, 0.25],
    levels: ["off", "low", "medium", "high", "xhigh"],
  }),
  openai("gpt-5.2", "GPT-5.2", {
    contextWindow: 400_000,
    maxTokens: 128_000,
    price: [1.75, 14, 0.175],
    levels: ["off", "low", "medium", "high", "xhigh"],
  }),
  openai("gpt-5.1", "GPT-5.1", {
    contextWindow: 400_000,
    maxTokens: 128_000,
    price: [1.25, 10, 0.125],
    levels: ["off", "low", "medium", "high"],
  }),
  openai("gpt-5", "GPT-5", {
    contextWindow: 400_000,
    maxTokens: 128_000,
    price: [1.25, 10, 0.125],
    levels: ["minimal", "low", "medium", "high"],
  }),
  openai("gpt-5-mini", "GPT-5 mini", {
    contextWindow: 400_000,
    maxTokens: 128_000,
    price: [0.25, 2, 0.025],
    levels: ["minimal", "low", "medium", "high"],
  }),
  openai("gpt-5-nano", "GPT-5 nano", {
    contextWindow: 400_000,
    maxTokens: 128_000,
    price: [0.05, 0.4, 0.005],
    levels: ["minimal", "low", "medium", "high"],
  }),
  openai("o3", "o3", {
    contextWindow: 200_000,
    maxTokens: 100_000,
    price: [2, 8, 0.5],
    levels: ["low", "medium", "high"],
  }),
  openai("o4-mini", "o4-mini", {
    contextWindow: 200_000,
    maxTokens: 100_000,
    price: [1.1, 4.4, 0.275],
    levels: ["low", "medium", "high"],
  }),
  openai("gpt-4.1", "GPT-4.1", { contextWindow: 1_047_576, maxTokens: 32_768, price: [2, 8, 0.5] }),
  openai("gpt-4.1-mini", "GPT-4.1 mini", {
    contextWindow: 1_047_576,
    maxTokens: 32_768,
    price: [0.4, 1.6, 0.1],
  }),

  // Google. Gemini 3 takes thinkingLevel (Pro: low/high, 3.1 Pro adds medium, Flash from minimal);
  // Gemini 2.5 takes thinkingBudget (Pro cannot turn thinking off).
  google("gemini-3.1-pro-preview", "Gemini 3.1 Pro (preview)", {
    price: [2, 12, 0.2],
    levels: ["low", "medium", "high"],
  }),
  google("gemini-3-pro-preview", "Gemini 3 Pro (preview)", { price: [2, 12, 0.2], levels: ["low", "high"] }),
  google("gemini-3-flash-preview", "Gemini 3 Flash (preview)", {
    price: [0.5, 3, 0.05],
    levels: ["minimal", "low", "medium", "high"],
  }),
  google("gemini-2.5-pro", "Gemini 2.5 Pro", {
    price: [1.25, 10, 0.125],
    levels: ["minimal", "low", "medium", "high"],
  }),
  google("gemini-2.5-flash", "Gemini 2.5 Flash", { price: [0.3, 2.5, 0.03], levels: UP_TO_HIGH }),
  google("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", { price: [0.1, 0.4, 0.01], levels: UP_TO_HIGH }),
];
