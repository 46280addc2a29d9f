/** Model Context Protocol servers as agent tools: configured servers, their sessions, the extension. */
export { createMcpExtension, type McpToolDetails, mcpToolLines } from "./extension.js";
export { modelToolName } from "./names.js";
export { MAX_IMAGES, MAX_RESULT_TEXT_BYTES, mapCallResult } from "./results.js";
export {
  approvalOf,
  type McpOfferedTool,
  type McpServerStatus,
  McpServers,
  type McpServersOptions,
} from "./servers.js";
export type { McpApproval, McpCallOutcome, McpFailureKind, McpObserver, McpServerSpec } from "./types.js";
