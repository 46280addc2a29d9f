/**
 * The model catalogue: built-in models (`model-catalog.ts`), models registered at run time
 * (custom models from config, extensions), API keys from the environment, and helpers for
 * OpenAI-compatible servers (Ollama, vLLM, LM Studio, proxies).
 */
import { BUILT_IN_MODELS } from "./model-catalog.js";
import type { Api, Model, OpenAICompat, Provider } from "./types.js";

const registered = new Map<string, Model>();
const providerEnvKeys = new Map<string, string[]>([
  ["anthropic", ["ANTHROPIC_API_KEY"]],
  ["openai", ["OPENAI_API_KEY"]],
  ["google", ["GEMINI_API_KEY", "GOOGLE_API_KEY"]],
]);
const keylessProviders = new Set<string>();

function keyOf(provider: string, id: string): string {
  return `${provider}/${id}`;
}

function allModels(): Model[] {
  const byKey = new Map<string, Model>();
  for (const m of BUILT_IN_MODELS) byKey.set(keyOf(m.provider, m.id), m);
  for (const [key, m] of registered) byKey.set(key, m);
  return [...byKey.values()];
}

/** Every known model (built-in and registered), optionally only those of `provider`. */
export function listModels(provider?: Provider): Model[] {
  const models = allModels();
  return provider === undefined ? models : models.filter((m) => m.provider === provider);
}

/** Levenshtein distance, for "did you mean" hints (model refs here, config field names in the gateway). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * Up to `limit` known models whose `provider/id` resembles `ref`: ids containing it or contained
 * in it first, then by edit distance. Used for "did you mean" messages and `/model` completion.
 */
export function closeModelMatches(ref: string, limit = 5): string[] {
  const needle = ref.toLowerCase();
  const bareNeedle = needle.includes("/") ? needle.slice(needle.indexOf("/") + 1) : needle;
  const scored = allModels().map((m) => {
    const full = keyOf(m.provider, m.id).toLowerCase();
    const id = m.id.toLowerCase();
    const contains = id.includes(bareNeedle) || bareNeedle.includes(id) ? 0 : 1;
    const distance = Math.min(editDistance(needle, full), editDistance(bareNeedle, id));
    return { full: keyOf(m.provider, m.id), contains, distance };
  });
  const maxDistance = Math.max(3, Math.floor(bareNeedle.length / 2));
  return scored
    .filter((s) => s.contains === 0 || s.distance <= maxDistance)
    .sort((a, b) => a.contains - b.contains || a.distance - b.distance || a.full.localeCompare(b.full))
    .slice(0, limit)
    .map((s) => s.full);
}

/**
 * The model `id` of `provider`. Throws (a programmer or configuration error) when it is unknown,
 * naming close matches and how to add a custom model.
 */
export function getModel(provider: Provider, id: string): Model {
  const model =
    registered.get(keyOf(provider, id)) ??
    BUILT_IN_MODELS.find((m) => m.provider === provider && m.id === id);
  if (model) return model;
  const close = closeModelMatches(keyOf(provider, id));
  const hint = close.length > 0 ? ` Did you mean: ${close.join(", ")}?` : "";
  throw new Error(
    `Unknown model "${provider}/${id}".${hint} ` +
      `listModels(${JSON.stringify(provider)}) lists the known ones; add others with registerModel() or a custom model in config.`,
  );
}

/**
 * The model named by `ref`: `provider/id`, or a bare `id` (the first provider that has it, built-in
 * vendors first). An id that itself contains a slash (e.g. OpenRouter's `anthropic/claude-…`)
 * is tried as a bare id when the `provider/id` reading finds nothing. Undefined when unknown.
 */
export function findModel(ref: string): Model | undefined {
  const trimmed = ref.trim();
  const slash = trimmed.indexOf("/");
  if (slash > 0) {
    const provider = trimmed.slice(0, slash);
    const id = trimmed.slice(slash + 1);
    const hit = allModels().find((m) => m.provider === provider && m.id === id);
    if (hit) return hit;
  }
  return allModels().find((m) => m.id === trimmed);
}

/**
 * Adds a model, or replaces the known model with the same provider and id (registered models win
 * over built-in ones). Throws when the definition is unusable, saying which field is wrong.
 */
