/**
 * From a tree of entries to what the model sees: the path from a leaf to the root, with the
 * latest compaction's summary standing in for everything before its kept range.
 */
import type { AgentMessage } from "../types.js";
import {
  createBranchSummaryMessage,
  createCompactionSummaryMessage,
  createCustomMessage,
} from "./messages.js";
import type { SessionContext, SessionEntry, SessionSettings } from "./types.js";

/**
 * The entries from the root to `leafId` (inclusive), in order. Without `leafId` the last entry of
 * `entries` is the leaf; with `leafId: null` (before the first entry) or an unknown id the path is
 * empty. The walk stops at a `parentId` missing from `entries`, so a partial list (a store's branch
 * read that starts at a compaction's kept range) yields the path within it.
 */
export function pathToLeaf(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId?: ReadonlyMap<string, SessionEntry>,
): SessionEntry[] {
  if (leafId === null) return [];
  const index = byId ?? new Map(entries.map((e) => [e.id, e]));
  const leaf = leafId === undefined ? entries[entries.length - 1] : index.get(leafId);
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let current = leaf;
  // `seen` guards against a cycle in a hand-edited file.
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    path.push(current);
    current = current.parentId === null ? undefined : index.get(current.parentId);
  }
  return path.reverse();
}

/** The message an entry contributes to the model's context, if any. */
export function entryToMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return createCustomMessage(
        entry.customType,
        entry.content,
        entry.display,
        entry.details,
        entry.timestamp,
      );
    case "branch_summary":
      return entry.summary
        ? createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp)
        : undefined;
    default:
      return undefined;
  }
}

/** The index in `path` of the latest compaction entry, or -1. */
export function latestCompactionIndex(path: readonly SessionEntry[]): number {
  for (let i = path.length - 1; i >= 0; i--) if (path[i]?.type === "compaction") return i;
  return -1;
}

/** The settings before any entry: no model, thinking `off` (what pi assumes too). */
export const NO_SETTINGS: SessionSettings = { model: null, thinkingLevel: "off" };

/**
 * The settings in force after `path` (root→leaf order), starting from `inherited`: the latest
 * `thinking_level_change` sets the thinking level; the latest `model_change` or assistant message
 * sets the model. Compactions carry no settings (pi's never do), so the whole path counts.
 */
export function resolveSettings(
  path: readonly SessionEntry[],
  inherited: SessionSettings = NO_SETTINGS,
): SessionSettings {
  let { model, thinkingLevel } = inherited;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant")
      model = { provider: entry.message.provider, modelId: entry.message.model };
  }
  return { model, thinkingLevel };
}

/** Whether an entry sets the thinking level (`"thinking"`), the model (`"model"`), or neither. */
export function settingKind(entry: SessionEntry): "thinking" | "model" | undefined {
  if (entry.type === "thinking_level_change") return "thinking";
  if (entry.type === "model_change") return "model";
  if (entry.type === "message" && entry.message.role === "assistant") return "model";
  return undefined;
}

/**
 * The ids of the entries whose settings are in force at an entry: the latest thinking level
 * change and the latest model carrier on its path, itself included (null: none). Stores keep
 * them per entry, so the settings at any point cost two lookups instead of a walk to the root.
 */
export interface SettingCarriers {
  thinking: string | null;
  model: string | null;
}

export const NO_CARRIERS: SettingCarriers = { thinking: null, model: null };

/** The settings the carriers name; a carrier `lookup` cannot find counts as none. */
export function settingsOfCarriers(
  carriers: SettingCarriers,
  lookup: (id: string) => SessionEntry | undefined,
): SessionSettings {
  const found: SessionEntry[] = [];
  for (const id of [carriers.model, carriers.thinking]) {
    const entry = id === null ? undefined : lookup(id);
    if (entry) found.push(entry);
  }
  return resolveSettings(found);
}

/** The carriers at `entry`, given those at its parent. */
export function nextCarriers(entry: SessionEntry, parent: SettingCarriers): SettingCarriers {
  const kind = settingKind(entry);
  if (kind === "thinking") return { thinking: entry.id, model: parent.model };
  if (kind === "model") return { thinking: parent.thinking, model: entry.id };
  return parent;
}

/**
 * Drops tool results whose call is not earlier in `messages`. Such an orphan appears only after
 * damage (a lost line in a file); providers reject it, so it must not reach them.
 */
function dropOrphanToolResults(messages: AgentMessage[]): AgentMessage[] {
  const calls = new Set<string>();
  const out: AgentMessage[] = [];
  for (const m of messages) {
    if (m.role === "assistant") {
      for (const block of m.content) if (block.type === "toolCall") calls.add(block.id);
    } else if (m.role === "toolResult" && !calls.has(m.toolCallId)) {
      continue;
    }
    out.push(m);
  }
  return out;
}

/**
 * Builds what the model sees for the branch ending at `leafId` (default: the last entry), the way
 * pi's `buildSessionContext` does.
 *
 * Walks from the leaf to the root. The settings are resolved over the whole path (see
 * `resolveSettings`); when `entries` is only the tail of the path (a store's `readBranch`, which
 * starts at the latest compaction's kept range), pass its `inherited` settings: those set before
 * the first entry. With a compaction on the path, the messages are its summary (a
 * `compactionSummary` message, shown to the model in `<summary>` tags by `convertToLlm`), then the
 * kept entries from its `firstKeptEntryId`, then everything after it. `custom` entries, labels and
 * settings never become messages; `custom_message` entries do. Pure: `entries` is not modified.
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  inherited: SessionSettings = NO_SETTINGS,
): SessionContext {
  if (leafId === null) return { messages: [], ...NO_SETTINGS };
  const path = pathToLeaf(entries, leafId);
  if (path.length === 0) return { messages: [], ...NO_SETTINGS };
  const { model, thinkingLevel } = resolveSettings(path, inherited);

  const messages: AgentMessage[] = [];
  const push = (entry: SessionEntry) => {
    const m = entryToMessage(entry);
    if (m) messages.push(m);
  };
  const ci = latestCompactionIndex(path);
  const compaction = path[ci];
  if (compaction?.type === "compaction") {
    messages.push(
      createCompactionSummaryMessage(compaction.summary, compaction.tokensBefore, compaction.timestamp),
    );
    const keptFrom = path.findIndex((e, i) => i < ci && e.id === compaction.firstKeptEntryId);
    if (keptFrom >= 0) for (let i = keptFrom; i < ci; i++) push(path[i] as SessionEntry);
    for (let i = ci + 1; i < path.length; i++) push(path[i] as SessionEntry);
  } else {
    for (const entry of path) push(entry);
  }
  return { messages: dropOrphanToolResults(messages), thinkingLevel, model };
}

/**
 * What the model sees at a store's branch read, with the settings set before its first entry.
 * The one call for a `BranchRead` (or anything with `entries`, `leafId` and `inherited`).
 */
export function branchContext(branch: {
  entries: readonly SessionEntry[];
  leafId: string | null;
  inherited?: SessionSettings;
}): SessionContext {
  return buildSessionContext(branch.entries, branch.leafId, branch.inherited);
}
