/**
 * The runtime of a process and its session store, as one step of `createGateway`: the Redis runtime
 * (BullMQ) with a Redis session store, or the embedded runtime with its file store; and what the
 * thread hosts read of them. The agent factory the runtime is built with makes thread hosts that
 * read the runtime back, so the hosts' dependencies hold it in a `BuiltLater` slot, filled once the
 * runtime exists and read only when a run starts.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import type { Model } from "../../agent/llm/types.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import type { AttachmentIngester } from "../../queue/attachments/ingest.js";
import { EmbeddedRuntime } from "../../queue/embedded/embedded-runtime.js";
import type { RuntimeOptions } from "../../queue/runtime-base.js";
import { encodeThreadKey } from "../../queue/store/thread-dir.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { RunObserver, Runtime } from "../../queue/types.js";
import { DEFAULT_COLLECT_WINDOW_MS, DEFAULT_INBOX_CAP } from "../../queue/types.js";
import { SessionKeys } from "../../redis-keys.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import type { Logger } from "../log.js";
import { createAgentFactory } from "./agent-factory.js";
import type { Channels } from "./channels.js";
import { ReplyTargets } from "./inbound-format.js";
import type { LlmCalls } from "./llm-calls.js";
import { modelRefOf } from "./models.js";
import { platformOf } from "./platforms.js";
import type { SharedRedis, SharedStores } from "./shared-redis.js";
import { createOwedFinisher, createSinkFactory } from "./sinks.js";
import { DEFAULT_SYSTEM_PROMPT } from "./system-prompt.js";
import type { ThreadHostDeps } from "./thread-host.js";

export interface RuntimeWiringOptions {
  config: SwitchboardConfig;
  shared: SharedRedis | undefined;
  stores: SharedStores;
  channels: Channels;
  runner: ExtensionRunner;
  calls: LlmCalls;
  defaultModel: Model | undefined;
  attachments: AttachmentIngester;
  metrics: SwitchboardMetrics;
  logger: Logger;
  /** Receives what must be closed when the process stops, in the order it was opened. */
  closers: (() => Promise<unknown>)[];
  /** Hears how runs end (scheduled prompts follow their answers). */
  runObserver?: RunObserver;
  /** `schedules.quietMarker`: a reply that is exactly this posts nothing. */
  quietMarker?: string;
}

export interface RuntimeWiring {
  runtime: Runtime;
  store: SessionStore;
  /** What thread hosts (commands, tools) are given: the runtime, the store, the channels. */
  hostDeps: ThreadHostDeps;
  /** Agents alive in this process, for the active-threads gauge. */
  liveAgents: { count: number };
}

/** Builds the runtime and session store of the config's mode (nothing runs until `runtime.start()`). */
export function wireRuntime(o: RuntimeWiringOptions): RuntimeWiring {
  const { config, shared, channels, logger } = o;
  const cfg = config.runtime;
  const built = new BuiltLater<{ runtime: Runtime; store: SessionStore }>("the runtime");
  const hostDeps: ThreadHostDeps = {
    get runtime(): Runtime {
      return built.get().runtime;
    },
    get store(): SessionStore {
      return built.get().store;
    },
    adapterOf: channels.adapterOf,
    maxUploadBytes: channels.maxUploadBytes,
    defaultModel: () => (o.defaultModel ? modelRefOf(o.defaultModel) : undefined),
    sessionLocation: (threadKey, sessionId) =>
      shared
        ? `Redis key ${new SessionKeys(cfg.keyPrefix).session(threadKey, sessionId)}`
        : join(cfg.dataDir, "sessions", encodeThreadKey(threadKey), `${sessionId}.jsonl`),
    logger,
  };
  const liveAgents = { count: 0 };
  const common = runtimeOptions(o, hostDeps, liveAgents);
  const parts = shared ? redisRuntime(shared, common, o) : embeddedRuntime(common, cfg.dataDir);
  built.set(parts);
  return { ...parts, hostDeps, liveAgents };
}

