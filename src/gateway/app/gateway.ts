/**
 * One Switchboard process, wired from the config slices: stores → runtime (Redis + BullMQ when
 * `runtime.redisUrl` is set, else embedded with files under `dataDir`) → extensions → adapters →
 * inbound pipeline → agent factory → renderers → HTTP (mounts, probes, metrics).
 *
 * Roles: `gateway` runs the adapters' inbound side, the dispatcher and HTTP; `worker` runs the
 * runtime's workers and renders through outbound-only adapters; `all` runs both in one process.
 * `createGateway` checks that Redis answers (in Redis mode) and builds everything without
 * connecting to platforms; `start` starts the role's parts; `stop` drains them (inbound first, then
 * running turns within the grace period).
 */
import { dirname, join } from "node:path";
import { MemoryRateLimiter } from "../../adapters/render/rate-limiter.js";
import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import type { WebChatAdapter } from "../../adapters/web/index.js";
import { AccessGate } from "../../extensions/access/gate.js";
import { MemoryNoticeMemory, RedisNoticeMemory } from "../../extensions/access/notices.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import { MemoryApprovalStore, RedisApprovalStore } from "../../queue/approvals/index.js";
import { EmbeddedRuntime } from "../../queue/embedded/embedded-runtime.js";
import type { RuntimeOptions } from "../../queue/redis/redis-runtime.js";
import { SessionKeys } from "../../queue/store/keys.js";
import { RedisSessionStore } from "../../queue/store/redis-store.js";
import { encodeThreadKey } from "../../queue/store/thread-dir.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { Runtime } from "../../queue/types.js";
import type { Role } from "../cli/types.js";
import { ConfigError } from "../config/errors.js";
import type { SwitchboardConfig } from "../config/types.js";
import { createMetrics, type SwitchboardMetrics } from "../http/metrics.js";
import { redisPingProbe } from "../http/readiness.js";
import { createHttpServer, type GatewayEnv, type GatewayHttpServer } from "../http/server.js";
import type { Logger } from "../log.js";
import { RedisRateLimiter } from "../redis-rate-limiter.js";
import { accessConfig } from "./access.js";
import { type BuiltAdapters, buildAdapters } from "./adapters.js";
import { createAgentFactory } from "./agent-factory.js";
import { toolIssues } from "./config-check.js";
import { loadExtensions, meteredApprovalStore } from "./extensions.js";
import { InboundPipeline } from "./inbound.js";
import { instrumentAdapter } from "./instrument.js";
import { chooseDefaultModel, modelIssues, modelRefOf, registerConfiguredModels } from "./models.js";
import { platformOf } from "./platforms.js";
import { adapterProbe } from "./probes.js";
import { createSinkFactory } from "./sinks.js";
import { DEFAULT_SYSTEM_PROMPT } from "./system-prompt.js";
import { threadContextFormatter } from "./thread-context.js";
import type { ThreadHostDeps } from "./thread-host.js";

export interface GatewayOptions {
  config: SwitchboardConfig;
  role: Role;
  logger: Logger;
  /** The config file (relative extension paths start at its directory); undefined: the cwd. */
  configFile?: string;
  /** Lines for the person who started the process (the web chat's address). Default: nothing. */
  announce?: (line: string) => void;
}

