/**
 * A proxy in front of the fake Telegram Bot API that fails a share of the bot's send and edit calls
 * the way Telegram does under trouble: 429 with `retry_after`, 500 and 502. Deterministic: every
 * `1/share`-th matching call fails, cycling through the failure kinds.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FailingProxy {
  root: string;
  injected: { status429: number; status5xx: number };
  close(): Promise<void>;
}

const FAILURES = [
  {
    status: 429,
    body: {
      ok: false,
      error_code: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    },
  },
  { status: 500, body: { ok: false, error_code: 500, description: "Internal Server Error" } },
  { status: 502, body: { ok: false, error_code: 502, description: "Bad Gateway" } },
];

export async function startFailingProxy(
  target: string,
  opts: { share?: number; methods?: string[] } = {},
): Promise<FailingProxy> {
  const every = Math.round(1 / (opts.share ?? 0.2));
  const methods = new Set(
    opts.methods ?? ["sendMessage", "editMessageText", "deleteMessage", "sendChatAction"],
  );
  const injected = { status429: 0, status5xx: 0 };
  const base = new URL(target);
  let matching = 0;
  let kind = 0;
  const server: Server = createServer((req, res) => {
    const method = (req.url ?? "").split("/").pop() ?? "";
    if (methods.has(method) && ++matching % every === 0) {
      const f = FAILURES[kind++ % FAILURES.length] as (typeof FAILURES)[number];
      if (f.status === 429) injected.status429++;
      else injected.status5xx++;
      req.resume();
      const data = JSON.stringify(f.body);
      res.writeHead(f.status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(data),
      });
      res.end(data);
      return;
    }
    const upstream = request(
      { host: base.hostname, port: base.port, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    root: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    injected,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
