/**
 * The extensions of a process: the built-ins (commands, approval, tools, sub-agent) wired to their
 * dependencies, then the modules named in config, loaded into one `ExtensionRunner`. A module that
 * cannot be imported was refused before (preflight.ts); one whose factory throws is reported and
 * disabled, and the process carries on.
 */

import type { StreamFn } from "../../agent/types.js";
import { createApprovalExtension } from "../../extensions/approval/extension.js";
import { bashApprovalRule } from "../../extensions/approval/rules.js";
import type { ApprovalStore, DecideResult, Decision } from "../../extensions/approval/types.js";
import { createCommandsExtension } from "../../extensions/commands/index.js";
import { type ExtensionConfigEntry, resolveExtensionEntries } from "../../extensions/loader.js";
import type { McpServerStatus, McpServers } from "../../extensions/mcp/index.js";
import { ExtensionRunner } from "../../extensions/runner.js";
import { createSubAgentExtension } from "../../extensions/sub-agent.js";
import { createToolsExtension, type SandboxStatus } from "../../extensions/tools/index.js";
import type { ApprovalRule, ExtensionContext, ExtensionFactory, ThreadView } from "../../extensions/types.js";
import type { ApprovalConfig, ChannelsConfig, ExtensionsConfig } from "../config/types.js";
import type { ApprovalOutcome, SwitchboardMetrics } from "../http/metrics.js";
import type { Logger } from "../log.js";

/** The MCP servers and their extension, loaded only when servers are configured (the SDK is large). */
export interface McpKit {
  servers: McpServers;
  extension: ExtensionFactory;
  toolLines(status: McpServerStatus[]): string[];
}

export interface LoadExtensionsOptions {
  extensions: ExtensionsConfig;
  approval: ApprovalConfig;
  approvalStore: ApprovalStore;
  isAdmin(platform: string, userId: string): boolean;
  /** Root of the per-thread workspaces of the file and shell tools. */
  workspaceRoot: string;
  /** How tool commands run (probed at start). Absent: no sandbox, so every bash call asks. */
  sandbox?: SandboxStatus;
  /** The `/status` line about tools when this process runs none (a gateway-only process). */
  toolsStatus?: string;
  /** The channels' `bashApproval` and `settings` policies. Absent: the defaults. */
  channels?: ChannelsConfig;
  /** Whether `platform` has any admin. Absent: assume so. */
  hasAdmins?(platform: string): boolean;
  /**
   * The channel's settings policy, for every route to a thread's model or thinking level (commands,
   * extensions, sub-agents). Absent: everyone may.
   */
  mayChangeSettings?(platform: string, userId: string, isDirect: boolean): boolean;
  /** Masks the config's secrets in tool output (`redactSecrets` with them). Absent: nothing masked. */
  scrubToolOutput?: (text: string) => string;
  /** How sub-agents call their model (default: the provider registry's `streamSimple`). */
  streamFn?: StreamFn;
  /** How the sub-agents of one thread call their model (the thread's budget counts them); wins over `streamFn`. */
  streamFor?: (ctx: ExtensionContext) => StreamFn;
  /** `/usage` and `/budget`; absent when budgets are off. */
  budgets?: ExtensionFactory;
  /** The configured MCP servers of this process; absent when none are configured. */
  mcp?: McpKit;
  /** `/schedule` (scheduled prompts); absent when schedules are off. */
  schedules?: ExtensionFactory;
  /** Directory relative module paths are resolved against (the config file's). */
  baseDir: string;
  logger: Logger;
}

/** The built-ins, in the order their handlers run, before the configured modules. */
const BUILTIN_ORDER = ["commands", "approval", "tools", "mcp", "sub-agent", "schedules", "budgets"] as const;

