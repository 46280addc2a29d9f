/**
 * One Switchboard process, wired from the config slices: stores → runtime (Redis + BullMQ when
 * `runtime.redisUrl` or `runtime.redisCluster` is set, else embedded with files under `dataDir`) → extensions → adapters →
 * inbound pipeline → agent factory → renderers → HTTP (mounts, probes, metrics).
 *
 * Roles: `gateway` runs the adapters' inbound side, the dispatcher and HTTP; `worker` runs the
 * runtime's workers and renders through outbound-only adapters; `all` runs both in one process. The
 * web chat's conversations live in the store (Redis, or files under `dataDir`), so a worker renders
 * into them and the gateway that serves the page follows their changes.
 * `createGateway` checks that Redis answers (in Redis mode) and builds everything without
 * connecting to platforms; `start` starts the role's parts; `stop` drains them (inbound first, then
 * running turns within the grace period).
 */
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { redactOutbound } from "../../adapters/redact-outbound.js";
import type { ChannelRegistry } from "../../adapters/registry.js";
import { MemoryRateLimiter } from "../../adapters/render/rate-limiter.js";
import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import { START_LINK_TTL_MS, type WebChatAdapter } from "../../adapters/web/index.js";
import { findModel } from "../../agent/llm/models.js";
import { AccessGate } from "../../extensions/access/gate.js";
import { MemoryNoticeMemory } from "../../extensions/access/notices.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import { WorkspaceQuota } from "../../extensions/tools/quota.js";
import { ensureWorkspace } from "../../extensions/tools/workspace.js";
import { MemoryApprovalStore } from "../../queue/approvals/memory-store.js";
import { AttachmentIngester } from "../../queue/attachments/ingest.js";
import { effectiveLimits, type FilePolicy } from "../../queue/attachments/limits.js";
import { EmbeddedRuntime } from "../../queue/embedded/embedded-runtime.js";
import { defaultQueuePrefix } from "../../queue/keys.js";
import type { RuntimeOptions } from "../../queue/runtime-base.js";
import { SessionKeys } from "../../queue/store/keys.js";
import { encodeThreadKey } from "../../queue/store/thread-dir.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { Runtime } from "../../queue/types.js";
import { DEFAULT_COLLECT_WINDOW_MS, DEFAULT_INBOX_CAP } from "../../queue/types.js";
import type { Role } from "../cli/types.js";
import { ConfigError } from "../config/errors.js";
import { redisTargetOf } from "../config/redis-target.js";
import { collectSecretValues } from "../config/secrets.js";
import type { ChannelCommonConfig, SwitchboardConfig } from "../config/types.js";
import { createMetrics, type SwitchboardMetrics } from "../http/metrics.js";
import { redisPingProbe } from "../http/readiness.js";
import {
  createHttpServer,
  type GatewayEnv,
  type GatewayHttpServer,
  type ListeningAddress,
} from "../http/server.js";
import { type Logger, redactSecrets } from "../log.js";
import { RedisKeyValueStore } from "../redis-kv.js";
import { accessConfig } from "./access.js";
import { buildAdapters } from "./adapters.js";
import { createAgentFactory } from "./agent-factory.js";
import { toolIssues } from "./config-check.js";
import { loadExtensions, meteredApprovalStore } from "./extensions.js";
import { InboundPipeline } from "./inbound.js";
import { ReplyTargets } from "./inbound-format.js";
import { instrumentAdapter } from "./instrument.js";
import { llmCalls } from "./llm-calls.js";
import { loadMcp } from "./mcp.js";
import { chooseDefaultModel, modelIssues, modelRefOf, registerConfiguredModels } from "./models.js";
import { channelSlices, platformOf } from "./platforms.js";
import { preflightIssues } from "./preflight.js";
import { adapterProbe } from "./probes.js";
import { reportSandbox, setUpSandbox, TOOLS_RUN_BY_WORKERS } from "./sandbox.js";
import { createOwedFinisher, createSinkFactory } from "./sinks.js";
import { DEFAULT_SYSTEM_PROMPT } from "./system-prompt.js";
import type { ThreadHostDeps } from "./thread-host.js";
import { webChatStores } from "./web-stores.js";

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