/** A built process. Fields are exposed for tests and for the CLI's messages. */
export interface Gateway {
  readonly role: Role;
  readonly runtime: Runtime;
  readonly store: SessionStore;
  readonly runner: ExtensionRunner;
  /** Enabled adapters (instrumented) by platform. */
  readonly adapters: ReadonlyMap<Platform, ChannelAdapter>;
  readonly web: WebChatAdapter | undefined;
  readonly http: GatewayHttpServer;
  readonly metrics: SwitchboardMetrics;
  /** The HTTP server's address once started. */
  readonly url: string | undefined;
  /** The web chat's address once started (when the web chat runs in this process). */
  readonly webUrl: string | undefined;
  start(): Promise<void>;
  /** Drains and closes everything. Safe to call more than once. */
  stop(): Promise<void>;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Builds a process of `role` from `config` (nothing listens or connects to platforms yet). */
export async function createGateway(o: GatewayOptions): Promise<Gateway> {
  const { config, role } = o;
  const logger = o.logger;
  const cfg = config.runtime;
  const prefix = cfg.keyPrefix;
  registerConfiguredModels(config.models);
  const metrics = createMetrics({ defaultLabels: { role } });
  const closers: (() => Promise<unknown>)[] = [];

  // ioredis and BullMQ load only in Redis mode: the embedded mode starts without them.
  const kit = cfg.redisUrl ? await import("./redis-kit.js") : undefined;
  const redis = kit && cfg.redisUrl ? kit.connectRedis(cfg.redisUrl, logger) : undefined;

  try {
    // Before anything else connects (the runs queue, the workers): Redis down is one clear error.
    if (redis && kit && cfg.redisUrl) await kit.reachRedis(redis, cfg.redisUrl);
    const approvalStore = meteredApprovalStore(
      redis ? new RedisApprovalStore(redis, { prefix }) : new MemoryApprovalStore(),
      metrics,
    );
    const gate = new AccessGate({
      config: accessConfig(config.channels),
      notices: redis ? new RedisNoticeMemory(redis, prefix) : new MemoryNoticeMemory(),
      logger,
    });
    const runner = await loadExtensions({
      extensions: config.extensions,
      approval: config.approval,
      approvalStore,
      isAdmin: (platform, userId) => gate.isAdmin(platform, userId),
      workspaceRoot: config.agent.workspaceDir,
      baseDir: o.configFile ? dirname(o.configFile) : process.cwd(),
      logger,
    });
    // Refused here, and found the same way by `switchboard check` (extensions may add models and tools).
    const refused = [...modelIssues(config.models), ...toolIssues(config, runner)];
    if (refused.length > 0) throw new ConfigError(refused, o.configFile);
    const defaultModel = chooseDefaultModel(config.models);
    if (!defaultModel && role !== "gateway")
      logger.warn("no model has credentials; threads will answer with set-up instructions");

    // The web chat lives in the gateway's memory: a separate worker cannot post into it.
    const channels =
      role === "worker"
        ? { ...config.channels, web: { ...config.channels.web, enabled: false } }
        : config.channels;
    const built = await buildAdapters({
      channels,
      http: config.http,
      inbound: role !== "worker",
      redis: redis ? { redis, prefix } : undefined,
      logger,
    });
    const adapters = new Map<Platform, ChannelAdapter>();
    for (const [p, a] of built.byPlatform) adapters.set(p, instrumentAdapter(a, metrics));
    const adapterOf = (p: Platform) => adapters.get(p);

    let runtime: Runtime | undefined;
    let store: SessionStore | undefined;
    const hostDeps: ThreadHostDeps = {
      get runtime(): Runtime {
        if (!runtime) throw new Error("the runtime is not built yet");
        return runtime;
      },
      get store(): SessionStore {
        if (!store) throw new Error("the session store is not built yet");
        return store;
      },
      adapterOf,
      defaultModel: () => (defaultModel ? modelRefOf(defaultModel) : undefined),
      queueModeOf: (p) => config.channels[p].deliveryMode,
      sessionLocation: (threadKey, sessionId) =>
        redis
          ? `Redis key ${new SessionKeys(prefix).session(threadKey, sessionId)}`
          : join(cfg.dataDir, "sessions", encodeThreadKey(threadKey), `${sessionId}.jsonl`),
      logger,
    };
    const liveAgents = { count: 0 };
    const enabled = [...adapters.keys()].map((p) => config.channels[p]);
    const common: Omit<RuntimeOptions, "store"> = {
      sinks: createSinkFactory({
        adapterOf,
        limiter: redis ? new RedisRateLimiter({ redis, prefix }) : new MemoryRateLimiter(),
        metrics,
        logger,
      }),
      agentFactory: createAgentFactory({
        runner,
        hostDeps,
        channels: config.channels,
        models: config.models,
        defaultModel,
        systemPrompt: config.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        liveAgents,
        logger,
      }),
      format: threadContextFormatter,
      modeOf: (threadKey) => {
        const platform = platformOf(threadKey);
        return platform ? config.channels[platform].deliveryMode : undefined;
      },
      leaseTtlMs: cfg.leaseTtlMs,
      concurrency: cfg.concurrency,
      agentIdleMs: cfg.idleEvictMs,
      compaction: { settings: { ...config.agent.compaction } },
      // The runtime's cap and debounce are per process; take the most generous enabled channel's.
      inboxCap: enabled.length > 0 ? Math.max(...enabled.map((c) => c.inboxCap)) : 20,
      collectDebounceMs: enabled.length > 0 ? Math.max(...enabled.map((c) => c.collectWindowMs)) : 500,
      onError: (err, context) => logger.error({ err: errorText(err), context }, "runtime error"),
    };
    if (redis && kit) {
      const redisStore = new RedisSessionStore({ redis, prefix, logger });
      store = redisStore;
      runtime = new kit.RedisRuntime({ ...common, store: redisStore, redis, prefix });
      closers.push(() => redisStore.close());
    } else {
      const embedded = new EmbeddedRuntime({ ...common, dataDir: cfg.dataDir });
      store = embedded.store;
      runtime = embedded;
    }
    const rt = runtime;
    const sessionStore = store;

    const pipeline = new InboundPipeline({
      runtime: rt,
      store: sessionStore,
      runner,
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
    if (redis && kit) {
      http.addProbe(redisPingProbe(redis));
      const depth = kit.queueDepthSampler(redis, prefix);
      metrics.sampleQueueDepth(depth.sample);
      closers.push(depth.close);
    }
    if (role !== "worker") mountChannels(http, built, config);

    let url: string | undefined;
    let webUrl: string | undefined;
    let stopping: Promise<void> | undefined;
    const inbound = role !== "worker" ? [...adapters.values()] : [];

    return {
      role,
      runtime: rt,
      store: sessionStore,
      runner,
      adapters,
      web: built.web,
      http,
      metrics,
      get url() {
        return url;
      },
      get webUrl() {
        return webUrl;
      },
      async start() {
        if (role !== "gateway") await rt.start();
        const address = await http.listen();
        url = address.url;
        for (const adapter of inbound) http.addProbe(adapterProbe(adapter));
        const specs = runner.commandSpecs();
        for (const adapter of inbound) {
          try {
            await adapter.start(pipeline.handlersFor(adapter));
          } catch (err) {
            logger.error(
              { platform: adapter.platform, err: errorText(err) },
              "channel failed to start; /readyz reports it",
            );
            continue;
          }
          if (adapter.registerCommands) {
            await adapter
              .registerCommands(specs)
              .catch((err: unknown) =>
                logger.warn(
                  { platform: adapter.platform, err: errorText(err) },
                  "could not register commands",
                ),
              );
          }
        }
        logger.info({ role, url, channels: [...adapters.keys()] }, "switchboard started");
        // The address for people (with --port 0 it is only known now); /healthz answers there.
        o.announce?.(`Listening on ${url} (role ${role})`);
        if (role === "worker") return;
        if (built.web) {
          const base = (config.http.publicUrl ?? url).replace(/\/+$/, "");
          webUrl = `${base}${config.channels.web.path === "/" ? "/" : config.channels.web.path}`;
          o.announce?.(`Web chat: ${webUrl}`);
          if (config.http.token) o.announce?.("Open it once with ?token=<your http token> to sign in.");
          if (redis && role === "gateway")
            logger.warn(
              "the web chat keeps conversations in this process: run it with --role all, not beside separate workers",
            );
        } else if (config.channels.web.enabled) {
          o.announce?.("The web chat is not available in this build.");
        }
      },
      stop() {
        stopping ??= (async () => {
          http.setDraining();
          // Without Redis nothing can be handed over, and commands would wait for it forever.
          if (redis && redis.status !== "ready") redis.disconnect();
          await Promise.allSettled(inbound.map((a) => a.stop()));
          await rt
            .stop({ graceMs: cfg.shutdownGraceMs })
            .catch((err: unknown) => logger.error({ err: errorText(err) }, "runtime did not stop cleanly"));
          await http.close().catch(() => {});
          await approvalStore.close().catch(() => {});
          for (const close of closers) await close().catch(() => {});
          if (redis?.status === "ready") await redis.quit().catch(() => redis.disconnect());
          else redis?.disconnect();
          logger.info("switchboard stopped");
        })();
        return stopping;
      },
    };
  } catch (err) {
    // Nothing else holds the process open, so a failed build must not leave Redis connected.
    redis?.disconnect();
    throw err;
  }
}

/** Mounts the web chat and the platforms' webhook endpoints that run in http/webhook modes. */
function mountChannels(http: GatewayHttpServer, built: BuiltAdapters, config: SwitchboardConfig): void {
  if (built.web) http.mount(config.channels.web.path, built.web.app<GatewayEnv>());
  const { slack, telegram } = built;
  if (slack && config.channels.slack.mode === "http") {
    http.mountNode(
      "POST",
      config.channels.slack.eventsPath,
      (req, res) => {
        if (!slack.handleHttp(req, res)) res.writeHead(404).end();
      },
      { public: true },
    );
  }
  if (telegram && config.channels.telegram.mode === "webhook") {
    http.mountNode("POST", config.channels.telegram.webhook.path, telegram.webhookCallback, { public: true });
  }
}
