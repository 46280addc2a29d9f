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
  const base = requestedMaxTokens ?? Math.min(model.maxTokens, 32_000);
  const maxTokens = Math.min(base + budget, model.maxTokens);
  const budgetTokens = maxTokens <= budget ? Math.max(0, maxTokens - 1024) : budget;
  return { maxTokens, budgetTokens };
}