/** Builds a process of `role` from `config` (nothing listens or connects to platforms yet). */
export async function createGateway(o: GatewayOptions): Promise<Gateway> {
  const { config, role } = o;
  const logger = o.logger;
  const cfg = config.runtime;
  const prefix = cfg.keyPrefix;
  // Refused before anything connects, found the same way by `switchboard check`.
  const refusedEarly = await preflightIssues(config, role);
  if (refusedEarly.length > 0) throw new ConfigError(refusedEarly, o.configFile);
  registerConfiguredModels(config.models);
  const metrics = createMetrics({ defaultLabels: { role } });
  const closers: (() => Promise<unknown>)[] = [];

  // ioredis and BullMQ load only in Redis mode: the embedded mode starts without them.
  const target = redisTargetOf(cfg);
  const kit = target ? await import("./redis-kit.js") : undefined;
  const redis = kit && target ? kit.connectRedis(target, logger) : undefined;
  // The runs queue's BullMQ prefix: on a cluster it needs a hash tag (`{sb-runs}` by default).
  const queuePrefix = cfg.queuePrefix ?? defaultQueuePrefix(prefix, Boolean(redis && kit?.isCluster(redis)));

  try {
    // Before anything else connects (the runs queue, the workers): Redis down is one clear error.
    if (redis && kit && target) await kit.reachRedis(redis, target);
    const approvalStore = meteredApprovalStore(
      redis && kit ? new kit.RedisApprovalStore(redis, { prefix }) : new MemoryApprovalStore(),
      metrics,
    );
    // One notice per thread: "you are not allowed", "this model cannot see pictures".
    const notices = redis && kit ? new kit.RedisNoticeMemory(redis, prefix) : new MemoryNoticeMemory();
    const gate = new AccessGate({ config: accessConfig(config.channels), notices, logger });
    // Only processes that run tools need the sandbox; `tools.sandbox.mode: bwrap` fails here when it cannot run.
    const sandbox =
      role === "gateway" ? undefined : await setUpSandbox(config.tools, config.agent.workspaceDir);
    if (sandbox?.runner.close) closers.push(async () => sandbox.runner.close?.());
    // Every chat message and tool result leaves through the one secret scrubber, the config's own
    // secrets included.
    const secrets = collectSecretValues(config);
    const calls = llmCalls({ stallTimeoutMs: config.models.stallTimeoutMs, metrics, logger });
    const mcp = await loadMcp({
      tools: config.tools,
      ...(sandbox ? { runner: sandbox.runner } : {}),
      workspaceRoot: config.agent.workspaceDir,
      metrics,
      ...(redis ? { catalog: { store: new RedisKeyValueStore(redis), prefix } } : {}),
      logger,
    });
    if (mcp) closers.push(() => mcp.servers.close());
    const runner = await loadExtensions({
      extensions: config.extensions,
      scrubToolOutput: (text) => redactSecrets(text, secrets),
      approval: config.approval,
      approvalStore,
      isAdmin: (platform, userId) => gate.isAdmin(platform, userId),
      hasAdmins: (platform) => gate.hasAdmins(platform),
      mayChangeSettings: (platform, userId, isDirect) => gate.mayChangeSettings(platform, userId, isDirect),
      channels: config.channels,
      ...(sandbox ? { sandbox } : { toolsStatus: TOOLS_RUN_BY_WORKERS }),
      workspaceRoot: config.agent.workspaceDir,
      streamFn: calls.stream,
      ...(mcp ? { mcp } : {}),
      baseDir: o.configFile ? dirname(o.configFile) : process.cwd(),
      logger,
    });
    // Refused here, and found the same way by `switchboard check` (extensions may add models and tools).
    const refused = [...modelIssues(config.models), ...toolIssues(config, runner)];
    if (refused.length > 0) throw new ConfigError(refused, o.configFile);
    if (sandbox) reportSandbox(sandbox, logger);
    const defaultModel = chooseDefaultModel(config.models);
    if (!defaultModel && role !== "gateway")
      logger.warn("no model has credentials; threads will answer with set-up instructions");

    const webStores = config.channels.web.enabled
      ? webChatStores(redis && kit ? { redis, kit } : undefined, prefix, cfg.dataDir, logger)
      : undefined;
    if (webStores) closers.push(() => webStores.store.close());
    // Only a process that serves the page or renders into it keeps the embedded file store tidy.
    const stopSweeping = webStores?.sweepUploads?.();
    if (stopSweeping) closers.push(async () => stopSweeping());
    const built = await buildAdapters({
      channels: config.channels,
      http: config.http,
      inbound: role !== "worker",
      redis: redis ? { redis, prefix } : undefined,
      dataDir: cfg.dataDir,
      ...(webStores ? { web: webStores } : {}),
      ...(o.channels ? { registry: o.channels } : {}),
      logger,
    });
    const adapters = new Map<Platform, ChannelAdapter>();
    for (const [p, a] of built.byPlatform)
      adapters.set(p, instrumentAdapter(redactOutbound(a, secrets), metrics));
    const adapterOf = (p: Platform) => adapters.get(p);
    const slices = new Map(channelSlices(config.channels));
    const settingsOf = (p: Platform): ChannelCommonConfig => {
      const slice = slices.get(p);
      if (!slice) throw new Error(`no channel "${p}" in the config; its registry lacks it`);
      return slice;
    };

    const filePolicy = (p: Platform): FilePolicy => {
      const f = settingsOf(p).files;
      return {
        enabled: f.enabled,
        maxFileBytes: Math.floor(f.maxFileMb * 1024 * 1024),
        maxMessageBytes: Math.floor(f.maxMessageMb * 1024 * 1024),
        maxFiles: f.maxFilesPerMessage,
      };
    };
    const fileLimits = (p: Platform) => effectiveLimits(filePolicy(p), adapterOf(p)?.capabilities.files);
    const owner = sandbox?.runner.owner;
    const vision = config.models.vision ? findModel(config.models.vision) : undefined;
    const attachments = new AttachmentIngester({
      adapterOf,
      policyOf: filePolicy,
      workspaceOf: (threadKey) => ensureWorkspace(config.agent.workspaceDir, threadKey, owner),
      ...(owner ? { owner } : {}),
      quota: new WorkspaceQuota(config.tools.sandbox.limits.workspaceMb),
      ...(vision ? { vision } : {}),
      notices,
      onError: (err, context) => logger.warn({ err, context }, "attachment trouble"),
    });

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
      maxUploadBytes: (p) => {
        const limits = fileLimits(p);
        return limits.enabled ? limits.maxUploadBytes : 0;
      },
      defaultModel: () => (defaultModel ? modelRefOf(defaultModel) : undefined),
      sessionLocation: (threadKey, sessionId) =>
        redis
          ? `Redis key ${new SessionKeys(prefix).session(threadKey, sessionId)}`
          : join(cfg.dataDir, "sessions", encodeThreadKey(threadKey), `${sessionId}.jsonl`),
      logger,
    };
    const liveAgents = { count: 0 };
    const enabled = [...adapters.keys()].map(settingsOf);
    // Which chat message each user message came from, so an answer after a steer replies to it.
    const replyTargets = new ReplyTargets();
    const rendering = {
      adapterOf,
      platforms: config.channels,
      limiter: redis && kit ? new kit.RedisRateLimiter({ redis, prefix }) : new MemoryRateLimiter(),
      metrics,
      logger,
      replyTargetOf: replyTargets.replyTargetOf,
      waitNoticeMs: config.models.waitNoticeMs,
    };
    const common: Omit<RuntimeOptions, "store"> = {
      sinks: createSinkFactory(rendering),
      finishOwed: createOwedFinisher(rendering),
      agentFactory: createAgentFactory({
        runner,
        hostDeps,
        channels: config.channels,
        models: config.models,
        defaultModel,
        stream: calls.stream,
        systemPrompt: config.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        liveAgents,
        logger,
      }),
      format: replyTargets.format,
      attachments,
      // The one resolution of a thread's delivery mode (its channel's): deliveries without a mode
      // and `/status` both come here.
      modeOf: (threadKey) => {
        const platform = platformOf(threadKey, config.channels);
        return platform ? settingsOf(platform).deliveryMode : undefined;
      },
      leaseTtlMs: cfg.leaseTtlMs,
      concurrency: cfg.concurrency,
      agentIdleMs: cfg.idleEvictMs,
      compaction: { settings: { ...config.agent.compaction }, complete: calls.complete },
      // The runtime's cap and debounce are per process; take the most generous enabled channel's.
      inboxCap: enabled.length > 0 ? Math.max(...enabled.map((c) => c.inboxCap)) : DEFAULT_INBOX_CAP,
      collectDebounceMs:
        enabled.length > 0 ? Math.max(...enabled.map((c) => c.collectWindowMs)) : DEFAULT_COLLECT_WINDOW_MS,
      onError: (err, context) => logger.error({ err, context }, "runtime error"),
      // Event claims name their owner by process, so a stranded claim in Redis says whose it was.
      instanceId: `${hostname()}:${process.pid}`,
    };
    if (redis && kit) {
      const redisStore = new kit.RedisSessionStore({ redis, prefix, logger });
      store = redisStore;
      runtime = new kit.RedisRuntime({
        ...common,
        store: redisStore,
        redis,
        prefix,
        queuePrefix,
        waitReplicas: cfg.waitReplicas,
        waitReplicasTimeoutMs: cfg.waitReplicasTimeoutMs,
      });
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
      const depth = kit.queueDepthSampler(redis, queuePrefix);
      metrics.sampleQueueDepth(depth.sample);
      closers.push(depth.close);
    }
    if (role !== "worker") mountChannels(http, built.byPlatform.values());

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
            logger.error({ platform: adapter.platform, err }, "channel failed to start; /readyz reports it");
            continue;
          }
          if (adapter.registerCommands) {
            await adapter
              .registerCommands(specs)
              .catch((err: unknown) =>
                logger.warn({ platform: adapter.platform, err }, "could not register commands"),
              );
          }
        }
        logger.info({ role, url, channels: [...adapters.keys()] }, "switchboard started");
        // The address for people (with --port 0 it is only known now); /healthz answers there.
        o.announce?.(`Listening on ${url} (role ${role})`);
        if (sandbox && !sandbox.sandboxed) o.announce?.(`Tools: ${sandbox.summary}.`);
        if (role === "worker") return;
        if (built.web) {
          const base = (config.http.publicUrl ?? reachable(address)).replace(/\/+$/, "");
          webUrl = `${base}${config.channels.web.path === "/" ? "/" : config.channels.web.path}`;
          // The one-time link goes to the person who started the process, never into the log.
          if (o.announce) {
            const link = await built.web.signInLink(webUrl, START_LINK_TTL_MS);
            o.announce(`Web chat: ${link}`);
            o.announce(
              "  (the link signs one browser in, once; a signed-in page makes more under “Sign in elsewhere”)",
            );
          }
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
            .catch((err: unknown) => logger.error({ err }, "runtime did not stop cleanly"));
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

/** The server's URL as a browser on this machine reaches it (a wildcard bind answers on loopback). */
function reachable(address: ListeningAddress): string {
  if (address.host === "0.0.0.0") return `http://127.0.0.1:${address.port}`;
  if (address.host === "::") return `http://[::1]:${address.port}`;
  return address.url;
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
