/**
 * The LLM layer: one streaming protocol, a registry of wire APIs, the built-in providers, the
 * model catalogue and the functions that dispatch on `model.api`. Import from here, not from
 * individual files.
 */
export { AssistantMessageEventStream, EventStream } from "./event-stream.js";
export {
  closeModelMatches,
  defineOpenAICompatibleModel,
  envKeyNames,
  findModel,
  getEnvApiKey,
  getModel,
  hasCredentials,
  LOCAL_SERVER_COMPAT,
  listModels,
  type OpenAICompatibleModelDefinition,
  registerModel,
  registerModels,
  requiresApiKey,
  resolveOpenAICompat,
  setProviderApiKeyEnv,
  unregisterModel,
} from "./models.js";
export { isContextOverflow } from "./overflow.js";
export {
  anthropicProvider,
  BUILT_IN_PROVIDER_SOURCE,
  googleProvider,
  openAICompletionsProvider,
  openaiResponsesProvider,
  registerBuiltInApiProviders,
} from "./providers/index.js";
export { getApiProvider, listApiProviders, registerApiProvider, unregisterApiProviders } from "./registry.js";
export { complete, stream, streamSimple } from "./stream.js";
export { clampThinkingLevel, supportedThinkingLevels } from "./thinking.js";
export { MISSING_TOOL_RESULT_TEXT, transformMessages } from "./transform-messages.js";
export type * from "./types.js";
export { THINKING_LEVELS } from "./types.js";
export { calculateCost, createAssistantMessage, emptyUsage } from "./usage.js";
