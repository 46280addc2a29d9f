/**
 * Recording an agent's model and thinking level in its session, the way pi's AgentSession does:
 * a change is written once, and the level written is the one the model actually uses.
 */
import { clampThinkingLevel } from "../llm/thinking.js";
import type { Model, ThinkingLevel } from "../llm/types.js";
import type { SessionEntryInput } from "./types.js";

/** The settings a session last recorded: `provider/modelId` and the thinking level. */
export interface RecordedSettings {
  model: string | undefined;
  thinkingLevel: string | undefined;
}

export interface SettingsRecord {
  /** Entries to append, in order: a `model_change`, then a `thinking_level_change`, each only when it changed. */
  entries: SessionEntryInput[];
  /** The level to run at: `level` clamped to what the model supports (`off` for a model without reasoning). */
  level: ThinkingLevel;
  /** What the session records once `entries` are written; pass it as `recorded` next time. */
  recorded: RecordedSettings;
}

/**
 * What to write so the session says what the agent runs: its model, and its thinking level
 * clamped to that model. A `/model` switch to a model without reasoning thus records `off` (the
 * clamp), and a setting applied twice is written once, because the caller keeps `recorded`.
 */
export function recordSettings(
  recorded: RecordedSettings,
  model: Pick<Model, "provider" | "id" | "reasoning" | "thinkingLevels">,
  level: ThinkingLevel,
): SettingsRecord {
  const entries: SessionEntryInput[] = [];
  const ref = `${model.provider}/${model.id}`;
  if (ref !== recorded.model)
    entries.push({ type: "model_change", provider: model.provider, modelId: model.id });
  const effective = clampThinkingLevel(model, level);
  if (effective !== recorded.thinkingLevel)
    entries.push({ type: "thinking_level_change", thinkingLevel: effective });
  return { entries, level: effective, recorded: { model: ref, thinkingLevel: effective } };
}
