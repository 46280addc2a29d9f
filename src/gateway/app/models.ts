/**
 * Models at start: the built-in wire APIs registered, custom models from config added to the
 * catalogue with the variable their key comes from, the configured default checked against the
 * catalogue (with the closest known ids when it is not there), and the default model decided (the
 * configured one, else the first model that has credentials here).
 */
import {
  editDistance,
  findModel,
  hasCredentials,
  listModels,
  registerModels,
  setProviderApiKeyEnv,
} from "../../agent/llm/models.js";
import { registerBuiltInApiProviders } from "../../agent/llm/providers/index.js";
import type { Model } from "../../agent/llm/types.js";
import type { ConfigIssue } from "../config/errors.js";
import { customModelToModel } from "../config/models.js";
import type { ModelsConfig } from "../config/types.js";

/** `provider/id`. */
export function modelRefOf(model: Pick<Model, "provider" | "id">): string {
  return `${model.provider}/${model.id}`;
}

/** Registers the built-in providers and the config's custom models (with their key variables). */
export function registerConfiguredModels(config: ModelsConfig): void {
  registerBuiltInApiProviders();
  for (const c of config.custom) setProviderApiKeyEnv(c.provider, c.apiKeyEnv ? [c.apiKeyEnv] : []);
  registerModels(config.custom.map(customModelToModel));
}

/**
 * Up to `n` known model refs that look like a typo of `ref`: by edit distance on `provider/id`, or
 * on the id alone, within a third of the id's length (at least 2).
 */
export function closestModelRefs(ref: string, n = 3): string[] {
  const wanted = ref.trim().toLowerCase();
  const bare = wanted.includes("/") ? wanted.slice(wanted.indexOf("/") + 1) : wanted;
  const limit = Math.max(2, Math.floor(bare.length / 3));
  return listModels()
    .map((m) => {
      const full = modelRefOf(m);
      const d = Math.min(editDistance(wanted, full.toLowerCase()), editDistance(bare, m.id.toLowerCase()));
      return { full, d };
    })
    .filter((s) => s.d <= limit)
    .sort((a, b) => a.d - b.d || a.full.localeCompare(b.full))
    .slice(0, n)
    .map((s) => s.full);
}

/**
 * `models.default` or `models.vision` naming a model the catalogue (built-ins, `models.custom`,
 * models registered by extensions) does not have, or a vision model that cannot see pictures; run
 * after all of those are registered.
 */
export function modelIssues(config: ModelsConfig): ConfigIssue[] {
  const issues = [
    ...unknownModel("models.default", config.default),
    ...unknownModel("models.vision", config.vision),
  ];
  const vision = config.vision ? findModel(config.vision) : undefined;
  if (vision && !vision.input.includes("image"))
    issues.push({
      path: "models.vision",
      message: `"${config.vision}" cannot see pictures (its input is ${vision.input.join(", ")}); name a model whose input includes image`,
    });
  return issues;
}

function unknownModel(path: string, ref: string | undefined): ConfigIssue[] {
  if (!ref || findModel(ref)) return [];
  return [
    {
      path,
      message:
        `"${ref}" is not a known model; ${suggestModels(ref)}. ` +
        "docs/providers.md lists the built-in models; add your own under models.custom",
    },
  ];
}

/** Most models of one provider a suggestion lists. */
const MAX_LISTED = 5;

/**
 * What `ref` was probably meant to be: the closest known ids (a typo); else, when its provider is
 * known, that provider's models ("did you mean"); else the providers there are.
 */
function suggestModels(ref: string): string {
  const quoted = (refs: readonly string[]) => refs.map((r) => `"${r}"`).join(", ");
  const close = closestModelRefs(ref);
  if (close.length > 0) return `the closest are ${quoted(close)}`;
  const provider = ref.includes("/") ? ref.slice(0, ref.indexOf("/")) : undefined;
  const own = listModels().filter((m) => m.provider === provider);
  if (own.length === 1) return `did you mean "${modelRefOf(own[0] as Model)}"?`;
  if (own.length > 1) {
    const id = ref.slice(ref.indexOf("/") + 1).toLowerCase();
    const nearest = own
      .map((m) => ({ ref: modelRefOf(m), d: editDistance(id, m.id.toLowerCase()) }))
      .sort((a, b) => a.d - b.d || a.ref.localeCompare(b.ref))
      .slice(0, MAX_LISTED)
      .map((m) => m.ref);
    return `did you mean one of ${quoted(nearest)}${own.length > MAX_LISTED ? ` (${provider} has ${own.length})` : ""}?`;
  }
  return `the providers are ${[...new Set(listModels().map((m) => m.provider))].join(", ")}`;
}

/**
 * The default model of new threads: the configured one (checked by `modelIssues` first), else the
 * first model with credentials here, custom ones first; undefined when none has credentials.
 */
export function chooseDefaultModel(config: ModelsConfig): Model | undefined {
  if (config.default) return findModel(config.default);
  const custom = config.custom.map((c) => findModel(`${c.provider}/${c.id}`)).filter((m) => m !== undefined);
  return custom.find((m) => hasCredentials(m)) ?? listModels().find((m) => hasCredentials(m));
}

/**
 * The reply a thread gets while no model is set up: set-up instructions, one line (the renderer
 * shows the first line of a failure).
 */
export const NO_MODEL_TEXT =
  "Set-up needed: give Switchboard a model. Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY " +
  "where it runs, or add a local model under models.custom (docs/providers.md), then restart it.";

/**
 * A stand-in for threads when no model has credentials: every request to it ends at once with
 * `NO_MODEL_TEXT` as the failure, which the renderer shows in the chat, so a fresh install says
 * what to do.
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
