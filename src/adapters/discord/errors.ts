/**
 * discord.js / @discordjs/rest failures → `ChannelError`, matched structurally so no SDK type leaves
 * this folder. Discord reports a numeric `code` in the JSON body (10008 Unknown Message, 50013
 * Missing Permissions, 50035 Invalid Form Body, …) besides the HTTP status.
 */
import { errorMessage } from "../../agent/errors.js";
import { ChannelError, type ChannelErrorCode } from "../types.js";

const CODES: Record<number, ChannelErrorCode> = {
  10003: "not_found",
  10008: "not_found",
  10015: "not_found",
  10062: "not_found",
  10014: "bad_request",
  50001: "forbidden",
  50013: "forbidden",
  50005: "forbidden",
  50024: "forbidden",
  50006: "bad_request",
  50027: "unauthorized",
  160004: "bad_request",
};

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  status?: unknown;
  retryAfter?: unknown;
  message?: unknown;
}

/** Discord's numeric error code, if `err` is a Discord API error. */
export function discordCode(err: unknown): number | undefined {
  const e = err as ErrorLike | undefined;
  return typeof e?.code === "number" && typeof e.status === "number" ? e.code : undefined;
}

export function toChannelError(err: unknown, what: string): ChannelError {
  if (err instanceof ChannelError) return err;
  const e = (err ?? {}) as ErrorLike;
  const message = typeof e.message === "string" ? e.message : errorMessage(e.message ?? err);
  // @discordjs/rest names it `RateLimitError[<route>]`.
  if (typeof e.name === "string" && e.name.startsWith("RateLimitError") && typeof e.retryAfter === "number") {
    return new ChannelError(
      "rate_limited",
      `Discord ${what}: rate limited for ${e.retryAfter} ms`,
      "discord",
      e.retryAfter,
    );
  }
  if (typeof e.status === "number") {
    const code = typeof e.code === "number" ? e.code : 0;
    let kind: ChannelErrorCode =
      CODES[code] ??
      (e.status === 401
        ? "unauthorized"
        : e.status === 403
          ? "forbidden"
          : e.status === 404
            ? "not_found"
            : e.status === 429
              ? "rate_limited"
              : e.status >= 400 && e.status < 500
                ? "bad_request"
                : "other");
    if (code === 50035 && /BASE_TYPE_MAX_LENGTH/.test(message)) kind = "too_long";
    const hint =
      kind === "forbidden"
        ? " (check the bot's permissions in this channel)"
        : kind === "unauthorized" && code !== 50027
          ? " (check the bot token)"
          : "";
    return new ChannelError(
      kind,
      `Discord ${what} failed: ${message.split("\n").join("; ")}${hint}`,
      "discord",
      kind === "rate_limited" ? 1000 : undefined,
    );
  }
  if (e.name === "AbortError" || /fetch failed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket/i.test(message)) {
    return new ChannelError("network", `Discord ${what}: request failed (network)`, "discord");
  }
  return new ChannelError("other", `Discord ${what} failed: ${message}`, "discord");
}
