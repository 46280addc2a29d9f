/**
 * What a process's agents think and act with: the sandbox tools run in, the LLM calls, the MCP
 * servers and the extensions, loaded and checked as one step of `createGateway`.
 */
import { dirname } from "node:path";
import type { Model } from "../../agent/llm/types.js";
import type { AccessGate } from "../../extensions/access/gate.js";
import type { ApprovalStore } from "../../extensions/approval/types.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import type { SandboxStatus } from "../../extensions/tools/index.js";
import type { ExtensionFactory } from "../../extensions/types.js";
import type { Role } from "../cli/types.js";
import { ConfigError } from "../config/errors.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import { type Logger, redactSecrets } from "../log.js";
import { RedisKeyValueStore } from "../redis-kv.js";
import { budgetCaller } from "./agent-factory.js";
import type { BudgetWiring } from "./budgets/wiring.js";
import { toolIssues } from "./config-check.js";
import { loadExtensions } from "./extensions.js";
import { type LlmCalls, llmCalls } from "./llm-calls.js";
import { loadMcp } from "./mcp.js";
import { chooseDefaultModel, modelIssues } from "./models.js";
import { reportSandbox, setUpSandbox, TOOLS_RUN_BY_WORKERS } from "./sandbox.js";
import type { SharedRedis } from "./shared-redis.js";

export interface ToolingOptions {
  config: SwitchboardConfig;
  role: Role;
  /** The config file (relative extension paths start at its directory); undefined: the cwd. */
  configFile: string | undefined;
  shared: SharedRedis | undefined;
  approvals: ApprovalStore;
  gate: AccessGate;
  /** Every chat message and tool result leaves through the one secret scrubber; these are the config's. */
  secrets: readonly string[];
  metrics: SwitchboardMetrics;
  logger: Logger;
  /** Receives what must be closed when the process stops, in the order it was opened. */
  closers: (() => Promise<unknown>)[];
  /** `/schedule`, when schedules are enabled. */
  schedules?: ExtensionFactory | undefined;
  /** The budget gate every model call passes and `/usage`, `/budget`; both undefined when budgets are off. */
  budgets?: BudgetWiring;
}

export interface Tooling {
  /** Undefined in a `gateway` process: only processes that run tools need the sandbox. */
  sandbox: SandboxStatus | undefined;
  calls: LlmCalls;
  runner: ExtensionRunner;
  /** The model threads start with; undefined when no model has credentials. */
  defaultModel: Model | undefined;
}

/**
 * Sets up the sandbox (`tools.sandbox.mode: bwrap` fails here when it cannot run), the MCP servers
 * and the extensions, then refuses the config (`ConfigError`) for the model and tool issues
 * `switchboard check` finds the same way (extensions may add models and tools).
 */
export async function loadTooling(o: ToolingOptions): Promise<Tooling> {
  const { config, logger, closers } = o;
  const sandbox =
    o.role === "gateway" ? undefined : await setUpSandbox(config.tools, config.agent.workspaceDir);
  if (sandbox?.runner.close) closers.push(async () => sandbox.runner.close?.());
  const calls = llmCalls({
    stallTimeoutMs: config.models.stallTimeoutMs,
    metrics: o.metrics,
    logger,
    ...(o.budgets?.gate ? { budgets: o.budgets.gate } : {}),
  });
  const prefix = config.runtime.keyPrefix;
  const mcp = await loadMcp({
    tools: config.tools,
    ...(sandbox ? { runner: sandbox.runner } : {}),
    workspaceRoot: config.agent.workspaceDir,
    metrics: o.metrics,
    ...(o.shared ? { catalog: { store: new RedisKeyValueStore(o.shared.redis), prefix } } : {}),
    logger,
  });
  if (mcp) closers.push(() => mcp.servers.close());
  const { gate, secrets } = o;
  const runner = await loadExtensions({
    extensions: config.extensions,
    scrubToolOutput: (text) => redactSecrets(text, secrets),
    approval: config.approval,
    approvalStore: o.approvals,
    isAdmin: (platform, userId) => gate.isAdmin(platform, userId),
    hasAdmins: (platform) => gate.hasAdmins(platform),
    mayChangeSettings: (platform, userId, isDirect) => gate.mayChangeSettings(platform, userId, isDirect),
    channels: config.channels,
    ...(sandbox ? { sandbox } : { toolsStatus: TOOLS_RUN_BY_WORKERS }),
    workspaceRoot: config.agent.workspaceDir,
    streamFn: calls.stream,
    // A sub-agent's calls count against its thread's budget, like the thread's own.
    streamFor: (ctx) =>
      calls.streamFor(() =>
        budgetCaller(ctx.thread.threadKey, ctx.thread.platform, ctx.thread.user, ctx.host),
      ),
    ...(o.budgets?.extension ? { budgets: o.budgets.extension } : {}),
    ...(mcp ? { mcp } : {}),
    ...(o.schedules ? { schedules: o.schedules } : {}),
    baseDir: o.configFile ? dirname(o.configFile) : process.cwd(),
    logger,
  });
  const refused = [...modelIssues(config.models), ...toolIssues(config, runner)];
  if (refused.length > 0) throw new ConfigError(refused, o.configFile);
  if (sandbox) reportSandbox(sandbox, logger);
  const defaultModel = chooseDefaultModel(config.models);
  if (!defaultModel && o.role !== "gateway")
    logger.warn("no model has credentials; threads will answer with set-up instructions");
  return { sandbox, calls, runner, defaultModel };
}
