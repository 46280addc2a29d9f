export {
  type CompactionData,
  type CompactionResult,
  type CompactOptions,
  type CompleteFn,
  compact,
  compactionEntryInput,
} from "./compact.js";
export {
  type CutPoint,
  estimateEntryTokens,
  findCutPoint,
  findTurnStartIndex,
  findValidCutPoints,
} from "./cut-point.js";
export {
  collectFileOps,
  createFileOps,
  type FileOperations,
  fileLists,
  formatFileLists,
} from "./file-ops.js";
export { branchBeforeFailure } from "./overflow.js";
export { type CompactionPreparation, prepareCompaction } from "./prepare.js";
export {
  buildSummaryRequestText,
  SUMMARY_PROMPT,
  SUMMARY_SYSTEM_PROMPT,
  serializeConversation,
  TURN_PREFIX_PROMPT,
  UPDATE_SUMMARY_PROMPT,
} from "./prompts.js";
export {
  type CompactionSettings,
  type ContextEstimate,
  DEFAULT_COMPACTION_SETTINGS,
  estimateContextTokens,
  estimateTokens,
  shouldCompact,
  usageContextTokens,
} from "./tokens.js";
