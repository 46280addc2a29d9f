/**
 * Guards around Bolt's HTTP receiver so that a signed but malformed Events API body never gets a
 * 500 (Slack retries those) and never leaves a request unanswered. Forged signatures still get 401
 * from the signature check, which runs before any shape is trusted.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import {
  defaultBodyLimit,
  HTTPModuleFunctions,
  isRawBodyError,
  isValidSlackRequest,
  type ReceiverProcessEventErrorHandlerArgs,
} from "@slack/bolt";
import type { StructuredLogger } from "../../agent/logger.js";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === "string" ? v : undefined;
};

const answer = (res: ServerResponse, status: number): void => {
  if (!res.headersSent) res.writeHead(status);
  if (!res.writableEnded) res.end();
};

/**
 * Bolt's `processEventErrorHandler` for the adapter: an error thrown while Bolt routes a signed
 * request (its middleware reads fields such as `team_id` or `event.channel` without checking their
 * types) means the body is malformed, not that Slack should try again. It is logged and answered
 * 200 (acknowledged and ignored) instead of Bolt's default 500; returns true when it answered.
 */
export function acknowledgeMalformedEvent(log: StructuredLogger) {
  return async (args: ReceiverProcessEventErrorHandlerArgs): Promise<boolean> => {
    const err = args.error as Error;
    if (args.response.headersSent) {
      log.error({ err }, "slack: error after an event was acknowledged");
      return false;
    }
    log.warn(
      { err },
      "slack: a signed request could not be processed (malformed event?); acknowledged and ignored",
    );
    answer(args.response, 200);
    return true;
  };
}

/**
 * Wrap Bolt's request listener: buffer the body first (Bolt reuses a buffered body), and answer
 * bodies whose top level is not a JSON object — which Bolt dereferences without a check, throwing
 * outside any handler — with 401 when the signature is wrong and 400 when it is right. Everything
 * else goes to Bolt unchanged. The returned listener never throws and always answers.
 */
export function guardRequestListener(
  inner: RequestListener,
  signingSecret: string,
  log: StructuredLogger,
  bodyLimit: number = defaultBodyLimit,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      let buffered: Awaited<ReturnType<typeof HTTPModuleFunctions.bufferIncomingMessage>>;
      try {
        buffered = await HTTPModuleFunctions.bufferIncomingMessage(req, bodyLimit);
      } catch (err) {
        const tooLarge = isRawBodyError(err) && (err as { statusCode?: number }).statusCode === 413;
        log.warn(
          { err },
          tooLarge
            ? `slack: request body over ${bodyLimit} bytes refused`
            : "slack: could not read request body",
        );
        answer(res, tooLarge ? 413 : 400);
        return;
      }
      let parsed: unknown;
      let parses = true;
      try {
        parsed = HTTPModuleFunctions.parseHTTPRequestBody(buffered);
      } catch {
        parses = false; // Bolt answers unparseable bodies itself (401 forged, 400 signed).
      }
      if (parses && !isObject(parsed)) {
        const signature = header(req, "x-slack-signature");
        const timestamp = Number(header(req, "x-slack-request-timestamp"));
        const signed =
          signature !== undefined &&
          Number.isFinite(timestamp) &&
          isValidSlackRequest({
            signingSecret,
            body: buffered.rawBody.toString(),
            headers: { "x-slack-signature": signature, "x-slack-request-timestamp": timestamp },
          });
        if (!signed) {
          answer(res, 401);
          return;
        }
        log.warn(
          { topLevel: parsed === null ? "null" : Array.isArray(parsed) ? "array" : typeof parsed },
          "slack: signed request whose body is not a JSON object refused (400)",
        );
        answer(res, 400);
        return;
      }
      inner(req, res);
    })().catch((err: unknown) => {
      log.error({ err }, "slack: could not handle HTTP request");
      answer(res, 500);
    });
  };
}
