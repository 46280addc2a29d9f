/**
 * From the `models.custom` config entries to the engine's `Model` shape, for the wiring code to
 * register (`registerModels(config.models.custom.map(customModelToModel))`) together with each
 * provider's key variable (`setProviderApiKeyEnv(m.provider, m.apiKeyEnv ? [m.apiKeyEnv] : [])`).
 */
import type { Model } from "../../agent/llm/types.js";
import type { CustomModelConfig } from "./types.js";

/** The `Model` a custom model entry describes; unset optional fields stay absent. */
export function customModelToModel(c: CustomModelConfig): Model {
  const model: Model = {
    id: c.id,
    name: c.name ?? c.id,
    api: c.api,
    provider: c.provider,
    reasoning: c.reasoning,
    input: [...c.input],
    cost: { ...c.cost },
    contextWindow: c.contextWindow,
    maxTokens: c.maxTokens,
  };
  if (c.baseUrl !== undefined) model.baseUrl = c.baseUrl;
  if (c.thinkingLevels !== undefined) model.thinkingLevels = [...c.thinkingLevels];
  if (c.headers !== undefined) model.headers = { ...c.headers };
  if (c.compat !== undefined) model.compat = { ...c.compat };
  return model;
}
