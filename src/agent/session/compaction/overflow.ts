/**
 * "Compact once and retry" after the provider said the context did not fit
 * (`isContextOverflow` in src/agent/llm/overflow.ts).
 */
import type { SessionEntry } from "../types.js";

/**
 * The branch without its trailing failed assistant messages (`stopReason` error or aborted), and
 * the id to attach the compaction entry to. Attaching the compaction there leaves the failed
 * reply off the branch, so the retry sends the summary, the kept entries and the user's message
 * again, not the error.
 *
 * The recipe, for the caller that owns the store and the agent:
 * 1. `const { entries, leafId } = branchBeforeFailure(branch.entries)`;
 * 2. `const prep = prepareCompaction(entries, settings)`; nothing to compact → report the error;
 * 3. `const out = await compact(prep, model, options)`; `!out.ok` → report the error;
 * 4. `new EntryChain(leafId).add(compactionEntryInput(out.compaction))`, append it;
 * 5. rebuild the context with `buildSessionContext` and continue the agent once. A second
 *    overflow is reported, not compacted again.
 */
export function branchBeforeFailure(path: readonly SessionEntry[]): {
  entries: SessionEntry[];
  leafId: string | null;
} {
  let end = path.length;
  while (end > 0) {
    const entry = path[end - 1];
    if (entry?.type !== "message" || entry.message.role !== "assistant") break;
    if (entry.message.stopReason !== "error" && entry.message.stopReason !== "aborted") break;
    end--;
  }
  const entries = path.slice(0, end);
  return { entries, leafId: entries[entries.length - 1]?.id ?? null };
}
