/** The Discord channel adapter (discord.js gateway + REST). */
export {
  createDiscordAdapter,
  DISCORD_INTENTS,
  DiscordAdapter,
  type DiscordAdapterConfig,
} from "./adapter.js";
export { DISCORD_CONTENT_LIMIT, INTERACTION_TOKEN_MS } from "./interactions.js";
