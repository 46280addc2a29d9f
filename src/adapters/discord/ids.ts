/**
 * The Discord adapter's opaque ids.
 *
 * Thread keys are `discord:<guild|dm>:<channel>:<anchor>`. In a guild, `<channel>` is a text channel
 * and `<anchor>` is the conversation inside it: a thread's id, or the message a conversation started
 * on (a thread started on a message gets the message's id, so both read the same), or `0` for the
 * channel itself (slash commands outside threads). In a DM the anchor is `0`: one running
 * conversation. Message refs are `discord:<channel the message lives in>:<message>`.
 */
import { ChannelError } from "../types.js";

export interface DiscordThreadKey {
  /** Guild id, or undefined for a DM. */
  guild: string | undefined;
  channel: string;
  /** Thread id / conversation root message id; undefined for `0`. */
  anchor: string | undefined;
}

export interface DiscordMessageRef {
  channel: string;
  message: string;
}

const SNOWFLAKE = /^\d{1,20}$/;

export function encodeThreadKey(
  guild: string | undefined,
  channel: string,
  anchor: string | undefined,
): string {
  return `discord:${guild ?? "dm"}:${channel}:${anchor ?? "0"}`;
}

export function decodeThreadKey(key: string): DiscordThreadKey {
  const [p, guild, channel, anchor, extra] = key.split(":");
  if (
    p !== "discord" ||
    extra !== undefined ||
    !guild ||
    !channel ||
    !anchor ||
    (guild !== "dm" && !SNOWFLAKE.test(guild)) ||
    !SNOWFLAKE.test(channel) ||
    !SNOWFLAKE.test(anchor)
  )
    throw new ChannelError("bad_request", `not a Discord thread key: ${key}`, "discord");
  return { guild: guild === "dm" ? undefined : guild, channel, anchor: anchor === "0" ? undefined : anchor };
}

export function encodeMessageRef(channel: string, message: string): string {
  return `discord:${channel}:${message}`;
}

export function decodeMessageRef(ref: string): DiscordMessageRef {
  const [p, channel, message, extra] = ref.split(":");
  if (
    p !== "discord" ||
    extra !== undefined ||
    !channel ||
    !message ||
    !SNOWFLAKE.test(channel) ||
    !SNOWFLAKE.test(message)
  )
    throw new ChannelError("bad_request", `not a Discord message reference: ${ref}`, "discord");
  return { channel, message };
}
