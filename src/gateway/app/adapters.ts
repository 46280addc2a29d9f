/**
 * Builds the adapters of the enabled channels from their config slices. A platform's SDK is loaded
 * only when its channel is on (dynamic import), so a web-chat-only install never loads discord.js.
 *
 * `inbound: false` builds them outbound-only (worker processes render through them and never start
 * them). In Redis mode the adapters get the cross-process helpers: connection leases for unique
 * connections (Telegram polling, Discord shards) and a shared key-value store; in the
 * embedded mode the key-value store is a file under `dataDir`, so it survives a restart.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { SlackAdapter } from "../../adapters/slack/index.js";
import type { TelegramAdapter } from "../../adapters/telegram/index.js";
import type { ChannelAdapter, KeyValueStore, Platform } from "../../adapters/types.js";
import type { WebAuthStore, WebChatAdapter, WebChatStore } from "../../adapters/web/index.js";
import type { RedisClient } from "../../queue/redis/client.js";
import type { ChannelsConfig, HttpConfig } from "../config/types.js";
import { RedisConnectionLease } from "../connection-lease.js";
import { FileKeyValueStore } from "../file-kv.js";
import { hostRule } from "../http/host.js";
import type { Logger } from "../log.js";
import { RedisKeyValueStore } from "../redis-kv.js";
import { WEB_USER_ID } from "./platforms.js";

/** Redis-backed helpers the adapters share in Redis mode. */
export interface AdapterRedis {
  redis: RedisClient;
  prefix: string;
}

export interface BuildAdaptersOptions {
  channels: ChannelsConfig;
  http: HttpConfig;
  /** False in worker processes: outbound only, never started. */
  inbound: boolean;
  redis: AdapterRedis | undefined;
  /**
   * Without Redis: the directory of the embedded mode's files, where the adapters keep which thread
   * a message belongs to (so replies find their thread after a restart).
   */
  dataDir?: string;
  /** Where the web chat keeps conversations and sign-ins (default: this process's memory). */
  web?: { store: WebChatStore; auth: WebAuthStore };
  logger: Logger;
}

export interface BuiltAdapters {
  /** Enabled adapters by platform. */
  byPlatform: Map<Platform, ChannelAdapter>;
  /** The web chat, when enabled (the HTTP server mounts its routes). */
  web: WebChatAdapter | undefined;
  /** Slack, when enabled (http mode: the HTTP server mounts its events endpoint). */
  slack: SlackAdapter | undefined;
  /** Telegram, when enabled (webhook mode: the HTTP server mounts its webhook). */
  telegram: TelegramAdapter | undefined;
}

interface Shared {
  store?: KeyValueStore;
  keyPrefix?: string;
}

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

