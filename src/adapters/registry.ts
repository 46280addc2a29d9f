/**
 * The channel registry: every platform Switchboard speaks, one line each. A platform is its folder
 * under `src/adapters/` (the adapter, its `channel.ts` definition) plus its line here; the gateway
 * builds the config schema, decides which channels run, builds and mounts the adapters and runs
 * their credential checks from this list alone. Order matters only for messages (`check`'s summary).
 */
import type { TProperties } from "@sinclair/typebox";
import type { RegisteredChannel } from "./channel.js";
import { discordChannel } from "./discord/channel.js";
import { slackChannel } from "./slack/channel.js";
import { telegramChannel } from "./telegram/channel.js";
import type { Platform } from "./types.js";
import { webChannel } from "./web/channel.js";

/** A set of channel definitions by platform name (the built-in one, or a test's with more). */
export type ChannelRegistry = Readonly<Record<string, RegisteredChannel>>;

/** The built-in channels. Keyed by `Platform`, so the union and this list cannot drift apart. */
export const CHANNELS = {
  slack: slackChannel,
  discord: discordChannel,
  telegram: telegramChannel,
  web: webChannel,
} as const satisfies { [P in Platform]: { fields: TProperties } };

/** The built-in channels as a registry (each definition's settings type erased, see `registered`). */
export const BUILT_IN_CHANNELS = CHANNELS as unknown as ChannelRegistry;