/** Loads the built-ins and the configured modules; never rejects for an extension's fault. */
export async function loadExtensions(o: LoadExtensionsOptions): Promise<ExtensionRunner> {
  const logger = o.logger.child({ component: "extensions" });
  const mayChange = o.mayChangeSettings;
  const runner = new ExtensionRunner({
    logger,
    ...(mayChange
      ? {
          settingsPolicy: (thread: ThreadView) =>
            mayChange(thread.platform, thread.user?.id ?? "", thread.isDirect ?? false),
        }
      : {}),
    ...(o.scrubToolOutput ? { scrubToolOutput: o.scrubToolOutput } : {}),
  });
  const rules: Record<string, ApprovalRule> = { bash: bashApprovalRule(o.approval.bashPatterns) };
  for (const tool of o.approval.tools) rules[tool] = "always";
  const sandboxed = o.sandbox?.sandboxed ?? false;
  // Not regexes: outside a sandbox every bash call asks; inside, the channel's policy decides.
  const mustAsk = (toolName: string, thread: ThreadView): boolean => {
    if (toolName !== "bash") return false;
    if (!sandboxed) return true;
    const channel = o.channels?.[thread.platform as keyof ChannelsConfig];
    return channel?.bashApproval === "always";
  };
  // `/tools`: the tools registered up front (as the channel's `tools` list narrows them), then each MCP server.
  const toolLines = async (ctx: ExtensionContext): Promise<string[]> => {
    const active = o.channels?.[ctx.thread.platform as keyof ChannelsConfig]?.tools;
    const own = runner
      .enabled()
      .flatMap((ext) => ext.tools.map((t) => t.name))
      .filter((name) => !active || active.includes(name));
    const lines = own.length > 0 ? [`• Built-in and extensions: ${own.join(", ")}`] : [];
    if (o.mcp) lines.push(...o.mcp.toolLines(await o.mcp.servers.sharedStatus(ctx.thread.platform)));
    return lines;
  };
  const builtins: Record<(typeof BUILTIN_ORDER)[number], ExtensionFactory> = {
    commands: createCommandsExtension({
      statusLines: () => [
        `Tools: ${o.sandbox?.summary ?? o.toolsStatus ?? "not sandboxed: every bash call waits for an admin's approval"}`,
      ],
      toolLines,
    }),
    approval: createApprovalExtension({
      store: o.approvalStore,
      isAdmin: o.isAdmin,
      timeoutMs: o.approval.timeoutMs,
      rules,
      mustAsk,
      ...(o.hasAdmins ? { hasAdmins: o.hasAdmins } : {}),
    }),
    tools: createToolsExtension({
      root: o.workspaceRoot,
      ...(o.sandbox ? { bash: { runner: o.sandbox.runner } } : {}),
    }),
    mcp: o.mcp?.extension ?? (() => {}),
    "sub-agent": createSubAgentExtension({
      ...(o.streamFn ? { streamFn: o.streamFn } : {}),
      ...(o.streamFor ? { streamFor: o.streamFor } : {}),
    }),
    schedules: o.schedules ?? (() => {}),
    budgets: o.budgets ?? (() => {}),
  };
  const entries: ExtensionConfigEntry[] = [
    ...BUILTIN_ORDER.filter(
      (name) =>
        (name !== "mcp" || o.mcp) &&
        (name !== "schedules" || o.schedules) &&
        (name !== "budgets" || o.budgets),
    ).map((builtin) => ({ builtin })),
    ...o.extensions.modules.map((module) => ({ module })),
  ];
  await runner.load(await resolveExtensionEntries(entries, { builtins, baseDir: o.baseDir }));
  return runner;
}

const METRIC_OF: Partial<Record<Decision["outcome"], ApprovalOutcome>> = {
  approved: "approved",
  approved_always: "approved",
  denied: "denied",
  expired: "timeout",
};

/**
 * `store` with approval outcomes counted: each settled request once, in the process that settled
 * it (a gateway for an admin's reaction, the waiting worker for a timeout), and each call let
 * through by an earlier ♾️ as `remembered`.
 */
export function meteredApprovalStore(store: ApprovalStore, metrics: SwitchboardMetrics): ApprovalStore {
  return {
    create: (request) => store.create(request),
    attachMessage: (id, ref) => store.attachMessage(id, ref),
    get: (id) => store.get(id),
    findByMessage: (ref) => store.findByMessage(ref),
    async decide(id, decision): Promise<DecideResult> {
      const result = await store.decide(id, decision);
      const status = result.record?.status;
      const outcome = status && status !== "pending" ? METRIC_OF[status] : undefined;
      if (result.applied && outcome) metrics.approval(outcome);
      return result;
    },
    waitForDecision: (id, signal) => store.waitForDecision(id, signal),
    pendingIn: (threadKey) => store.pendingIn(threadKey),
    async isRemembered(threadKey, fingerprint) {
      const remembered = await store.isRemembered(threadKey, fingerprint);
      if (remembered) metrics.approval("remembered");
      return remembered;
    },
    close: () => store.close(),
  };
}
