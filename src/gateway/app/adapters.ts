/**
 * Builds the adapters of the enabled channels of the registry, each by its definition's `create`
 * from its config slice. A platform's SDK is loaded only when its channel is on (dynamic import), so
 * a web-chat-only install never loads discord.js.
 *
 * `inbound: false` builds them outbound-only (worker processes render through them and never start
 * them). In Redis mode the adapters get the cross-process helpers: connection leases for unique
 * connections (Telegram polling, Discord shards) and a shared key-value store; in the
 * embedded mode the key-value store is a file under `dataDir`, so it survives a restart.
 */
import { join } from "node:path";
import type { TProperties } from "@sinclair/typebox";
import type { ChannelBuildContext, ChannelSlice } from "../../adapters/channel.js";
import { BUILT_IN_CHANNELS, type ChannelRegistry } from "../../adapters/registry.js";
import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import {
  type WebAuthStore,
  WebChatAdapter,
  type WebChatStore,
  type WebUploadStore,
} from "../../adapters/web/index.js";
import type { RedisClient } from "../../queue/redis/client.js";
import type { ChannelsConfig, HttpConfig } from "../config/types.js";
import { RedisConnectionLease } from "../connection-lease.js";
import { FileKeyValueStore } from "../file-kv.js";
import { hostRule } from "../http/host.js";
import type { Logger } from "../log.js";
import { RedisKeyValueStore } from "../redis-kv.js";

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
  web?: { store: WebChatStore; auth: WebAuthStore; uploads: WebUploadStore };
  /** The channels there are (default the built-in ones; a test adds its own). */
  registry?: ChannelRegistry;
  logger: Logger;
}

export interface BuiltAdapters {
  /** Enabled adapters by platform. */
  byPlatform: Map<Platform, ChannelAdapter>;
  /** The web chat, when enabled (the gateway prints its sign-in link; its page is one of its `mounts()`). */
  web: WebChatAdapter | undefined;
}

/** The adapters of every enabled channel. Throws when a channel's settings cannot make an adapter. */
export async function buildAdapters(o: BuildAdaptersOptions): Promise<BuiltAdapters> {
  const { logger } = o;
  const registry = o.registry ?? BUILT_IN_CHANNELS;
  const channels = o.channels as unknown as Record<string, ChannelSlice<TProperties> | undefined>;
  const byPlatform = new Map<Platform, ChannelAdapter>();
  const shared: ChannelBuildContext["shared"] = o.redis
    ? {
        store: new RedisKeyValueStore(o.redis.redis),
        keyPrefix: o.redis.prefix,
      }
    : o.dataDir
      ? { store: new FileKeyValueStore(join(o.dataDir, "message-threads.jsonl")) }
      : {};
  const isAllowedHost = hostRule({ token: o.http.token, publicUrl: o.http.publicUrl });
  for (const [name, definition] of Object.entries(registry)) {
    const slice = channels[name];
    if (!slice?.enabled) continue;
    const log = logger.child({ platform: name });
    const redis = o.redis;
    const adapter = await definition.create(slice, {
      inbound: o.inbound,
      shared,
      ...(redis && o.inbound
        ? {
            lease: (leaseName: string) =>
              new RedisConnectionLease({
                redis: redis.redis,
                name: leaseName,
                prefix: redis.prefix,
                logger: log,
              }),
          }
        : {}),
      // The server's own rule: without its token, loopback names (and publicUrl's host) only.
      isAllowedHost,
      ...(o.web ? { webChat: o.web } : {}),
      logger: log,
    });
    byPlatform.set(name as Platform, adapter);
  }
  const web = byPlatform.get("web");
  return { byPlatform, web: web instanceof WebChatAdapter ? web : undefined };
}