export function registerModel(model: Model): void {
  const problems: string[] = [];
  if (!model.id) problems.push("id is empty");
  if (!model.provider) problems.push("provider is empty");
  if (!model.api) problems.push("api is empty");
  if (!(model.contextWindow > 0)) problems.push("contextWindow must be a positive number");
  if (!(model.maxTokens > 0)) problems.push("maxTokens must be a positive number");
  for (const [k, v] of Object.entries(model.cost ?? {})) {
    if (!(typeof v === "number" && v >= 0)) problems.push(`cost.${k} must be a number >= 0`);
  }
  if (model.baseUrl !== undefined && !/^https?:\/\//.test(model.baseUrl)) {
    problems.push(`baseUrl "${model.baseUrl}" must start with http:// or https://`);
  }
  if (problems.length > 0) {
    throw new Error(`Cannot register model "${model.provider}/${model.id}": ${problems.join("; ")}.`);
  }
  registered.set(keyOf(model.provider, model.id), model);
}

/** `registerModel` for each of `models`. */
export function registerModels(models: readonly Model[]): void {
  for (const m of models) registerModel(m);
}

/** Removes a registered model (built-in models stay). Returns whether one was removed. */
export function unregisterModel(provider: Provider, id: string): boolean {
  return registered.delete(keyOf(provider, id));
}

/** Removes every registered model and custom provider key setting (for tests and config reloads). */
export function resetRegisteredModels(): void {
  registered.clear();
  keylessProviders.clear();
  for (const p of [...providerEnvKeys.keys()]) {
    if (p !== "anthropic" && p !== "openai" && p !== "google") providerEnvKeys.delete(p);
  }
}

/**
 * Sets where the API key of a custom `provider` comes from: the first of `envVars` that is set,
 * or no key at all when `envVars` is empty (local servers such as Ollama).
 */
export function setProviderApiKeyEnv(provider: Provider, envVars: readonly string[]): void {
  if (envVars.length === 0) {
    keylessProviders.add(provider);
    providerEnvKeys.delete(provider);
  } else {
    keylessProviders.delete(provider);
    providerEnvKeys.set(provider, [...envVars]);
  }
}

/** Environment variables that hold the API key of `provider`, in lookup order. */
export function envKeyNames(provider: Provider): string[] {
  return [...(providerEnvKeys.get(provider) ?? [])];
}

/**
 * The API key of `provider` from the environment: `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
 * `GEMINI_API_KEY` (then `GOOGLE_API_KEY`) for the built-in vendors, or the variables set with
 * `setProviderApiKeyEnv`. Empty values count as unset.
 */
export function getEnvApiKey(provider: Provider, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of providerEnvKeys.get(provider) ?? []) {
    const value = env[name];
    if (value !== undefined && value.trim() !== "") return value.trim();
  }
  return undefined;
}

function isLocalUrl(baseUrl: string | undefined): boolean {
  if (!baseUrl) return false;
  try {
    const host = new URL(baseUrl).hostname;
    return (
      host === "localhost" ||
      host === "127.0.0.1" ||
      host === "[::1]" ||
      host === "::1" ||
      host.endsWith(".local")
    );
  } catch {
    return false;
  }
}

/** Whether requests to `model` need an API key: not for keyless providers or servers on this machine. */
export function requiresApiKey(model: Pick<Model, "provider" | "baseUrl">): boolean {
  if (keylessProviders.has(model.provider)) return false;
  if (providerEnvKeys.has(model.provider)) return true;
  return !isLocalUrl(model.baseUrl);
}

/**
 * Whether `model` can be called now: it needs no key, or `getApiKey(provider)` returns one, or the
 * environment has one. `/model` lists only models for which this is true.
 */
export function hasCredentials(
  model: Pick<Model, "provider" | "baseUrl">,
  getApiKey?: (provider: Provider) => string | undefined,
): boolean {
  if (!requiresApiKey(model)) return true;
  const fromCallback = getApiKey?.(model.provider);
  if (fromCallback !== undefined && fromCallback.trim() !== "") return true;
  return getEnvApiKey(model.provider) !== undefined;
}

/** Compat settings of OpenAI's own endpoint. */
const OPENAI_COMPAT: Required<OpenAICompat> = {
  maxTokensField: "max_completion_tokens",
  supportsReasoningEffort: true,
  supportsDeveloperRole: true,
  supportsUsageInStreaming: true,
  supportsStreamOptions: true,
};

