/** Discord as a channel: its settings (`channels.discord`), secrets, checks and adapter. */
import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { defineChannel, required } from "../channel.js";
import { Secret, SecretFile, StringEnum } from "../config-schema.js";
import { discordProbe } from "./probe.js";

export const discordChannel = defineChannel({
  description: "Discord.",
  fields: {
    mode: StringEnum(["gateway"] as const, { default: "gateway", description: "Discord gateway WebSocket." }),
    botToken: Secret("Bot token. Default: $DISCORD_BOT_TOKEN."),
    botTokenFile: SecretFile("the bot token"),
    applicationId: Type.Optional(Type.String({ description: "Application id (for registering commands)." })),
    guildId: Type.Optional(
      Type.String({
        pattern: "^[0-9]+$",
        description: "Register slash commands in this guild (instant) instead of globally (up to an hour).",
      }),
    ),
    shardCount: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Total gateway shards (default 1; Discord asks for more at 2,500 guilds).",
      }),
    ),
    shardIds: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0 }), {
        description:
          "Shards this deployment connects (default all of 0..shardCount-1); each is held by one gateway process through a Redis lease.",
      }),
    ),
    apiUrl: Type.Optional(Type.String({ description: "Discord REST base URL (tests and proxies)." })),
  },
  env: { botToken: "DISCORD_BOT_TOKEN" },
  requires: (c) => [{ field: "botToken", value: c.botToken, variable: "DISCORD_BOT_TOKEN" }],
  probe: (c) => (c.botToken ? [discordProbe(c.botToken, c.apiUrl)] : []),
  commandMenu: true,
  async create(c, ctx) {
    const { DiscordAdapter } = await import("./adapter.js");
    const token = required(c.botToken, "channels.discord.botToken", "DISCORD_BOT_TOKEN");
    // Lease names carry a hash of the token, never the token.
    const bot = createHash("sha256").update(token).digest("hex").slice(0, 12);
    const lease = ctx.lease;
    return new DiscordAdapter({
      token,
      ...(c.apiUrl ? { apiUrl: c.apiUrl } : {}),
      ...(c.applicationId ? { applicationId: c.applicationId } : {}),
      ...(c.guildId ? { guildId: c.guildId } : {}),
      ...(c.shardCount || c.shardIds
        ? {
            shards: {
              ...(c.shardCount ? { count: c.shardCount } : {}),
              ...(c.shardIds ? { ids: c.shardIds } : {}),
            },
          }
        : {}),
      ...(lease ? { lease: (shard: number) => lease(`discord:${bot}:shard:${shard}`) } : {}),
      ...(c.editIntervalMs ? { editIntervalMs: c.editIntervalMs } : {}),
      ...ctx.shared,
      logger: ctx.logger,
    });
  },
});
