/**
 * The MCP side of the tools: what one configured Model Context Protocol server is (`McpServerSpec`,
 * the resolved `tools.mcp.servers[]` entry) and what the process tells the outside about its calls
 * (`McpObserver`, metrics).
 */

/** What a server's tool may do without asking: run (`allow`), wait for an admin (`ask`), never be offered (`deny`). */
export type McpApproval = "allow" | "ask" | "deny";

/** One configured server, defaults filled. Exactly one of `command` and `url` is set. */
export interface McpServerSpec {
  /** Unique; its tools are offered as `<name>_<tool>`. */
  name: string;
  /** A local server: the program and its arguments, started in the thread's sandbox (stdio). */
  command?: readonly string[];
  /** A remote server's Streamable HTTP endpoint, called from the worker. */
  url?: string;
  /** Request headers of a remote server (credentials come from `${VAR}` references). */
  headers: Readonly<Record<string, string>>;
  /** Variables a local server gets besides the sandbox's allowlist (its own credentials). */
  env: Readonly<Record<string, string>>;
  /** A local server's network: none (the default), or the host's. */
  network: "none" | "host";
  /** Its tools run without asking unless `approval`/`toolApproval` say otherwise. */
  trusted: boolean;
  /** The default of its tools; absent: `allow` when trusted, else `ask`. */
  approval?: McpApproval;
  /** Per tool (the server's own tool name). */
  toolApproval: Readonly<Record<string, McpApproval>>;
  /** Only these of its tools are offered; absent: all. */
  allowTools?: readonly string[];
  /** These of its tools are never offered. */
  denyTools: readonly string[];
  /** Platforms whose threads get its tools; absent: all. */
  channels?: readonly string[];
  /** Longest a call may take. */
  callTimeoutMs: number;
  /** Longest starting (or connecting) and listing tools may take. */
  startTimeoutMs: number;
  /** A local server's process ends after this long without a call in its thread. */
  idleTimeoutMs: number;
}

/** How one MCP tool call ended, for metrics. */
export type McpCallOutcome = "ok" | "error" | "timeout" | "cancelled" | "unavailable";

/** What went wrong with a server itself, for metrics. */
export type McpFailureKind = "start" | "crash" | "list";

/** Receives what happens to MCP calls and servers (the gateway counts it in `/metrics`). */
export interface McpObserver {
  call(server: string, outcome: McpCallOutcome): void;
  failure(server: string, kind: McpFailureKind): void;
}
