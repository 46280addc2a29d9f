/**
 * Slack Web API failures → `ChannelError`. Slack answers platform errors with HTTP 200 and
 * `{ok:false,error}`; web-api throws them as coded errors, which are matched structurally here so no
 * SDK type leaves this folder. Messages name the method and Slack's error code, never the token.
 */
import { errorMessage } from "../../agent/errors.js";
import { ChannelError, type ChannelErrorCode } from "../types.js";

const PLATFORM_CODES: Record<string, ChannelErrorCode> = {
  msg_too_long: "too_long",
  message_not_found: "not_found",
  channel_not_found: "not_found",
  thread_not_found: "not_found",
  user_not_found: "not_found",
  not_in_channel: "forbidden",
  is_archived: "forbidden",
  restricted_action: "forbidden",
  cant_update_message: "forbidden",
  cant_delete_message: "forbidden",
  missing_scope: "forbidden",
  no_permission: "forbidden",
  invalid_auth: "unauthorized",
  not_authed: "unauthorized",
  account_inactive: "unauthorized",
  token_revoked: "unauthorized",
  token_expired: "unauthorized",
  ratelimited: "rate_limited",
  no_text: "bad_request",
  invalid_name: "bad_request",
  invalid_blocks: "bad_request",
  invalid_arguments: "bad_request",
};

interface CodedLike {
  code?: unknown;
  data?: { error?: unknown };
  retryAfter?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

/** The Slack error code (`msg_too_long`) of a web-api platform error, if it is one. */
export function slackErrorCode(err: unknown): string | undefined {
  const e = err as CodedLike | undefined;
  return e?.code === "slack_webapi_platform_error" && typeof e.data?.error === "string"
    ? e.data.error
    : undefined;
}

/** Normalise anything web-api threw while calling `method`. */
export function toChannelError(err: unknown, method: string): ChannelError {
  if (err instanceof ChannelError) return err;
  const e = (err ?? {}) as CodedLike;
  switch (e.code) {
    case "slack_webapi_rate_limited_error": {
      const sec = typeof e.retryAfter === "number" ? e.retryAfter : 1;
      return new ChannelError(
        "rate_limited",
        `Slack ${method}: rate limited for ${sec} s`,
        "slack",
        sec * 1000,
      );
    }
    case "slack_webapi_platform_error": {
      const code = typeof e.data?.error === "string" ? e.data.error : "unknown_error";
      const kind = PLATFORM_CODES[code] ?? "other";
      const hint =
        kind === "unauthorized"
          ? " (check the bot token)"
          : code === "missing_scope"
            ? " (add the scope in the app manifest and reinstall the app)"
            : code === "not_in_channel"
              ? " (invite the bot to the channel)"
              : "";
      return new ChannelError(
        kind,
        `Slack ${method} failed: ${code}${hint}`,
        "slack",
        kind === "rate_limited" ? 1000 : undefined,
      );
    }
    case "slack_webapi_http_error":
      return new ChannelError("other", `Slack ${method}: HTTP ${String(e.statusCode)}`, "slack");
    case "slack_webapi_request_error":
      return new ChannelError("network", `Slack ${method}: request failed (network)`, "slack");
    default:
      return new ChannelError("other", `Slack ${method} failed: ${errorMessage(e.message ?? err)}`, "slack");
  }
}
