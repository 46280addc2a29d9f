/**
 * The Slack adapter's opaque ids. Thread keys are `slack:<team>:<channel>:<thread_ts>`, where
 * `thread_ts` is `0` for the top level of a DM (one running conversation per DM); message refs are
 * `slack:<team>:<channel>:<ts>`. Nobody outside this folder parses them.
 */
import { ChannelError } from "../types.js";

export interface SlackThread {
  team: string;
  channel: string;
  /** The thread's root `ts`; undefined for a DM's top level (key segment `0`). */
  threadTs: string | undefined;
}

export interface SlackMessageRef {
  team: string;
  channel: string;
  ts: string;
}

const KEY = /^slack:([A-Z0-9]+):([A-Z0-9]+):(0|\d+\.\d+)$/;

export function encodeThreadKey(team: string, channel: string, threadTs: string | undefined): string {
  return `slack:${team}:${channel}:${threadTs ?? "0"}`;
}

/** Decode a thread key; throws `ChannelError("bad_request")` for anything this adapter did not make. */
export function decodeThreadKey(key: string): SlackThread {
  const m = KEY.exec(key);
  if (!m?.[1] || !m[2] || !m[3])
    throw new ChannelError("bad_request", `not a Slack thread key: ${key}`, "slack");
  return { team: m[1], channel: m[2], threadTs: m[3] === "0" ? undefined : m[3] };
}

export function encodeMessageRef(team: string, channel: string, ts: string): string {
  return `slack:${team}:${channel}:${ts}`;
}

export function decodeMessageRef(ref: string): SlackMessageRef {
  const m = KEY.exec(ref);
  if (!m?.[1] || !m[2] || !m[3] || m[3] === "0")
    throw new ChannelError("bad_request", `not a Slack message reference: ${ref}`, "slack");
  return { team: m[1], channel: m[2], ts: m[3] };
}

/** Slack DM channel ids start with `D`. */
export function isDmChannel(channel: string): boolean {
  return channel.startsWith("D");
}

/** `1712345678.000100` → ms since the epoch. */
export function tsToMs(ts: string): number {
  const n = Number(ts);
  return Number.isFinite(n) ? Math.round(n * 1000) : 0;
}

/** Compare two Slack timestamps exactly (as numbers they lose the last microsecond digits). */
export function compareTs(a: string, b: string): number {
  const [ai = "0", af = ""] = a.split(".");
  const [bi = "0", bf = ""] = b.split(".");
  const x = BigInt(ai) * 1_000_000n + BigInt(af.padEnd(6, "0").slice(0, 6) || "0");
  const y = BigInt(bi) * 1_000_000n + BigInt(bf.padEnd(6, "0").slice(0, 6) || "0");
  return x < y ? -1 : x > y ? 1 : 0;
}
