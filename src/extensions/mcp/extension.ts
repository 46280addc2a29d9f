/**
 * The configured MCP servers as an extension: before every run, each thread is offered the tools
 * of the servers enabled for its platform (`McpServers.toolsFor`), as tools like any other: their
 * arguments validated against the server's JSON Schema by the agent, their calls passing the same
 * approval gate (`ask` tools declare `approval: "always"`), their results scrubbed of secrets.
 */
import type { TSchema } from "@sinclair/typebox";
import type { ExtensionContext, ExtensionFactory, ToolDefinition } from "../types.js";
import type { McpOfferedTool, McpServerStatus, McpServers } from "./servers.js";

/** What an MCP tool result carries besides its content. */
export interface McpToolDetails {
  server: string;
  tool: string;
}

const tellIn = (ctx: ExtensionContext) => (text: string) => ctx.host.post(text);

function definitionOf(servers: McpServers, t: McpOfferedTool): ToolDefinition<TSchema, McpToolDetails> {
  return {
    name: t.name,
    label: `${t.server}: ${t.tool}`,
    description: t.description,
    // The server's JSON Schema as is: the agent's validator reads JSON Schema, TypeBox or not.
    parameters: t.inputSchema as unknown as TSchema,
    approval: t.ask ? "always" : "never",
    async execute(_id, params, signal, _onUpdate, ctx) {
      const args = (params ?? {}) as Record<string, unknown>;
      const content = await servers.call(t.server, t.tool, args, ctx.thread.threadKey, signal, tellIn(ctx));
      return { content, details: { server: t.server, tool: t.tool } };
    },
  };
}

/** The extension offering `servers`' tools; register it under the name `mcp`. */
export function createMcpExtension(servers: McpServers): ExtensionFactory {
  return (api) => {
    api.registerToolSource(async (ctx) => {
      const offered = await servers.toolsFor(ctx.thread.threadKey, ctx.thread.platform, tellIn(ctx));
      return offered.map((t) => definitionOf(servers, t) as unknown as ToolDefinition);
    });
  };
}

/** `/tools` lines for the MCP servers of a thread: each server, how it stands, its tools. */
export function mcpToolLines(status: readonly McpServerStatus[], now: number = Date.now()): string[] {
  return status.map((s) => {
    const where = s.kind === "local" ? "local, in the thread's sandbox" : "remote";
    if (s.state === "failing") {
      const wait = Math.max(0, Math.ceil(((s.retryAt ?? now) - now) / 1000));
      const known = s.tools.length > 0 ? ` Last known tools: ${names(s.tools)}.` : "";
      return `• MCP "${s.server}" (${where}): unavailable, ${s.problem}; tried again in ${wait} s.${known}`;
    }
    if (s.state === "elsewhere")
      return `• MCP "${s.server}" (local): runs on the workers, in each thread's sandbox; its tools are offered with every run.`;
    if (s.state === "idle")
      return `• MCP "${s.server}" (${where}): not started yet; its tools are listed after its first use.`;
    if (s.tools.length === 0) return `• MCP "${s.server}" (${where}): no tools offered here.`;
    return `• MCP "${s.server}" (${where}): ${names(s.tools)}`;
  });
}

function names(tools: readonly McpOfferedTool[]): string {
  return tools.map((t) => (t.ask ? `${t.name} (asks)` : t.name)).join(", ");
}
