/**
 * One connection to one MCP server (`McpSession`): the SDK's `Client` over a transport, opened with
 * a deadline, its tool list read page by page and kept fresh on `notifications/tools/list_changed`,
 * calls with a timeout and the run's abort signal (the SDK tells the server with
 * `notifications/cancelled`), and whether the connection is still alive.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";

/** A tool as the server lists it. */
export type McpTool = Tool;

export interface McpSessionOptions {
  /** Deadline for connecting (initialize) and for each tool list request. */
  timeoutMs: number;
  /** The server's tool list changed (read again already). */
  onToolsChanged?(tools: McpTool[]): void;
  /** The connection ended (the process exited, or `close`). */
  onClose?(): void;
  /** How the connection ended, for messages (a local server's exit code and last words). */
  describeEnd?(): string;
}

const CLIENT_INFO = { name: "switchboard", version: "1" };
/** Pages of a tool list read at most (a server paging forever is cut off). */
const MAX_PAGES = 50;

export class McpSession {
  private open = true;

  private constructor(
    private readonly client: Client,
    private readonly o: McpSessionOptions,
  ) {}

  /** Connects over `transport`; rejects (the transport closed) when the server does not answer in time. */
  static async connect(transport: Transport, o: McpSessionOptions): Promise<McpSession> {
    let session: McpSession | undefined;
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      listChanged: {
        tools: {
          // Read again here, every page (the SDK's own refresh reads the first page only).
          autoRefresh: false,
          onChanged: () => {
            const live = session;
            if (!live?.open) return;
            live.listTools().then(
              (tools) => {
                if (live.open) o.onToolsChanged?.(tools);
              },
              () => undefined, // the next listing or call says what is wrong
            );
          },
        },
      },
    });
    client.onclose = () => {
      if (session) session.open = false;
      o.onClose?.();
    };
    try {
      await client.connect(transport, { timeout: o.timeoutMs });
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
    session = new McpSession(client, o);
    return session;
  }

  /** Whether the connection is still up. */
  get alive(): boolean {
    return this.open;
  }

  /** How it ended (or "still running"). */
  describeEnd(): string {
    return this.o.describeEnd?.() ?? "the connection closed";
  }

  /** Every tool the server offers (all pages). */
  async listTools(): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.client.listTools(cursor ? { cursor } : {}, { timeout: this.o.timeoutMs });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /** Calls `name`; rejects on timeout, abort, a protocol error or a closed connection. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    o: { timeoutMs: number; signal?: AbortSignal | undefined },
  ): Promise<CallToolResult> {
    // A signal of this call's own, tied to the run's: the SDK leaves a listener on what it is given,
    // and a run's signal outlives many calls (a finished call must not be "cancelled" by /stop).
    const own = new AbortController();
    const run = o.signal;
    const onAbort = () => own.abort(run?.reason);
    if (run?.aborted) onAbort();
    else run?.addEventListener("abort", onAbort, { once: true });
    try {
      const result = await this.client.callTool({ name, arguments: args }, undefined, {
        timeout: o.timeoutMs,
        signal: own.signal,
      });
      return result as CallToolResult;
    } finally {
      run?.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    this.open = false;
    await this.client.close().catch(() => undefined);
  }
}
