/**
 * Signed Events API requests, as Slack sends them: `x-slack-signature: v0=<hex hmac>` over
 * `v0:<timestamp>:<raw body>` with the app's signing secret, and `x-slack-request-timestamp`.
 */
import { createHmac } from "node:crypto";

export interface SignedPostOptions {
  /** Signing secret to sign with; pass a wrong one to forge. */
  secret: string;
  /** Unix seconds; default now. Slack rejects requests older than 5 minutes. */
  timestampSec?: number;
  /** `X-Slack-Retry-Num` / `X-Slack-Retry-Reason` for redeliveries. */
  retryNum?: number;
  retryReason?: string;
  contentType?: "application/json" | "application/x-www-form-urlencoded";
}

export interface SignedPostResult {
  status: number;
  body: string;
  /** Wall-clock ms from sending to the response (slash commands must be acked within 3 s). */
  elapsedMs: number;
}

export function slackSignature(secret: string, timestampSec: number, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestampSec}:${rawBody}`).digest("hex")}`;
}

/** POST `rawBody` to `url` signed with `opts.secret`; resolves with the HTTP answer. */
export async function postSigned(
  url: string,
  rawBody: string,
  opts: SignedPostOptions,
): Promise<SignedPostResult> {
  const ts = opts.timestampSec ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    "content-type": opts.contentType ?? "application/json",
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": slackSignature(opts.secret, ts, rawBody),
  };
  if (opts.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(opts.retryNum);
    headers["x-slack-retry-reason"] = opts.retryReason ?? "http_timeout";
  }
  const started = Date.now();
  const res = await fetch(url, { method: "POST", headers, body: rawBody });
  const body = await res.text();
  return { status: res.status, body, elapsedMs: Date.now() - started };
}
