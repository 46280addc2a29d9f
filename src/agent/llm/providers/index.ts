import { registerApiProvider } from "../registry.js";
import { anthropicProvider } from "./anthropic.js";
import { googleProvider } from "./google.js";
import { openAICompletionsProvider } from "./openai-completions.js";
import { openaiResponsesProvider } from "./openai-responses.js";

export { anthropicProvider, googleProvider, openAICompletionsProvider, openaiResponsesProvider };

/** Source id of the built-in registrations, so they can be told apart from extensions' providers. */
export const BUILT_IN_PROVIDER_SOURCE = "builtin";

/**
 * Registers the four built-in wire APIs (`anthropic-messages`, `openai-completions`,
 * `openai-responses`, `google-generative-ai`). Idempotent; a provider an extension registered
 * later for the same api replaces the built-in one.
 */
export function registerBuiltInApiProviders(): void {
  registerApiProvider(anthropicProvider, BUILT_IN_PROVIDER_SOURCE);
  registerApiProvider(openAICompletionsProvider, BUILT_IN_PROVIDER_SOURCE);
  registerApiProvider(openaiResponsesProvider, BUILT_IN_PROVIDER_SOURCE);
  registerApiProvider(googleProvider, BUILT_IN_PROVIDER_SOURCE);
}
