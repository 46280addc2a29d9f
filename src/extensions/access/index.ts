/** Access control: the pure policy, the gate with its once-per-thread notices, and the notice memory seam. */
export { AccessGate, type AccessGateOptions, type AccessVerdict } from "./gate.js";
export { MemoryNoticeMemory, type NoticeMemory } from "./notices.js";
export {
  ACCESS_NOTICES,
  type AccessConfig,
  type AccessDecision,
  type AccessDenial,
  type AccessSubject,
  checkAccess,
  isAdmin,
  mayChangeSettings,
  type PlatformAccessConfig,
} from "./policy.js";
