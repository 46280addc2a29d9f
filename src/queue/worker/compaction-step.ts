/**
 * Automatic compaction between runs. The engine's loop keeps its own copy of the context while a
 * run goes on, so a compaction made mid-run would not shrink the next call; the holder therefore
 * checks after each run, with the session functions of src/agent/session.
 */
import { complete } from "../../agent/llm/stream.js";
import type { Model } from "../../agent/llm/types.js";
import {
  type CompactionSettings,
  type CompactOptions,
  type CompleteFn,
  compact,
  compactionEntryInput,
  DEFAULT_COMPACTION_SETTINGS,
  estimateContextTokens,
  prepareCompaction,
  shouldCompact,
} from "../../agent/session/compaction/index.js";
import { buildSessionContext } from "../../agent/session/context.js";
import { newEntryId } from "../../agent/session/entries.js";
import type { SessionEntry } from "../../agent/session/types.js";
import { LeaseLostError } from "../store/errors.js";
import type { Fence, SessionStore } from "../store/types.js";
import type { CachedAgent } from "./agent-cache.js";

/** How the runtime compacts sessions. */
export interface CompactionConfig {
  /** Thresholds; default `DEFAULT_COMPACTION_SETTINGS` (`enabled: false` turns it off). */
  settings?: CompactionSettings;
  /** The summary request; default `complete` of the provider registry. */
  complete?: CompleteFn;
  /** Request options for the model (API key, headers). */
  options?: (model: Model) => CompactOptions | Promise<CompactOptions>;
}

export interface CompactionStep {
  threadKey: string;
  entry: CachedAgent;
  store: SessionStore;
  config: CompactionConfig;
  fence: Fence;
  onError: (error: unknown, context: string) => void;
}

/**
 * Compacts the thread's session when its context is over the threshold, appends the compaction
 * entry (fenced) and gives the agent the shortened history. A failed summary is reported and
 * changes nothing; `LeaseLostError` propagates.
 */
export async function maybeCompact(step: CompactionStep): Promise<boolean> {
  const { threadKey, entry, store, config, fence } = step;
  const agent = entry.agent;
  const model = agent.state.model;
  const settings = config.settings ?? DEFAULT_COMPACTION_SETTINGS;
  if (!shouldCompact(estimateContextTokens(agent.state.messages).tokens, model.contextWindow, settings)) {
    return false;
  }
  try {
    const branch = await store.readBranch(threadKey, entry.sessionId);
    const preparation = branch ? prepareCompaction(branch.entries, settings) : undefined;
    if (!preparation) return false;
    const options = (await config.options?.(model)) ?? {};
    const outcome = await compact(preparation, model, options, config.complete ?? complete);
    const u = outcome.usage;
    await store.addUsage(threadKey, {
      input: u.input,
      output: u.output,
      cacheRead: u.cacheRead,
      cacheWrite: u.cacheWrite,
      cost: u.cost.total,
    });
    if (!outcome.ok) {
      step.onError(
        new Error(`The summary request failed: ${outcome.errorMessage}`),
        `compacting ${threadKey}`,
      );
      return false;
    }
    const compaction = {
      ...compactionEntryInput(outcome.compaction),
      id: newEntryId(),
      parentId: entry.leafId,
      timestamp: new Date().toISOString(),
    } as SessionEntry;
    const r = await store.append(threadKey, entry.sessionId, [compaction], { fence });
    entry.leafId = r.leafId;
    const after = await store.readBranch(threadKey, entry.sessionId);
    if (after) agent.replaceMessages(buildSessionContext(after.entries, after.leafId).messages);
    return true;
  } catch (e) {
    if (e instanceof LeaseLostError) throw e;
    step.onError(e, `compacting ${threadKey}`);
    return false;
  }
}
