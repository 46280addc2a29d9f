/**
 * Models at start: the built-in wire APIs registered, custom models from config added to the
 * catalogue with the variable their key comes from, and the default model decided (the configured
 * one, else the first model that has credentials here).
 */
import {
  findModel,
  hasCredentials,
  listModels,
  registerModels,
  setProviderApiKeyEnv,
} from "../../agent/llm/models.js";
import { registerBuiltInApiProviders } from "../../agent/llm/providers/index.js";
import type { Model } from "../../agent/llm/types.js";
import { customModelToModel } from "../config/models.js";
import type { ModelsConfig } from "../config/types.js";

/** `provider/id`. */
export function modelRefOf(model: Pick<Model, "provider" | "id">): string {
  return `${model.provider}/${model.id}`;
}

/**
 * Registers the providers and custom models, and returns the default model (undefined when no
 * model has credentials and none is configured). Throws when `models.default` names a model the
 * catalogue does not have.
 */
export function setUpModels(config: ModelsConfig): Model | undefined {
  registerBuiltInApiProviders();
  const custom = config.custom.map(customModelToModel);
  for (const c of config.custom) setProviderApiKeyEnv(c.provider, c.apiKeyEnv ? [c.apiKeyEnv] : []);
  registerModels(custom);
  if (config.default) {
    const model = findModel(config.default);
    if (!model) {
      throw new Error(
        `models.default is "${config.default}", which is not a known model. ` +
          "Use provider/id of a built-in model (docs/providers.md) or add it under models.custom.",
      );
    }
    return model;
  }
  return custom.find((m) => hasCredentials(m)) ?? listModels().find((m) => hasCredentials(m));
}

/** The text shown when a thread has no usable model. */
export const NO_MODEL_TEXT =
  "No model is set up: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or configure a local " +
  "model under models.custom (docs/configuration.md), then restart Switchboard.";

/**
 * A stand-in for threads when no model has credentials: every request to it fails with
 * `NO_MODEL_TEXT`, which the renderer shows in the chat, so a fresh install says what to do.
 */
export const NO_MODEL: Model = {
  id: "none",
  name: "No model configured",
  api: "openai-completions",
  provider: "none",
  baseUrl: "http://127.0.0.1:9",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128_000,
  maxTokens: 4096,
};
