/**
 * Small pieces every provider needs before it sends a request.
 *
 * ```ts
 * const apiKey = resolveApiKey(model, options?.apiKey, "OpenAI");   // throws ProviderError when missing
 * const url = endpointUrl(model.baseUrl ?? "https://api.openai.com/v1", "/chat/completions");
 * const headers = mergeHeaders({ "content-type": "application/json" }, model.headers, options?.headers);
 * ```
 * Call these inside the `runProviderStream` body so a missing key becomes an `error` event.
 */
import { envKeyNames, getEnvApiKey, requiresApiKey } from "../../models.js";
import type { Model } from "../../types.js";
import { ProviderError } from "./http.js";

/**
 * The API key for `model`: `explicit` when given, else the provider's environment variable
 * (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, or what `setProviderApiKeyEnv` set).
 * Undefined for keyless providers and servers on this machine. Throws a `ProviderError` saying
 * which variable to set when a key is required and missing.
 */
export function resolveApiKey(
  model: Model,
  explicit: string | undefined,
  providerName: string,
): string | undefined {
  if (explicit !== undefined && explicit.trim() !== "") return explicit.trim();
  const fromEnv = getEnvApiKey(model.provider);
  if (fromEnv !== undefined) return fromEnv;
  if (!requiresApiKey(model)) return undefined;
  const names = envKeyNames(model.provider);
  const hint =
    names.length > 0 ? `set ${names.join(" or ")}` : `configure an API key for provider "${model.provider}"`;
  throw new ProviderError(`No API key for ${providerName} (model ${model.id}): ${hint}, or pass apiKey.`);
}

/** `base` without trailing slashes, plus `path` (which starts with `/`). */
export function endpointUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/** Later header sets override earlier ones, case-insensitively; names come out lower-cased. */
export function mergeHeaders(...sets: (Record<string, string> | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const set of sets) {
    if (!set) continue;
    for (const [name, value] of Object.entries(set)) out[name.toLowerCase()] = value;
  }
  return out;
}
