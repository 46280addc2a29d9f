/**
 * Turning registrations into a thread's tools: a registered `ToolDefinition` bound to the thread's
 * context, and the wrappers extensions put around a tool of a given name.
 */
import type { ExtensionRegistry, LoadedExtension } from "./registry.js";
import type { ExtensionContext, ExtensionHost, ExtensionTool, ToolDefinition } from "./types.js";

/** What binding needs from a thread. */
export interface ToolBindingEnv {
  runner: ExtensionRegistry;
  host: ExtensionHost;
  context(signal?: AbortSignal): ExtensionContext;
}

/** `def` as an `ExtensionTool` of this thread; it fails with a clear error once its extension is disabled. */
export function bindTool(env: ToolBindingEnv, ext: LoadedExtension, def: ToolDefinition): ExtensionTool {
  const tool: ExtensionTool = {
    name: def.name,
    label: def.label,
    description: def.description,
    parameters: def.parameters,
    execute: (toolCallId, params, signal, onUpdate) => {
      if (!ext.enabled) {
        return Promise.reject(
          new Error(`Tool "${def.name}" is unavailable: extension "${ext.name}" was disabled.`),
        );
      }
      const ctx = env.context(signal);
      return env.runner.current.run(ctx, () => def.execute(toolCallId, params, signal, onUpdate, ctx));
    },
  };
  if (def.approval !== undefined) tool.approval = def.approval;
  return tool;
}

/** `tool` wrapped by every enabled extension's wrappers for its name, in load order. */
export function applyWrappers(env: ToolBindingEnv, tool: ExtensionTool): ExtensionTool {
  let current = tool;
  for (const ext of env.runner.enabled()) {
    for (const { name, wrapper } of ext.wrappers) {
      if (name !== tool.name) continue;
      const inner = current;
      const ctx = env.context();
      let wrapped: ExtensionTool;
      try {
        wrapped = env.runner.current.run(ctx, () => wrapper(inner, ctx));
      } catch (e) {
        env.runner.disable(ext, `wrapTool ${name}`, e, env.host);
        continue;
      }
      // A wrapper of an extension disabled later steps aside instead of failing the tool.
      current = {
        ...wrapped,
        name: inner.name,
        execute: (id, params, signal, onUpdate) =>
          ext.enabled
            ? wrapped.execute(id, params, signal, onUpdate)
            : inner.execute(id, params, signal, onUpdate),
      };
    }
  }
  return current;
}
