/**
 * The webhook endpoint for Telegram updates, as a plain Node `(req, res)` handler the gateway's HTTP
 * server mounts. A request without the right `X-Telegram-Bot-Api-Secret-Token` header gets 401 and is
 * not read further; a body that is not JSON gets 400; a handled update gets 200. When handling fails
 * (e.g. the inbox is unreachable) the answer is 500, so Telegram delivers the update again later.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StructuredLogger } from "../../agent/logger.js";

export type NodeRequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface WebhookHandlerOptions {
  secretToken: string;
  log: StructuredLogger;
  /** Largest body accepted (default 1 MiB; updates are small). */
  maxBodyBytes?: number;
  /** Handles one parsed update; resolves false when it should be delivered again. */
  onUpdate(update: unknown): Promise<boolean>;
}

function sameSecret(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function createWebhookHandler(o: WebhookHandlerOptions): NodeRequestHandler {
  const max = o.maxBodyBytes ?? 1024 * 1024;
  return (req, res) => {
    const answer = (status: number, body = "") => {
      if (res.headersSent) return;
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(body);
    };
    if (req.method !== "POST") {
      answer(405, "POST only");
      req.resume();
      return;
    }
    if (!sameSecret(req.headers["x-telegram-bot-api-secret-token"], o.secretToken)) {
      o.log.warn({ remote: req.socket.remoteAddress }, "Telegram webhook request with a wrong secret token");
      answer(401, "unauthorized");
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        answer(413, "too large");
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (res.headersSent) return;
      let update: unknown;
      try {
        update = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch (err) {
        o.log.warn({ err }, "Telegram webhook body is not JSON; ignored");
        answer(400, "bad json");
        return;
      }
      o.onUpdate(update).then(
        (ok) => answer(ok ? 200 : 500),
        () => answer(500),
      );
    });
    req.on("error", () => answer(400));
  };
}
