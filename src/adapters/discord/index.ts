/** The Discord channel adapter (discord.js gateway + REST). */
export {
  DiscordAdapter,
  type DiscordAdapterConfig,
} from "./adapter.js";
