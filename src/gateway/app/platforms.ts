/**
 * Which platform a thread belongs to (the thread key's prefix, which adapters encode) and the
 * settings every channel shares, so the inbound pipeline, the agent factory and the renderers read
 * one channel's slice without branching on platform names. The platforms are the channel
 * registry's (src/adapters/registry.ts).
 */
import { CHANNELS } from "../../adapters/registry.js";
import type { Platform } from "../../adapters/types.js";
import type { ChannelCommonConfig, ChannelsConfig } from "../config/types.js";

/**
 * The platform of `threadKey` (`slack:T1:C2:1712.33` → `slack`) among the `known` ones (default
 * the built-in channels; pass `config.channels` where a registry may add more); undefined for a key
 * no adapter made.
 */
export function platformOf(
  threadKey: string,
  known: Readonly<Record<string, unknown>> = CHANNELS,
): Platform | undefined {
  const prefix = threadKey.slice(0, threadKey.indexOf(":"));
  return prefix !== "" && Object.hasOwn(known, prefix) ? (prefix as Platform) : undefined;
}

/** The shared settings of every channel of `channels` (the registry's), by platform. */
export function channelSlices(channels: ChannelsConfig): [Platform, ChannelCommonConfig][] {
  return Object.entries(channels) as [Platform, ChannelCommonConfig][];
}
