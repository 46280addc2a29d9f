/** Telegram failures (grammY's `GrammyError` / `HttpError`) as the seam's `ChannelError`. */

import { GrammyError, HttpError } from "grammy";
import { errorMessage } from "../../agent/errors.js";
import { ChannelError } from "../types.js";
import { BotApiHttpError } from "./http.js";

/** True when Telegram rejected the HTML formatting; the caller retries as plain text. */
export function isEntityParseError(err: unknown): boolean {
  return (
    err instanceof GrammyError && err.error_code === 400 && /can't parse entities/i.test(err.description)
  );
}

/** True when Telegram ended a long poll because another one started (409 Conflict). */
export function isPollingConflict(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 409;
}

/** Normalise any error from a Bot API call. Messages name the method and Telegram's reason, never the token. */
export function toChannelError(err: unknown, method: string): ChannelError {
  if (err instanceof ChannelError) return err;
  if (err instanceof GrammyError) {
    // Bodies without a description get one from `describingFetch`; this covers any other client.
    const d =
      typeof err.description === "string" && err.description !== ""
        ? err.description
        : `error ${err.error_code ?? "without a code"} (no description)`;
    const msg = `Telegram ${method} failed: ${d}`;
    if (err.error_code === 429) {
      const s = err.parameters.retry_after ?? 1;
      return new ChannelError("rate_limited", msg, "telegram", s * 1000);
    }
    if (/message is not modified/i.test(d)) return new ChannelError("not_modified", msg, "telegram");
    if (/message is too long|text is too long/i.test(d)) return new ChannelError("too_long", msg, "telegram");
    if (/not found/i.test(d)) return new ChannelError("not_found", msg, "telegram");
    if (err.error_code === 403) return new ChannelError("forbidden", msg, "telegram");
    if (err.error_code === 401) {
      return new ChannelError("unauthorized", `${msg}. Check the bot token from @BotFather.`, "telegram");
    }
    if (err.error_code === 400) return new ChannelError("bad_request", msg, "telegram");
    return new ChannelError("other", msg, "telegram");
  }
  if (err instanceof HttpError) {
    const cause = err.error;
    if (cause instanceof BotApiHttpError) {
      const msg = `Telegram ${method} failed: ${cause.message}`;
      if (cause.status === 401) return new ChannelError("unauthorized", msg, "telegram");
      if (cause.status === 429) return new ChannelError("rate_limited", msg, "telegram", 1000);
      return new ChannelError("network", msg, "telegram");
    }
    // grammY keeps the cause's text out of its message (it may hold the URL, with the token).
    const code = (cause as { code?: unknown; cause?: { code?: unknown } } | undefined)?.cause?.code;
    const detail = typeof code === "string" ? ` (${code})` : "";
    return new ChannelError("network", `Telegram ${method} failed: network error${detail}`, "telegram");
  }
  return new ChannelError("other", `Telegram ${method} failed: ${errorMessage(err)}`, "telegram");
}
