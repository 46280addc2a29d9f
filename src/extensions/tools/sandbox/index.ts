/** How tool commands run: the runner seam, the bubblewrap sandbox, the direct runner, limits, the start probe. */
export {
  type BwrapFeatures,
  type BwrapRunnerOptions,
  bwrapBaseArgs,
  bwrapCallArgs,
  createBwrapRunner,
  SANDBOX_WORKSPACE,
  type SandboxIdentity,
} from "./bwrap.js";
export { CALL_MARKER, createDirectRunner, type DirectRunnerOptions } from "./direct.js";
export { SANDBOX_PATH, toolEnv } from "./env.js";
export { createEtcView, ETC_ALLOWLIST, type EtcView } from "./etc-view.js";
export {
  DEFAULT_LIMITS,
  describeLimits,
  type LimitKind,
  LimitWatcher,
  limitPrelude,
  type SandboxLimits,
  signalOfExitCode,
} from "./limits.js";
export {
  bwrapFeatures,
  findExecutable,
  NOBODY,
  type ProbeOptions,
  probeSandbox,
  type SandboxStatus,
  SandboxUnavailableError,
} from "./probe.js";
export { compileSeccompFilter, deniedSyscalls } from "./seccomp.js";
export type {
  Account,
  CommandRunner,
  CommandRunOptions,
  CommandRunResult,
  SandboxMode,
  SandboxNetwork,
  SandboxOptions,
} from "./types.js";
