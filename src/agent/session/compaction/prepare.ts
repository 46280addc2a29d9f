/**
 * Deciding what a compaction summarises and what it keeps. Pure: works on a branch's entries.
 */
import type { AgentMessage } from "../../types.js";
import { buildSessionContext, entryToMessage, latestCompactionIndex } from "../context.js";
import type { SessionEntry } from "../types.js";
import { findCutPoint } from "./cut-point.js";
import { addPreviousDetails, collectFileOps, createFileOps, type FileOperations } from "./file-ops.js";
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS, estimateContextTokens } from "./tokens.js";

export interface CompactionPreparation {
  /** Id of the first entry kept verbatim. */
  firstKeptEntryId: string;
  /** History to summarise (everything before the cut, or before the split turn's start). */
  messagesToSummarize: AgentMessage[];
  /** The beginning of a split turn, summarised separately; empty unless `isSplitTurn`. */
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  /** Estimated context tokens of the branch now. */
  tokensBefore: number;
  /** Summary of the latest compaction on the branch: the new summary is an update of it. */
  previousSummary?: string;
  /** Files touched by the summarised history and listed by the previous compaction. */
  fileOps: FileOperations;
  settings: CompactionSettings;
}

/**
 * Plans a compaction of the branch `path` (root→leaf entries, e.g. a store's `readBranch` result,
 * which may start at the previous compaction's kept range).
 *
 * The range considered starts at the previous compaction's first kept entry (or the start of
 * `path`), so entries it kept verbatim are summarised now rather than lost. Returns undefined when
 * there is nothing to compact: the leaf is a compaction, or the range is within
 * `settings.keepRecentTokens`. Whether to compact at all is `shouldCompact`'s question, asked first.
 */
export function prepareCompaction(
  path: readonly SessionEntry[],
  settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
): CompactionPreparation | undefined {
  const last = path[path.length - 1];
  if (!last || last.type === "compaction") return undefined;

  const previousIndex = latestCompactionIndex(path);
  const previous = path[previousIndex];
  let start = 0;
  if (previous?.type === "compaction") {
    const kept = path.findIndex((e, i) => i < previousIndex && e.id === previous.firstKeptEntryId);
    start = kept >= 0 ? kept : previousIndex + 1;
  }

  const context = buildSessionContext(path, last.id);
  const tokensBefore = estimateContextTokens(context.messages).tokens;
  const cut = findCutPoint(path, start, path.length, settings.keepRecentTokens);
  if (cut.firstKeptEntryIndex <= start) return undefined;
  const firstKept = path[cut.firstKeptEntryIndex];
  if (!firstKept) return undefined;

  const collect = (from: number, to: number): AgentMessage[] => {
    const out: AgentMessage[] = [];
    for (let i = from; i < to; i++) {
      const entry = path[i];
      const m = entry ? entryToMessage(entry) : undefined;
      if (m) out.push(m);
    }
    return out;
  };
  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
  const messagesToSummarize = collect(start, historyEnd);
  const turnPrefixMessages = cut.isSplitTurn ? collect(cut.turnStartIndex, cut.firstKeptEntryIndex) : [];
  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) return undefined;

  const fileOps = createFileOps();
  if (previous?.type === "compaction") addPreviousDetails(previous.details, fileOps);
  for (const m of messagesToSummarize) collectFileOps(m, fileOps);
  for (const m of turnPrefixMessages) collectFileOps(m, fileOps);

  const preparation: CompactionPreparation = {
    firstKeptEntryId: firstKept.id,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn: cut.isSplitTurn,
    tokensBefore,
    fileOps,
    settings,
  };
  if (previous?.type === "compaction") preparation.previousSummary = previous.summary;
  return preparation;
}
