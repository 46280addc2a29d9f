/**
 * The built-in tools (`bash`, `read`, `write`, `edit`, `ls`, and `send_file` in the extension), as plain tools for a fixed workspace
 * (`createBuiltinTools`) or as an extension that gives every thread its own workspace under a root
 * directory (`createToolsExtension`). `bash` runs its commands through a `CommandRunner` (the
 * bubblewrap sandbox, see `sandbox/`); the file tools work in the gateway and accept the sandbox's
 * `/workspace` paths too. Which tools a channel gets is configuration: pass the names to
 * `selectTools`, or as `activeTools` when binding the runner to a thread.
 */
import type { AgentTool } from "../../agent/types.js";
import type { ExtensionContext, ExtensionFactory, ExtensionTool, ToolDefinition } from "../types.js";
import { type BashToolOptions, createBashTool } from "./bash.js";
import {
  createEditTool,
  createLsTool,
  createReadTool,
  createWriteTool,
  type FileToolOptions,
} from "./file-tools.js";
import { WorkspaceQuota } from "./quota.js";
import { DEFAULT_LIMITS } from "./sandbox/limits.js";
import { createSendFileTool } from "./send-file.js";
import { ensureWorkspace } from "./workspace.js";

export type { BashToolOptions } from "./bash.js";
export type { FileToolOptions } from "./file-tools.js";
export { diskUsage, WorkspaceQuota } from "./quota.js";
export * from "./sandbox/index.js";
export {
  displayPath,
  ensureWorkspace,
  resolveInWorkspace,
  WorkspacePathError,
  workspaceDirName,
} from "./workspace.js";

export const BUILTIN_TOOL_NAMES = ["bash", "read", "write", "edit", "ls"] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export interface BuiltinToolOptions {
  bash?: BashToolOptions;
  files?: FileToolOptions;
}

/**
 * The built-in tools working in `workspace` (a directory, or a function giving it per call). When
 * `bash.runner` is a sandbox, the file tools also accept its `/workspace` paths and give new files
 * to the sandbox's account.
 */
export function createBuiltinTools(
  workspace: string | (() => Promise<string>),
  options: BuiltinToolOptions = {},
): Record<BuiltinToolName, ExtensionTool> {
  const dir = typeof workspace === "string" ? async () => workspace : workspace;
  const runner = options.bash?.runner;
  const quota = options.bash?.quota ?? new WorkspaceQuota((runner?.limits ?? DEFAULT_LIMITS).workspaceMb);
  const files: FileToolOptions = {
    ...(runner && runner.kind !== "none" ? { workspaceAlias: runner.workspacePath("") } : {}),
    ...(runner?.owner ? { owner: runner.owner } : {}),
    quota,
    ...options.files,
  };
  return {
    bash: createBashTool(dir, { ...options.bash, quota }),
    read: createReadTool(dir, files),
    write: createWriteTool(dir, files),
    edit: createEditTool(dir, files),
    ls: createLsTool(dir, files),
  };
}

/**
 * The tools named in `names`, in that order. Throws (a configuration error) for a name that is not
 * in `available`, listing the names that are.
 */
export function selectTools<T extends AgentTool>(
  available: Readonly<Record<string, T>>,
  names: readonly string[],
): T[] {
  return names.map((name) => {
    const tool = available[name];
    if (!tool) {
      throw new Error(
        `Unknown tool "${name}" in the channel's tools. Available: ${Object.keys(available).join(", ")}.`,
      );
    }
    return tool;
  });
}

export interface ToolsExtensionOptions extends BuiltinToolOptions {
  /** Directory under which each thread gets its workspace (`<root>/<thread dir>`), created on first use. */
  root: string;
  /** Which built-ins to register. Default all. */
  names?: readonly BuiltinToolName[];
  /** Register `send_file` (default true). */
  sendFile?: boolean;
}

/** The built-in tools as an extension, each thread working in its own workspace under `root`. */
export function createToolsExtension(options: ToolsExtensionOptions): ExtensionFactory {
  return (api) => {
    const owner = options.bash?.runner?.owner;
    const forThread = (ctx: ExtensionContext) =>
      createBuiltinTools(() => ensureWorkspace(options.root, ctx.thread.threadKey, owner), options);
    // Descriptions, schemas and approval rules do not depend on the thread: take them from one instance.
    const template = createBuiltinTools(options.root, options);
    for (const name of options.names ?? BUILTIN_TOOL_NAMES) {
      const base = template[name];
      const definition: ToolDefinition = {
        name: base.name,
        label: base.label,
        description: base.description,
        parameters: base.parameters,
        execute: (id, params, signal, onUpdate, ctx) =>
          forThread(ctx)[name].execute(id, params, signal, onUpdate),
      };
      if (base.approval !== undefined) definition.approval = base.approval;
      api.registerTool(definition);
    }
    if (options.sendFile !== false) {
      const runner = options.bash?.runner;
      const alias = runner && runner.kind !== "none" ? runner.workspacePath("") : undefined;
      api.registerTool(createSendFileTool(options.root, owner, alias));
    }
  };
}
