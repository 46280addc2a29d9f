/**
 * The extension layer's public entry, grouped by who uses it.
 *
 * Extension authors: the types (`ExtensionAPI`, `ExtensionFactory`, events, `ToolDefinition`).
 * The wiring (gateway/worker): `ExtensionRunner` + `resolveExtensionEntries` to load, `bind(host)` per
 * thread, the built-ins' factories, the command parser, the access gate and the tool helpers.
 */

// Access control
export * from "./access/index.js";
export * from "./approval/index.js";
export { type Clock, systemClock } from "./clock.js";
// Built-in extensions
export {
  type CommandsExtensionOptions,
  createCommandsExtension,
  parseCommandText,
  parseNativeCommand,
} from "./commands/index.js";
export { modelRef, resolveModelRef } from "./context.js";
export { type ExtensionConfigEntry, type LoadConfigOptions, resolveExtensionEntries } from "./loader.js";
export { consoleLogger, silentLogger } from "./logger.js";
// Runner and loading
export type { ExtensionRegistry, LoadedExtension, RegisteredCommand } from "./registry.js";
export { ExtensionRunner, type ExtensionRunnerOptions } from "./runner.js";
export {
  createSubAgentExtension,
  SUB_AGENT_TOOL,
  type SubAgentDetails,
  type SubAgentOptions,
} from "./sub-agent.js";
export { type ExtensionAgentHooks, ThreadExtensions, type ThreadExtensionsOptions } from "./thread.js";
export * from "./tools/index.js";
export type * from "./types.js";
