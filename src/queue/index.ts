/**
 * The runtime: delivering chat messages to thread agents and controlling them, across processes
 * (Redis + BullMQ) or in one process (embedded). See docs/runtime.md.
 *
 * For the gateway: `RedisRuntime` / `EmbeddedRuntime` (the `Runtime` contract), `isStopCommand`,
 * `parseModeOverride`, `installShutdownHandlers`. For channels: `RunSink`, `RunSinkFactory`.
 * For tests: `RecordingSinks`. Session stores live in `./store`.
 */
export { isStopCommand, parseModeOverride } from "../extensions/commands/parser.js";
export { EmbeddedRuntime, type EmbeddedRuntimeOptions } from "./embedded/embedded-runtime.js";
export { DEFAULT_PREFIX, RuntimeKeys, type ThreadKeys } from "./keys.js";
export { type RecordedRun, RecordingSinks } from "./recording-sink.js";
export { RedisRuntime, type RedisRuntimeOptions, type RuntimeOptions } from "./redis/redis-runtime.js";
export { installShutdownHandlers, type ShutdownOptions, type Stoppable } from "./shutdown.js";
export type { DropPolicy } from "./state/types.js";
export * from "./types.js";
export type { CompactionConfig } from "./worker/holder-env.js";
export { plainInboundFormatter } from "./worker/item-messages.js";
export { INTERRUPTED_TOOL_TEXT } from "./worker/recovery.js";
export type { LeaseEvent, TenureState } from "./worker/tenure.js";
