/** Approval by reaction: the extension, the rules that decide which calls ask, and the store contract. */
export {
  APPROVAL_ENTRY_TYPE,
  APPROVAL_REACTIONS,
  type ApprovalExtensionOptions,
  createApprovalExtension,
} from "./extension.js";
export type { ApprovalAuditData } from "./messages.js";
export { bashApprovalRule, callFingerprint, needsApproval } from "./rules.js";
export * from "./types.js";
