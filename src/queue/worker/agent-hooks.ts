/**
 * Making sure a factory-built agent runs the runtime's per-call hook. The runtime hands the
 * factory a `transformContext` (compaction before every LLM call) to pass to `new Agent(...)`; a
 * factory that passes its own transform instead (extensions' `context` hook), or none, would
 * silently lose per-call compaction, so the runtime puts it in front itself.
 */
import type { Agent, AgentOptions } from "../../agent/agent.js";
import type { AgentMessage } from "../../agent/types.js";

/** The runtime's per-call hook, in the shape `AgentOptions.transformContext` accepts. */
export type TransformContextFn = (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;

/** How `ensureTransformContext` made the agent call the runtime's hook. */
export type HookInstall = "passed" | "installed" | "composed" | "unavailable";

/**
 * Makes `agent` call `ours` before every LLM call: nothing to do when the factory passed it
 * (`passed`); set when the agent has no transform (`installed`); put in front of the agent's own
 * transform otherwise (`composed`: `ours` sees the full history first, the agent's transform
 * then rewrites the result). `ours` must be idempotent, since a factory may also call it from its
 * own transform. `unavailable` when the agent keeps no options object to hook into.
 */
export function ensureTransformContext(agent: Agent, ours: TransformContextFn): HookInstall {
  // Engine edge: `Agent` keeps its construction options in a private field and reads
  // `transformContext` from it at every run; it has no setter for it.
  const options = (agent as unknown as { options?: AgentOptions }).options;
  if (!options || typeof options !== "object") return "unavailable";
  const theirs = options.transformContext;
  if (theirs === ours) return "passed";
  if (!theirs) {
    options.transformContext = ours;
    return "installed";
  }
  options.transformContext = async (messages, signal) => theirs(await ours(messages, signal), signal);
  return "composed";
}
