/**
 * The access gate's config, from the channels' slices: empty allow-lists mean "everyone" in config
 * and `undefined` in the policy, and the web chat's page user is its admin unless admins are
 * configured (see `webAdmins`).
 */

import { webAdmins } from "../../adapters/web/channel.js";
import type { AccessConfig, PlatformAccessConfig } from "../../extensions/access/policy.js";
import type { ChannelCommonConfig, ChannelsConfig } from "../config/types.js";
import { channelSlices } from "./platforms.js";

function platformAccess(c: ChannelCommonConfig, admins: readonly string[]): PlatformAccessConfig {
  return {
    admins,
    ...(c.allowedUsers.length > 0 ? { allowedUsers: c.allowedUsers } : {}),
    ...(c.allowedChannels.length > 0 ? { allowedChannels: c.allowedChannels } : {}),
    requireMention: c.requireMention,
    dmPolicy: c.dmPolicy,
    ...(c.settings ? { settings: c.settings } : {}),
  };
}

/** Access rules by platform. */
export function accessConfig(channels: ChannelsConfig): AccessConfig {
  const out: Record<string, PlatformAccessConfig> = {};
  for (const [p, c] of channelSlices(channels)) {
    out[p] = platformAccess(c, p === "web" ? webAdmins(c.admins) : c.admins);
  }
  return out;
}
