import type { Model, ThinkingLevel } from "./types.js";
import { THINKING_LEVELS } from "./types.js";

/** Thinking levels a model accepts, in increasing order. A model without reasoning accepts only `off`. */
export function supportedThinkingLevels(model: Pick<Model, "reasoning" | "thinkingLevels">): ThinkingLevel[] {
  if (!model.reasoning) return ["off"];
  const levels = model.thinkingLevels ?? ["off", "minimal", "low", "medium", "high"];
  return THINKING_LEVELS.filter((l) => levels.includes(l));
}

/**
 * The level the model will actually use for `level`: the level itself when supported, else the
 * highest supported level below it (so `xhigh` falls back to `high`), else the lowest supported
 * level above it.
 */
export function clampThinkingLevel(
  model: Pick<Model, "reasoning" | "thinkingLevels">,
  level: ThinkingLevel,
): ThinkingLevel {
  const supported = supportedThinkingLevels(model);
  if (supported.includes(level)) return level;
  const rank = THINKING_LEVELS.indexOf(level);
  const below = supported.filter((l) => THINKING_LEVELS.indexOf(l) < rank);
  const lower = below[below.length - 1];
  if (lower !== undefined) return lower;
  return supported[0] ?? "off";
}

/** The most output tokens a request asks for by default, whatever the model's own limit. */
const DEFAULT_OUTPUT_CAP = 32_000;

/**
 * The output limit one request sends (`max_tokens`, `max_completion_tokens`, `max_output_tokens`,
 * `maxOutputTokens`, as each API names it): `requested` when the caller gives one, else the model's
 * `maxTokens` (the config's), at most 32 000. Every provider sends it, so the reply is never longer
 * than the config says and a worst-case cost can be computed from it.
 */
export function outputLimit(model: Pick<Model, "maxTokens">, requested?: number): number {
  return requested ?? Math.min(model.maxTokens, DEFAULT_OUTPUT_CAP);
}

/** Token budgets for providers that take a thinking budget (Anthropic, Google 2.5). */
export const DEFAULT_THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingLevel, "off">, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
};

/**
 * Output limit and thinking budget for one request: the budget is added on top of the output the
 * caller asked for (default: the model's limit), capped by the model's limit; when the cap leaves
 * too little room, the budget shrinks so at least 1024 tokens remain for the answer.
 */
export function thinkingTokenBudget(
  model: Pick<Model, "maxTokens">,
  level: Exclude<ThinkingLevel, "off">,
  requestedMaxTokens?: number,
  budgets: Readonly<Record<Exclude<ThinkingLevel, "off">, number>> = DEFAULT_THINKING_BUDGETS,
): { maxTokens: number; budgetTokens: number } {
  const budget = budgets[level];
  const base = outputLimit(model, requestedMaxTokens);
  const maxTokens = Math.min(base + budget, model.maxTokens);
  const budgetTokens = maxTokens <= budget ? Math.max(0, maxTokens - 1024) : budget;
  return { maxTokens, budgetTokens };
}

/** A thinking level other than `off`. */
export type ActiveThinkingLevel = Exclude<ThinkingLevel, "off">;

/** `claude-<family>-<major>[-<minor>]` from a model id (also with date suffix or vendor prefix). */
function claudeVersion(id: string): { major: number; minor: number } | undefined {
  const m = /claude-(?:opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:\b|-|$)/.exec(id);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: m[2] === undefined ? 0 : Number(m[2]) };
}

/**
 * Whether an Anthropic model takes adaptive thinking (`thinking: {type: "adaptive"}` plus
 * `output_config.effort`) instead of a fixed `budget_tokens`: Claude 4.6 and later, except Haiku
 * 4.x. Decided by model id so that custom models pointing at Claude through a proxy behave alike.
 */
export function usesAdaptiveThinking(model: Pick<Model, "id">): boolean {
  const v = claudeVersion(model.id);
  if (!v || /haiku-4/.test(model.id)) return false;
  return v.major > 4 || (v.major === 4 && v.minor >= 6);
}

/** Anthropic effort values, lowest first. */
export type AnthropicEffort = "low" | "medium" | "high" | "xhigh" | "max";

/**
 * The Anthropic `effort` for a level: `minimal` and `low` → `low`; `xhigh` → `xhigh` on Claude 4.7
 * and later (which have that effort), else `max` (Claude 4.6's level above `high`).
 */
function anthropicEffort(model: Pick<Model, "id">, level: ActiveThinkingLevel): AnthropicEffort {
  if (level === "minimal" || level === "low") return "low";
  if (level === "medium" || level === "high") return level;
  const v = claudeVersion(model.id);
  const hasXhigh = v !== undefined && (v.major > 4 || (v.major === 4 && v.minor >= 7));
  return hasXhigh ? "xhigh" : "max";
}

