/**
 * One Switchboard process, built in named steps from the config slices: the shared Redis (when
 * `runtime.redisUrl` or `runtime.redisCluster` is set; `shared-redis.ts`) and the stores kept in it
 * or in memory → the tooling: sandbox, MCP, extensions (`tooling.ts`) → the channels' adapters
 * (`channels.ts`) → the runtime and session store, Redis + BullMQ or embedded with files under
 * `dataDir` (`runtime-wiring.ts`) → the inbound pipeline → HTTP (mounts, probes, metrics) → the
 * process that starts and stops it all (`gateway-process.ts`).
 *
 * Roles: `gateway` runs the adapters' inbound side, the dispatcher and HTTP; `worker` runs the
 * runtime's workers and renders through outbound-only adapters; `all` runs both in one process. The
 * web chat's conversations live in the store (Redis, or files under `dataDir`), so a worker renders
 * into them and the gateway that serves the page follows their changes.
 * `createGateway` checks that Redis answers (in Redis mode) and builds everything without
 * connecting to platforms; `start` starts the role's parts; `stop` drains them (inbound first, then
 * running turns within the grace period).
 */
import type { ChannelRegistry } from "../../adapters/registry.js";
import type { ChannelAdapter } from "../../adapters/types.js";
import type { Clock } from "../../agent/clock.js";
import { AccessGate } from "../../extensions/access/gate.js";
import type { Role } from "../cli/types.js";
import { ConfigError } from "../config/errors.js";
import { collectSecretValues } from "../config/secrets.js";
import type { SwitchboardConfig } from "../config/types.js";
import { createMetrics, type SwitchboardMetrics } from "../http/metrics.js";
import { redisPingProbe } from "../http/readiness.js";
import { createHttpServer, type GatewayEnv, type GatewayHttpServer } from "../http/server.js";
import type { Logger } from "../log.js";
import { accessConfig } from "./access.js";
import { wireBudgets } from "./budgets/wiring.js";
import { attachmentIngester, buildChannels } from "./channels.js";
import { type Gateway, gatewayOf } from "./gateway-process.js";
import { InboundPipeline } from "./inbound.js";
import { registerConfiguredModels } from "./models.js";
import { preflightIssues } from "./preflight.js";
import { wireRuntime } from "./runtime-wiring.js";
import { wireSchedules } from "./schedules.js";
import { openSharedRedis, type SharedRedis, sharedStores } from "./shared-redis.js";
import { loadTooling } from "./tooling.js";

export type { Gateway } from "./gateway-process.js";

export interface GatewayOptions {
  config: SwitchboardConfig;
  /** The channel registry the config was loaded with (default the built-in one). */
  channels?: ChannelRegistry;
  role: Role;
  logger: Logger;
  /** The config file (relative extension paths start at its directory); undefined: the cwd. */
  configFile?: string;
  /** Lines for the person who started the process (the web chat's address). Default: nothing. */
  announce?: (line: string) => void;
  /** The clock scheduled prompts fire on (tests drive it by hand). Default: the system clock. */
  scheduleClock?: Clock;
  /** The clock budget periods and waits are read on (tests drive it by hand). Default: the system clock. */
  budgetClock?: Clock;
}

/** Builds a process of `role` from `config` (nothing listens or connects to platforms yet). */
export async function createGateway(o: GatewayOptions): Promise<Gateway> {
  const { config, role, logger } = o;
  // Refused before anything connects, found the same way by `switchboard check`.
  const refusedEarly = await preflightIssues(config, role);
  if (refusedEarly.length > 0) throw new ConfigError(refusedEarly, o.configFile);
  registerConfiguredModels(config.models);
  const metrics = createMetrics({ defaultLabels: { role } });
  const closers: (() => Promise<unknown>)[] = [];
  const shared = await openSharedRedis(config.runtime, logger);
  try {
    const stores = sharedStores(shared, config.runtime.keyPrefix, metrics);
    const gate = new AccessGate({ config: accessConfig(config.channels), notices: stores.notices, logger });
    // Every chat message and tool result leaves through the one secret scrubber, the config's own
    // secrets included.
    const secrets = collectSecretValues(config);
    const common = { config, role, shared, secrets, metrics, logger, closers };
    const schedules = wireSchedules({
      config,
      shared,
      logger,
      closers,
      ...(o.scheduleClock ? { clock: o.scheduleClock } : {}),
    });
    const budgets = await wireBudgets({
      config,
      shared,
      approvals: stores.approvals,
      isAdmin: (platform, userId) => gate.isAdmin(platform, userId),
      hasAdmins: (platform) => gate.hasAdmins(platform),
      metrics,
      logger,
      closers,
      ...(o.budgetClock ? { clock: o.budgetClock } : {}),
    });
    const tooling = await loadTooling({
      ...common,
      configFile: o.configFile,
      approvals: stores.approvals,
      gate,
      schedules: schedules.extension,
      budgets,
    });
    const channels = await buildChannels({ ...common, registry: o.channels });
    const attachments = attachmentIngester(config, channels, tooling.sandbox, stores.notices, logger);
    const { runtime, store, hostDeps, liveAgents } = wireRuntime({
      ...common,
      ...tooling,
      stores,
      channels,
      attachments,
      runObserver: schedules.observer,
      ...(config.schedules.enabled ? { quietMarker: config.schedules.quietMarker } : {}),
    });
    schedules.bind(runtime);
    const pipeline = new InboundPipeline({
      runtime,
      store,
      runner: tooling.runner,
      gate,
      channels: config.channels,
      hostDeps,
      metrics,
      logger,
    });
    const http = createHttpServer({
      config: config.http,
      logger: logger.child({ component: "http" }),
      metrics,
    });
    metrics.sampleActiveThreads(() => liveAgents.count);
    if (shared) observeRedis(shared, http, metrics, closers);
    if (role !== "worker") mountChannels(http, channels.raw);
    return gatewayOf({
      config,
      role,
      runtime,
      store,
      runner: tooling.runner,
      adapters: channels.adapters,
      web: channels.web,
      http,
      metrics,
      pipeline,
      sandbox: tooling.sandbox,
      shared,
      approvals: stores.approvals,
      schedules,
      closers,
      logger,
      announce: o.announce,
    });
  } catch (err) {
    // Nothing else holds the process open, so a failed build must not leave Redis connected.
    shared?.redis.disconnect();
    throw err;
  }
}

/** Redis answering PING is part of readiness; the runs queue's depth is a metric. */
function observeRedis(
  shared: SharedRedis,
  http: GatewayHttpServer,
  metrics: SwitchboardMetrics,
  closers: (() => Promise<unknown>)[],
): void {
  http.addProbe(redisPingProbe(shared.redis));
  const depth = shared.kit.queueDepthSampler(shared.redis, shared.queuePrefix);
  metrics.sampleQueueDepth(depth.sample);
  closers.push(depth.close);
}

/**
 * Mounts the adapters' webhook routes (`ChannelAdapter.routes`) and apps (`ChannelAdapter.mounts`:
 * the web chat's page). Routes are matched before any app whatever its prefix; all are public: each
 * adapter authenticates its platform's requests itself, and an app signs its users in itself.
 */
function mountChannels(http: GatewayHttpServer, adapters: Iterable<ChannelAdapter>): void {
  for (const adapter of adapters) {
    for (const route of adapter.routes?.() ?? [])
      http.mountNode(route.method, route.path, route.handle, { public: true });
    for (const mount of adapter.mounts?.() ?? [])
      http.mount(mount.prefix, mount.app<GatewayEnv>(), { public: true });
  }
}
