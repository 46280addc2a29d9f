/**
 * The MCP servers of a process (`tools.mcp.servers`), wired to its sandbox, workspaces, metrics and
 * logs; and `switchboard check`'s line per server. The MCP module (and the SDK it loads) is
 * imported only when servers are configured.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorMessage } from "../../agent/errors.js";
import type { McpServers, McpToolCatalog } from "../../extensions/mcp/index.js";
import { probeSandbox } from "../../extensions/tools/index.js";
import type { CommandRunner } from "../../extensions/tools/sandbox/types.js";
import { ensureWorkspace } from "../../extensions/tools/workspace.js";
import type { CheckProbe } from "../cli/types.js";
import { mcpServerSpecs } from "../config/mcp.js";
import type { ToolsConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import type { Logger } from "../log.js";
import type { McpKit } from "./extensions.js";

export interface LoadMcpOptions {
  tools: ToolsConfig;
  /** The process's sandbox; absent in a gateway-only process (local servers then run on the workers). */
  runner?: CommandRunner;
  workspaceRoot: string;
  metrics?: SwitchboardMetrics;
  /** Where the deployment's processes share tool lists (Redis), with its key prefix. */
  catalog?: { store: McpToolCatalog; prefix: string };
  logger: Logger;
}

function newServers(
  mcp: typeof import("../../extensions/mcp/index.js"),
  o: LoadMcpOptions & { specs: ToolsConfig["mcp"]["servers"] },
): McpServers {
  const owner = o.runner?.owner;
  const metrics = o.metrics;
  return new mcp.McpServers({
    specs: mcpServerSpecs(o.specs),
    ...(o.runner ? { runner: o.runner } : {}),
    ...(o.catalog ? { catalog: o.catalog.store, catalogPrefix: o.catalog.prefix } : {}),
    workspaceOf: (threadKey) => ensureWorkspace(o.workspaceRoot, threadKey, owner),
    logger: o.logger.child({ component: "mcp" }),
    ...(metrics
      ? {
          observer: {
            call: (server, outcome) => metrics.mcpCall(server, outcome),
            failure: (server, kind) => metrics.mcpFailure(server, kind),
          },
        }
      : {}),
  });
}

/** The MCP kit of this process, or undefined when no server is configured. */
export async function loadMcp(o: LoadMcpOptions): Promise<McpKit | undefined> {
  if (o.tools.mcp.servers.length === 0) return undefined;
  const mcp = await import("../../extensions/mcp/index.js");
  const servers = newServers(mcp, { ...o, specs: o.tools.mcp.servers });
  return {
    servers,
    extension: mcp.createMcpExtension(servers),
    toolLines: (status) => mcp.mcpToolLines(status),
  };
}

/**
 * One `switchboard check` line per server: a local one started in the sandbox (in a scratch
 * workspace, removed after), a remote one connected, and its tools listed. A server that does not
 * answer is a failed line; the gateway would still start and report it where it is needed.
 */
export function mcpProbes(tools: ToolsConfig, workspaceRoot: string, logger: Logger): CheckProbe[] {
  if (tools.mcp.servers.length === 0) return [];
  let sandbox: Promise<CommandRunner> | undefined;
  const runnerOnce = () => {
    sandbox ??= probeSandbox({ sandbox: tools.sandbox, workspaceRoot, createRoot: false }).then(
      (s) => s.runner,
    );
    return sandbox;
  };
  return tools.mcp.servers.map((spec) => ({
    name: `mcp ${spec.name}`,
    timeoutMs: spec.startTimeoutMs + 5000,
    async check() {
      const mcp = await import("../../extensions/mcp/index.js");
      const runner = spec.command ? await runnerOnce() : undefined;
      const scratch = await mkdtemp(join(tmpdir(), "switchboard-check-"));
      const servers = newServers(mcp, {
        tools,
        specs: [spec],
        ...(runner ? { runner } : {}),
        workspaceRoot: scratch,
        logger,
      });
      try {
        const [status] = await servers.probe("check:mcp");
        if (status?.state !== "ready") return { ok: false, detail: status?.problem ?? "did not start" };
        const names = status.tools.map((t) => t.name);
        const list =
          names.length > 8 ? `${names.slice(0, 8).join(", ")}, … (${names.length} in all)` : names.join(", ");
        return {
          ok: true,
          detail: names.length > 0 ? `${names.length} tools: ${list}` : "answers, offers no tools here",
        };
      } catch (e) {
        return { ok: false, detail: errorMessage(e) };
      } finally {
        await servers.close();
        await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
      }
    },
  }));
}