/**
 * Compat settings that work with Ollama, vLLM, LM Studio and most proxies: `max_tokens`, the
 * `system` role, no `reasoning_effort`, and usage requested through `stream_options`.
 */
export const LOCAL_SERVER_COMPAT: Readonly<Required<OpenAICompat>> = {
  maxTokensField: "max_tokens",
  supportsReasoningEffort: false,
  supportsDeveloperRole: false,
  supportsUsageInStreaming: true,
  supportsStreamOptions: true,
};

/**
 * Every compat setting of `model`: its own `compat` fields, the rest detected from the endpoint
 * (OpenAI's own API gets OpenAI's settings, anything else `LOCAL_SERVER_COMPAT`). OpenAI's
 * reasoning effort and developer role apply only to reasoning models.
 */
export function resolveOpenAICompat(
  model: Pick<Model, "baseUrl" | "provider" | "reasoning" | "compat">,
): Required<OpenAICompat> {
  const isOpenAI = model.provider === "openai" || (model.baseUrl ?? "").includes("api.openai.com");
  const detected = isOpenAI
    ? { ...OPENAI_COMPAT, supportsReasoningEffort: model.reasoning, supportsDeveloperRole: model.reasoning }
    : { ...LOCAL_SERVER_COMPAT };
  const own = model.compat ?? {};
  return {
    maxTokensField: own.maxTokensField ?? detected.maxTokensField,
    supportsReasoningEffort: own.supportsReasoningEffort ?? detected.supportsReasoningEffort,
    supportsDeveloperRole: own.supportsDeveloperRole ?? detected.supportsDeveloperRole,
    supportsUsageInStreaming: own.supportsUsageInStreaming ?? detected.supportsUsageInStreaming,
    supportsStreamOptions: own.supportsStreamOptions ?? detected.supportsStreamOptions,
  };
}

/** What a custom OpenAI-compatible model needs; everything else has a default. */
export interface OpenAICompatibleModelDefinition {
  id: string;
  /** The server's OpenAI-style base, ending in `/v1` (e.g. `http://localhost:11434/v1` for Ollama). */
  baseUrl: string;
  /** Provider name used in `provider/id` references. Default `"local"`. */
  provider?: Provider;
  name?: string;
  /** Default false. */
  reasoning?: boolean;
  thinkingLevels?: Model["thinkingLevels"];
  /** Default `["text"]`. */
  input?: Model["input"];
  /** Default 128 000. */
  contextWindow?: number;
  /** Default 8 192. */
  maxTokens?: number;
  /** Default: free. */
  cost?: Partial<Model["cost"]>;
  headers?: Record<string, string>;
  /** Merged over the settings detected by `resolveOpenAICompat`. */
  compat?: OpenAICompat;
  /** Wire API. Default `openai-completions` (chat completions); `openai-responses` for servers that have it. */
  api?: Extract<Api, "openai-completions" | "openai-responses">;
}

/**
 * A `Model` for an OpenAI-compatible server, with defaults for local servers (no prices, 128K
 * context, 8K output, text only, `LOCAL_SERVER_COMPAT` unless `compat` overrides a field).
 * It is not registered: pass it to `registerModel` or straight to `streamSimple`.
 *
 * @example
 * registerModel(defineOpenAICompatibleModel({ id: "qwen3:8b", baseUrl: "http://localhost:11434/v1", provider: "ollama" }));
 */
export function defineOpenAICompatibleModel(def: OpenAICompatibleModelDefinition): Model {
  const model: Model = {
    id: def.id,
    name: def.name ?? def.id,
    api: def.api ?? "openai-completions",
    provider: def.provider ?? "local",
    baseUrl: def.baseUrl.replace(/\/+$/, ""),
    reasoning: def.reasoning ?? false,
    input: def.input ?? ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...def.cost },
    contextWindow: def.contextWindow ?? 128_000,
    maxTokens: def.maxTokens ?? 8_192,
  };
  if (def.thinkingLevels) model.thinkingLevels = def.thinkingLevels;
  if (def.headers) model.headers = def.headers;
  model.compat = { ...LOCAL_SERVER_COMPAT, ...def.compat };
  return model;
}