/** The adapters of every enabled channel. Throws when a channel's settings cannot make an adapter. */
export async function buildAdapters(o: BuildAdaptersOptions): Promise<BuiltAdapters> {
  const { channels, logger } = o;
  const byPlatform = new Map<Platform, ChannelAdapter>();
  const shared: Shared = o.redis
    ? {
        store: new RedisKeyValueStore(o.redis.redis),
        keyPrefix: o.redis.prefix,
      }
    : o.dataDir
      ? { store: new FileKeyValueStore(join(o.dataDir, "message-threads.jsonl")) }
      : {};
  const log = (platform: Platform) => logger.child({ platform });
  const lease = (name: string, platform: Platform) =>
    o.redis
      ? new RedisConnectionLease({
          redis: o.redis.redis,
          name,
          prefix: o.redis.prefix,
          logger: log(platform),
        })
      : undefined;

  let telegram: TelegramAdapter | undefined;
  let slack: SlackAdapter | undefined;
  const tg = channels.telegram;
  if (tg.enabled) {
    const { TelegramAdapter } = await import("../../adapters/telegram/index.js");
    const token = required(tg.botToken, "channels.telegram.botToken", "TELEGRAM_BOT_TOKEN");
    const polling = tg.mode === "polling";
    const pollLease =
      polling && o.inbound ? lease(`telegram:polling:${token.split(":")[0]}`, "telegram") : undefined;
    telegram = new TelegramAdapter({
      token,
      mode: tg.mode,
      ...(tg.apiRoot ? { apiRoot: tg.apiRoot } : {}),
      ...(tg.mode === "webhook" && tg.webhook.url && tg.webhook.secretToken
        ? { webhook: { url: tg.webhook.url, secretToken: tg.webhook.secretToken } }
        : {}),
      ...(pollLease ? { lease: pollLease } : {}),
      pollTimeoutSeconds: tg.pollTimeoutSeconds,
      ...(tg.editIntervalMs
        ? { editIntervalMs: tg.editIntervalMs, groupEditIntervalMs: tg.editIntervalMs }
        : {}),
      ...shared,
      logger: log("telegram"),
    });
    byPlatform.set("telegram", telegram);
  }

  const sl = channels.slack;
  if (sl.enabled) {
    const { SlackAdapter } = await import("../../adapters/slack/index.js");
    const botToken = required(sl.botToken, "channels.slack.botToken", "SLACK_BOT_TOKEN");
    const inbound = !o.inbound
      ? undefined
      : sl.mode === "socket"
        ? {
            mode: "socket" as const,
            appToken: required(sl.appToken, "channels.slack.appToken", "SLACK_APP_TOKEN"),
          }
        : {
            mode: "http" as const,
            signingSecret: required(sl.signingSecret, "channels.slack.signingSecret", "SLACK_SIGNING_SECRET"),
            path: sl.eventsPath,
          };
    slack = new SlackAdapter({
      botToken,
      ...(inbound ? { inbound } : {}),
      ...(sl.apiUrl ? { apiUrl: sl.apiUrl } : {}),
      ...(sl.editIntervalMs ? { editIntervalMs: sl.editIntervalMs } : {}),
      ...shared,
      logger: log("slack"),
    });
    byPlatform.set("slack", slack);
  }

  const dc = channels.discord;
  if (dc.enabled) {
    const { DiscordAdapter } = await import("../../adapters/discord/index.js");
    const token = required(dc.botToken, "channels.discord.botToken", "DISCORD_BOT_TOKEN");
    const bot = shortHash(token);
    byPlatform.set(
      "discord",
      new DiscordAdapter({
        token,
        ...(dc.apiUrl ? { apiUrl: dc.apiUrl } : {}),
        ...(dc.applicationId ? { applicationId: dc.applicationId } : {}),
        ...(dc.guildId ? { guildId: dc.guildId } : {}),
        ...(dc.shardCount || dc.shardIds
          ? {
              shards: {
                ...(dc.shardCount ? { count: dc.shardCount } : {}),
                ...(dc.shardIds ? { ids: dc.shardIds } : {}),
              },
            }
          : {}),
        ...(o.redis && o.inbound
          ? {
              lease: (shard: number) => {
                const held = lease(`discord:${bot}:shard:${shard}`, "discord");
                if (!held) throw new Error("a Discord shard lease needs Redis");
                return held;
              },
            }
          : {}),
        ...(dc.editIntervalMs ? { editIntervalMs: dc.editIntervalMs } : {}),
        ...shared,
        logger: log("discord"),
      }),
    );
  }

  let web: WebChatAdapter | undefined;
  const wc = channels.web;
  if (wc.enabled) {
    const { WebChatAdapter } = await import("../../adapters/web/index.js");
    web = new WebChatAdapter({
      userId: WEB_USER_ID,
      admins: webAdmins(wc.admins),
      ...(o.web ? { store: o.web.store, auth: o.web.auth } : {}),
      // The server's own rule: without its token, loopback names (and publicUrl's host) only.
      isAllowedHost: hostRule({ token: o.http.token, publicUrl: o.http.publicUrl }),
      ...(wc.editIntervalMs ? { editIntervalMs: wc.editIntervalMs } : {}),
      logger: log("web"),
    });
    byPlatform.set("web", web);
  }
  return { byPlatform, web, slack, telegram };
}

/**
 * The web chat's admins. The page is reached only by signing in with a link that `switchboard start`
 * printed, so whoever uses it operates this installation: with no admins configured, the page's user
 * is the admin (it may then DM the bot under the default `allowlist` policy and approve tool calls).
 */
export function webAdmins(configured: readonly string[]): string[] {
  return configured.length > 0 ? [...configured] : [WEB_USER_ID];
}

function required(value: string | undefined, field: string, envName: string): string {
  if (value) return value;
  throw new Error(`${field} is not set: set ${envName} (or the field's …File) to run this channel.`);
}
