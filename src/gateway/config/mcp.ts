/**
 * The checks of `tools.mcp.servers` the schema cannot express: each server is local (`command`) or
 * remote (`url`), not both; names are unique; fields of the other kind are not set (a header on a
 * local server would silently go nowhere); `channels` name platforms that exist.
 */
import type { McpServerSpec } from "../../extensions/mcp/types.js";
import { type ConfigIssue, joinPath } from "./errors.js";
import type { ToolsConfig } from "./types.js";

type ServerEntry = ToolsConfig["mcp"]["servers"][number];

/** Problems of the configured servers, each naming its field. */
export function mcpIssues(servers: readonly ServerEntry[], platforms: readonly string[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const at = (i: number, ...rest: (string | number)[]) => joinPath(["tools", "mcp", "servers", i, ...rest]);
  const firstOf = new Map<string, number>();
  servers.forEach((s, i) => {
    const first = firstOf.get(s.name.toLowerCase());
    if (first !== undefined)
      issues.push({ path: at(i, "name"), message: `repeats "${s.name}" of tools.mcp.servers[${first}]` });
    else firstOf.set(s.name.toLowerCase(), i);
    if (!s.command === !s.url) {
      issues.push({
        path: at(i),
        message: `needs exactly one of command (a local server, e.g. command: [npx, some-mcp-server]) and url (a remote one)`,
      });
    }
    if (s.command && Object.keys(s.headers).length > 0)
      issues.push({
        path: at(i, "headers"),
        message: "applies to remote servers (url) only; a local server gets env",
      });
    if (s.url && Object.keys(s.env).length > 0)
      issues.push({
        path: at(i, "env"),
        message: "applies to local servers (command) only; a remote server gets headers",
      });
    if (s.url && s.network !== "none")
      issues.push({
        path: at(i, "network"),
        message: "applies to local servers only; remote servers are called from the worker",
      });
    (s.channels ?? []).forEach((p, j) => {
      if (!platforms.includes(p))
        issues.push({
          path: at(i, "channels", j),
          message: `names no platform; use one of ${platforms.join(", ")}`,
        });
    });
  });
  return issues;
}

/** The servers as the MCP extension takes them. */
export function mcpServerSpecs(servers: readonly ServerEntry[]): McpServerSpec[] {
  return servers.map((s) => ({
    name: s.name,
    ...(s.command ? { command: s.command } : {}),
    ...(s.url ? { url: s.url } : {}),
    headers: s.headers,
    env: s.env,
    network: s.network,
    trusted: s.trusted,
    ...(s.approval ? { approval: s.approval } : {}),
    toolApproval: s.toolApproval,
    ...(s.allowTools ? { allowTools: s.allowTools } : {}),
    denyTools: s.denyTools,
    ...(s.channels ? { channels: s.channels } : {}),
    callTimeoutMs: s.callTimeoutMs,
    startTimeoutMs: s.startTimeoutMs,
    idleTimeoutMs: s.idleTimeoutMs,
  }));
}