/** Thinking parameters of one Anthropic Messages request. */
export interface AnthropicThinkingParams {
  /** `max_tokens`: the caller's output plus room for thinking. */
  maxTokens: number;
  /** The `thinking` field; absent when thinking is off. */
  thinking?: { type: "enabled"; budget_tokens: number } | { type: "adaptive" };
  /** `output_config.effort`, only with adaptive thinking. */
  effort?: AnthropicEffort;
}

/**
 * Anthropic thinking for `level` (clamped to the model): adaptive thinking with an effort on models
 * that have it, else extended thinking with a token budget from `budgets`. `maxTokens` is raised
 * to leave room for the thinking (see `thinkingTokenBudget`).
 */
export function anthropicThinkingParams(
  model: Pick<Model, "id" | "reasoning" | "thinkingLevels" | "maxTokens">,
  level: ThinkingLevel | undefined,
  requestedMaxTokens?: number,
  budgets: Readonly<Record<ActiveThinkingLevel, number>> = DEFAULT_THINKING_BUDGETS,
): AnthropicThinkingParams {
  const clamped = clampThinkingLevel(model, level ?? "off");
  if (clamped === "off") return { maxTokens: outputLimit(model, requestedMaxTokens) };
  const { maxTokens, budgetTokens } = thinkingTokenBudget(model, clamped, requestedMaxTokens, budgets);
  if (usesAdaptiveThinking(model)) {
    return { maxTokens, thinking: { type: "adaptive" }, effort: anthropicEffort(model, clamped) };
  }
  return { maxTokens, thinking: { type: "enabled", budget_tokens: Math.max(1024, budgetTokens) } };
}

/**
 * The OpenAI `reasoning_effort` / `reasoning.effort` for `level` (clamped to the model), or
 * undefined to send none. `off` becomes `none` on OpenAI models that list `off` (GPT-5.1 and
 * later); elsewhere `off` sends nothing.
 */
export function openaiReasoningEffort(
  model: Pick<Model, "provider" | "reasoning" | "thinkingLevels">,
  level: ThinkingLevel | undefined,
): string | undefined {
  if (!model.reasoning) return undefined;
  const clamped = clampThinkingLevel(model, level ?? "off");
  if (clamped !== "off") return clamped;
  return model.provider === "openai" && model.thinkingLevels?.includes("off") ? "none" : undefined;
}

/** Gemini's `generationConfig.thinkingConfig`. */
export interface GoogleThinkingConfig {
  includeThoughts?: boolean;
  thinkingBudget?: number;
  thinkingLevel?: "MINIMAL" | "LOW" | "MEDIUM" | "HIGH";
}

/** Whether a Gemini model takes `thinkingLevel` (Gemini 3 and later) rather than `thinkingBudget`. */
export function usesThinkingLevel(model: Pick<Model, "id">): boolean {
  const m = /gemini-(\d+)/.exec(model.id);
  return m !== null && Number(m[1]) >= 3;
}

/** Largest `thinkingBudget` Gemini 2.5 accepts: 32 768 on Pro, 24 576 on Flash and Flash-Lite. */
function maxGoogleBudget(id: string): number {
  return /pro/.test(id) ? 32_768 : 24_576;
}

/**
 * Gemini thinking for `level` (clamped to the model). Gemini 3 gets `thinkingLevel`; Gemini 2.5
 * and other models get `thinkingBudget` (0 turns thinking off where the model allows it). Returns
 * no config for a model without reasoning. `maxTokens` (`maxOutputTokens`, which includes thought
 * tokens) is raised to leave room for the thinking.
 */
export function googleThinkingParams(
  model: Pick<Model, "id" | "reasoning" | "thinkingLevels" | "maxTokens">,
  level: ThinkingLevel | undefined,
  requestedMaxTokens?: number,
  budgets: Readonly<Record<ActiveThinkingLevel, number>> = DEFAULT_THINKING_BUDGETS,
): { maxTokens: number; thinkingConfig?: GoogleThinkingConfig } {
  const plainMax = outputLimit(model, requestedMaxTokens);
  if (!model.reasoning) return { maxTokens: plainMax };
  const clamped = clampThinkingLevel(model, level ?? "off");
  if (clamped === "off") {
    return usesThinkingLevel(model)
      ? { maxTokens: plainMax }
      : { maxTokens: plainMax, thinkingConfig: { thinkingBudget: 0 } };
  }
  const { maxTokens, budgetTokens } = thinkingTokenBudget(model, clamped, requestedMaxTokens, budgets);
  if (usesThinkingLevel(model)) {
    const upper =
      clamped === "xhigh" ? "HIGH" : (clamped.toUpperCase() as GoogleThinkingConfig["thinkingLevel"]);
    return { maxTokens, thinkingConfig: { includeThoughts: true, thinkingLevel: upper } };
  }
  const thinkingBudget = Math.min(budgetTokens, maxGoogleBudget(model.id));
  return { maxTokens, thinkingConfig: { includeThoughts: true, thinkingBudget } };
}
