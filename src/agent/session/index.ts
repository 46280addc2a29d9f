/**
 * Sessions: pi v3 compatible entry types, context from a branch, compaction, and JSONL
 * import/export. Pure: storage lives in src/queue/store.
 */
export * from "./compaction/index.js";
export {
  branchContext,
  buildSessionContext,
  entryToMessage,
  latestCompactionIndex,
  NO_CARRIERS,
  NO_SETTINGS,
  nextCarriers,
  pathToLeaf,
  resolveSettings,
  type SettingCarriers,
  settingKind,
  settingsOfCarriers,
} from "./context.js";
export {
  type CreateHeaderOptions,
  createSessionHeader,
  EntryChain,
  headerThreadKey,
  type IdSet,
  isValidEntryId,
  newEntryId,
  newSessionId,
} from "./entries.js";
export {
  checkPiV3,
  consoleWarnLogger,
  isSessionEntry,
  isSessionHeader,
  type ParsedSession,
  type ParseOptions,
  parseSessionJsonl,
  repairEntries,
  serializeSession,
  type WarnLogger,
} from "./jsonl.js";
export {
  type BashExecutionMessage,
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  type BranchSummaryMessage,
  bashExecutionToText,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  type CompactionSummaryMessage,
  type CustomMessage,
  convertToLlm,
  createBranchSummaryMessage,
  createCompactionSummaryMessage,
  createCustomMessage,
  sessionMessageToLlm,
} from "./messages.js";
export { type RecordedSettings, recordSettings, type SettingsRecord } from "./settings.js";
export type * from "./types.js";
export { CURRENT_SESSION_VERSION } from "./types.js";