/** What both runtimes are built with: rendering, the agent factory, the thread limits. */
function runtimeOptions(
  o: RuntimeWiringOptions,
  hostDeps: ThreadHostDeps,
  liveAgents: { count: number },
): Omit<RuntimeOptions, "store"> {
  const { config, channels, logger, calls } = o;
  const cfg = config.runtime;
  const enabled = [...channels.adapters.keys()].map(channels.settingsOf);
  // Which chat message each user message came from, so an answer after a steer replies to it.
  const replyTargets = new ReplyTargets();
  const rendering = {
    adapterOf: channels.adapterOf,
    platforms: config.channels,
    limiter: o.stores.limiter,
    metrics: o.metrics,
    logger,
    replyTargetOf: replyTargets.replyTargetOf,
    waitNoticeMs: config.models.waitNoticeMs,
    ...(o.quietMarker ? { quietMarker: o.quietMarker } : {}),
  };
  return {
    sinks: createSinkFactory(rendering),
    finishOwed: createOwedFinisher(rendering),
    agentFactory: createAgentFactory({
      runner: o.runner,
      hostDeps,
      channels: config.channels,
      models: config.models,
      defaultModel: o.defaultModel,
      streamFor: calls.streamFor,
      systemPrompt: config.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
      liveAgents,
      logger,
    }),
    format: replyTargets.format,
    attachments: o.attachments,
    ...(o.runObserver ? { runObserver: o.runObserver } : {}),
    // The one resolution of a thread's delivery mode (its channel's): deliveries without a mode
    // and `/status` both come here.
    modeOf: (threadKey) => {
      const platform = platformOf(threadKey, config.channels);
      return platform ? channels.settingsOf(platform).deliveryMode : undefined;
    },
    leaseTtlMs: cfg.leaseTtlMs,
    concurrency: cfg.concurrency,
    agentIdleMs: cfg.idleEvictMs,
    // Compaction's summary goes through the thread's agent's own model calls (budgets count it).
    compaction: { settings: { ...config.agent.compaction } },
    // The runtime's cap and debounce are per process; take the most generous enabled channel's.
    inboxCap: enabled.length > 0 ? Math.max(...enabled.map((c) => c.inboxCap)) : DEFAULT_INBOX_CAP,
    collectDebounceMs:
      enabled.length > 0 ? Math.max(...enabled.map((c) => c.collectWindowMs)) : DEFAULT_COLLECT_WINDOW_MS,
    onError: (err, context) => logger.error({ err, context }, "runtime error"),
    // Event claims name their owner by process, so a stranded claim in Redis says whose it was.
    instanceId: `${hostname()}:${process.pid}`,
  };
}

/** The Redis runtime over a Redis session store, which the process closes when it stops. */
function redisRuntime(
  shared: SharedRedis,
  common: Omit<RuntimeOptions, "store">,
  o: RuntimeWiringOptions,
): { runtime: Runtime; store: SessionStore } {
  const cfg = o.config.runtime;
  const { redis, kit } = shared;
  const store = new kit.RedisSessionStore({ redis, prefix: cfg.keyPrefix, logger: o.logger });
  const runtime = new kit.RedisRuntime({
    ...common,
    store,
    redis,
    prefix: cfg.keyPrefix,
    queuePrefix: shared.queuePrefix,
    waitReplicas: cfg.waitReplicas,
    waitReplicasTimeoutMs: cfg.waitReplicasTimeoutMs,
  });
  o.closers.push(() => store.close());
  return { runtime, store };
}

/** The embedded runtime with its own file session store under `dataDir`. */
function embeddedRuntime(
  common: Omit<RuntimeOptions, "store">,
  dataDir: string,
): { runtime: Runtime; store: SessionStore } {
  const runtime = new EmbeddedRuntime({ ...common, dataDir });
  return { runtime, store: runtime.store };
}

/** A value made after something that reads it is: reading it before `set` throws (a wiring bug). */
class BuiltLater<T> {
  private value: T | undefined;

  constructor(private readonly what: string) {}

  set(value: T): void {
    this.value = value;
  }

  get(): T {
    if (this.value === undefined) throw new Error(`${this.what} is not built yet`);
    return this.value;
  }
}
