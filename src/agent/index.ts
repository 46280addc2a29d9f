/**
 * The engine's public entry: the agent loop, the `Agent` class, their types, tool validation, and
 * the LLM layer (protocol, provider registry, `streamSimple`). Code outside `src/agent/` imports
 * the engine from here.
 */

export {
  type AddHooksOptions,
  Agent,
  type AgentHooks,
  type AgentInitialState,
  type AgentOptions,
  defaultConvertToLlm,
} from "./agent.js";
export {
  type AgentEventSink,
  agentLoop,
  agentLoopContinue,
  assertContinuable,
  isAssistantMessage,
  runAgentLoop,
  runAgentLoopContinue,
} from "./agent-loop.js";
export * from "./llm/index.js";
export { SKIPPED_FOR_ABORT_TEXT, SKIPPED_FOR_STEERING_TEXT } from "./tool-execution.js";
export { validateToolArguments } from "./tool-validation.js";
export type * from "./types.js";
