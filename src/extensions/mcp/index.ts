/** Model Context Protocol servers as agent tools: configured servers, their sessions, the extension. */
export { createMcpExtension, mcpToolLines } from "./extension.js";
export { modelToolName } from "./names.js";
export { MAX_IMAGES, mapCallResult } from "./results.js";
export { type McpServerStatus, McpServers } from "./servers.js";
export type { McpToolCatalog } from "./shared-tool-lists.js";
export type { McpServerSpec } from "./types.js";
