/**
 * MCP tool lists shared between the processes of a deployment (Redis in a split deployment): a
 * gateway's `/tools` and a worker that has not started a server yet use what another process
 * listed. Keyed by the server's name and what it runs or reaches, so a changed config lists anew;
 * entries written by another process (perhaps another version) are checked before use.
 */
import { createHash } from "node:crypto";
import type { StructuredLogger } from "../../agent/logger.js";
import { mcpToolListKey } from "../../redis-keys.js";
import type { McpTool } from "./session.js";
import type { McpServerSpec } from "./types.js";

/** Where the lists are kept: the same shape as the adapters' `KeyValueStore`. */
export interface McpToolCatalog {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

/** How long a shared list is kept without a process listing it again. */
const TTL_MS = 7 * 24 * 3600_000;

/** Reads and writes servers' tool lists in a catalog; neither ever rejects (a catalog down means listing here). */
export class SharedToolLists {
  constructor(
    private readonly catalog: McpToolCatalog,
    private readonly prefix: string,
    private readonly logger: StructuredLogger,
  ) {}

  /** Shares `tools` as the list of `spec` (in the background). */
  write(spec: McpServerSpec, tools: McpTool[]): void {
    this.catalog
      .set(this.keyOf(spec), JSON.stringify(tools), TTL_MS)
      .catch((e: unknown) =>
        this.logger.warn({ err: e, server: spec.name }, "could not share an MCP tool list"),
      );
  }

  /** The well-formed tools another process shared for `spec`, or undefined. */
  async read(spec: McpServerSpec): Promise<McpTool[] | undefined> {
    try {
      const text = await this.catalog.get(this.keyOf(spec));
      const tools = text ? (JSON.parse(text) as unknown) : undefined;
      const valid = Array.isArray(tools) ? tools.filter(isListedTool) : [];
      return valid.length > 0 ? valid : undefined;
    } catch (e) {
      this.logger.warn({ err: e, server: spec.name }, "could not read a shared MCP tool list");
      return undefined;
    }
  }

  private keyOf(spec: McpServerSpec): string {
    const what = createHash("sha256")
      .update(JSON.stringify(spec.command ?? spec.url ?? ""))
      .digest("hex")
      .slice(0, 16);
    return mcpToolListKey(this.prefix, spec.name, what);
  }
}

/** Whether `t` has what an offered tool needs (a name and an input schema object). */
function isListedTool(t: unknown): t is McpTool {
  if (t === null || typeof t !== "object") return false;
  const { name, inputSchema } = t as { name?: unknown; inputSchema?: unknown };
  return (
    typeof name === "string" && name.length > 0 && inputSchema !== null && typeof inputSchema === "object"
  );
}
