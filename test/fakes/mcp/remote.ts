/**
 * The fake team MCP server over Streamable HTTP (stateless: a fresh server per request), on a free
 * local port. Records the Authorization header of every request, and can be switched to refuse
 * with 503 (a remote server down).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
// @ts-expect-error: plain JavaScript shared with the stdio server, without type declarations
import { createTeamServer } from "./team-tools.mjs";

export class RemoteTeamServer {
  readonly authorizations: string[] = [];
  down = false;
  private constructor(
    private readonly http: Server,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  static async start(): Promise<RemoteTeamServer> {
    let self: RemoteTeamServer | undefined;
    const http = createServer((req, res) => {
      void self?.handle(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    self = new RemoteTeamServer(http, port);
    return self;
  }

  private async handle(req: IncomingMessage, res: import("node:http").ServerResponse): Promise<void> {
    this.authorizations.push(String(req.headers.authorization ?? ""));
    if (this.down) {
      res.writeHead(503).end("down for maintenance");
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const server = createTeamServer({ http: true, headers: () => req.headers });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async close(): Promise<void> {
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}
