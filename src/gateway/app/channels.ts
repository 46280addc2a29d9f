/**
 * The chat channels of a process, as one step of `createGateway`: the web chat's stores, the
 * enabled adapters (instrumented, their outbound text scrubbed of secrets), each channel's settings
 * and file policy, and the attachment ingester that follows that policy.
 */
import { redactOutbound } from "../../adapters/redact-outbound.js";
import type { ChannelRegistry } from "../../adapters/registry.js";
import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import type { WebChatAdapter } from "../../adapters/web/index.js";
import { findModel } from "../../agent/llm/models.js";
import type { NoticeMemory } from "../../extensions/access/notices.js";
import type { SandboxStatus } from "../../extensions/tools/index.js";
import { WorkspaceQuota } from "../../extensions/tools/quota.js";
import { ensureWorkspace } from "../../extensions/tools/workspace.js";
import { AttachmentIngester } from "../../queue/attachments/ingest.js";
import { effectiveLimits, type FilePolicy } from "../../queue/attachments/limits.js";
import type { Role } from "../cli/types.js";
import type { ChannelCommonConfig, SwitchboardConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import type { Logger } from "../log.js";
import { buildAdapters } from "./adapters.js";
import { instrumentAdapter } from "./instrument.js";
import { channelSlices } from "./platforms.js";
import type { SharedRedis } from "./shared-redis.js";
import { webChatStores } from "./web-stores.js";

export interface ChannelsOptions {
  config: SwitchboardConfig;
  role: Role;
  /** The channel registry the config was loaded with (default the built-in one). */
  registry: ChannelRegistry | undefined;
  shared: SharedRedis | undefined;
  secrets: readonly string[];
  metrics: SwitchboardMetrics;
  logger: Logger;
  /** Receives what must be closed when the process stops, in the order it was opened. */
  closers: (() => Promise<unknown>)[];
}

/** The enabled channels of a process and what the rest of it asks of them. */
export interface Channels {
  /** Enabled adapters (instrumented, outbound scrubbed) by platform. */
  adapters: Map<Platform, ChannelAdapter>;
  /** The adapters as built, before instrumenting: their routes and mounts go on the HTTP server. */
  raw: readonly ChannelAdapter[];
  /** The web chat, when enabled. */
  web: WebChatAdapter | undefined;
  adapterOf(platform: Platform): ChannelAdapter | undefined;
  /** A channel's settings; throws for a platform the config has no channel of. */
  settingsOf(platform: Platform): ChannelCommonConfig;
  /** The largest file an agent may send into a thread of `platform` (0: none). */
  maxUploadBytes(platform: Platform): number;
}

/** Builds the enabled channels' adapters (nothing connects yet). Throws when a channel's settings cannot make one. */
export async function buildChannels(o: ChannelsOptions): Promise<Channels> {
  const { config, shared, closers } = o;
  const { keyPrefix: prefix, dataDir } = config.runtime;
  const webStores = config.channels.web.enabled
    ? webChatStores(shared, prefix, dataDir, o.logger)
    : undefined;
  if (webStores) closers.push(() => webStores.store.close());
  // Only a process that serves the page or renders into it keeps the embedded file store tidy.
  const stopSweeping = webStores?.sweepUploads?.();
  if (stopSweeping) closers.push(async () => stopSweeping());
  const built = await buildAdapters({
    channels: config.channels,
    http: config.http,
    inbound: o.role !== "worker",
    redis: shared ? { redis: shared.redis, prefix } : undefined,
    dataDir,
    ...(webStores ? { web: webStores } : {}),
    ...(o.registry ? { registry: o.registry } : {}),
    logger: o.logger,
  });
  const adapters = new Map<Platform, ChannelAdapter>();
  for (const [p, a] of built.byPlatform)
    adapters.set(p, instrumentAdapter(redactOutbound(a, o.secrets), o.metrics));
  const adapterOf = (p: Platform) => adapters.get(p);
  const slices = new Map(channelSlices(config.channels));
  const settingsOf = (p: Platform): ChannelCommonConfig => {
    const slice = slices.get(p);
    if (!slice) throw new Error(`no channel "${p}" in the config; its registry lacks it`);
    return slice;
  };
  return {
    adapters,
    raw: [...built.byPlatform.values()],
    web: built.web,
    adapterOf,
    settingsOf,
    maxUploadBytes: (p) => {
      const limits = effectiveLimits(filePolicyOf(settingsOf(p)), adapterOf(p)?.capabilities.files);
      return limits.enabled ? limits.maxUploadBytes : 0;
    },
  };
}

/** A channel's file settings as the attachment limits read them. */
function filePolicyOf(settings: ChannelCommonConfig): FilePolicy {
  const f = settings.files;
  return {
    enabled: f.enabled,
    maxFileBytes: Math.floor(f.maxFileMb * 1024 * 1024),
    maxMessageBytes: Math.floor(f.maxMessageMb * 1024 * 1024),
    maxFiles: f.maxFilesPerMessage,
  };
}

/**
 * The ingester of the files users send: each channel's file policy, saved into the thread's
 * workspace (owned by the sandbox's user when it has one), pictures described by the vision model.
 */
export function attachmentIngester(
  config: SwitchboardConfig,
  channels: Channels,
  sandbox: SandboxStatus | undefined,
  notices: NoticeMemory,
  logger: Logger,
): AttachmentIngester {
  const owner = sandbox?.runner.owner;
  const vision = config.models.vision ? findModel(config.models.vision) : undefined;
  return new AttachmentIngester({
    adapterOf: channels.adapterOf,
    policyOf: (p) => filePolicyOf(channels.settingsOf(p)),
    workspaceOf: (threadKey) => ensureWorkspace(config.agent.workspaceDir, threadKey, owner),
    ...(owner ? { owner } : {}),
    quota: new WorkspaceQuota(config.tools.sandbox.limits.workspaceMb),
    ...(vision ? { vision } : {}),
    notices,
    onError: (err, context) => logger.warn({ err, context }, "attachment trouble"),
  });
}
