/**
 * Prometheus metrics of a Switchboard process, in one place: each metric is defined here once and
 * reached through a typed helper (`metrics.inboundMessage("slack", "accepted")`), so callers never
 * spell metric names or label sets. Every process has its own registry, served at `/metrics`;
 * Prometheus sums over processes.
 *
 * Labels stay low-cardinality: platform, outcome, provider/model from config, API method names.
 * Never a thread key, user or message id.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** What happened to an inbound platform message at the dispatcher. */
export type InboundOutcome = "accepted" | "duplicate" | "denied" | "command" | "dropped";
/** How an agent run ended: the `outcome` label of the run metrics (the renderer's `RunOutcome` is what it shows). */
export type RunOutcomeLabel = "completed" | "error" | "aborted";
/** Result of one platform API request; `rate_limited` is an HTTP 429 (also counted separately). */
export type PlatformCallOutcome = "ok" | "rate_limited" | "error";
/** How an approval request ended; `remembered` is an earlier ♾️ approval of the same call. */
export type ApprovalOutcome = "approved" | "denied" | "timeout" | "remembered";

/** How an MCP tool call ended; `unavailable`: its server could not be started or reached. */
export type McpCallOutcomeLabel = "ok" | "error" | "timeout" | "cancelled" | "unavailable";
/** What went wrong with an MCP server: it did not start, crashed, or could not list its tools. */
export type McpFailureLabel = "start" | "crash" | "list";

/** Token counts and cost of one LLM response (the `Usage` shape of `src/agent/llm/types.ts`). */
export interface LlmUsageSample {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: { total: number };
}

/** Reads a current value at scrape time (e.g. the runs queue's waiting count from Redis). */
export type GaugeSampler = () => number | Promise<number>;

/**
 * The metrics of one process. Helpers never throw; a sampler that fails keeps the gauge's last
 * value so one broken source does not break the scrape.
 */
export interface SwitchboardMetrics {
  readonly registry: Registry;
  /** The text exposition served at `/metrics`, and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
  inboundMessage(platform: string, outcome: InboundOutcome): void;
  runStarted(platform: string): void;
  runFinished(platform: string, outcome: RunOutcomeLabel, durationMs: number): void;
  setQueueDepth(depth: number, queue?: string): void;
  /** Samples the depth of `queue` (default `runs`) at every scrape instead of `setQueueDepth`. */
  sampleQueueDepth(sampler: GaugeSampler, queue?: string): void;
  setActiveThreads(count: number): void;
  /** Samples the number of threads with an agent held in this process at every scrape. */
  sampleActiveThreads(sampler: GaugeSampler): void;
  llmUsage(provider: string, model: string, usage: LlmUsageSample): void;
  platformApiCall(platform: string, method: string, outcome: PlatformCallOutcome): void;
  approval(outcome: ApprovalOutcome): void;
  mcpCall(server: string, outcome: McpCallOutcomeLabel): void;
  mcpFailure(server: string, kind: McpFailureLabel): void;
}

export interface CreateMetricsOptions {
  /** Also export Node process metrics (CPU, memory, event loop lag, GC). Default true. */
  processMetrics?: boolean;
  /** Labels on every series, e.g. `{ role: "worker" }`. */
  defaultLabels?: Record<string, string>;
}

/** A fresh registry with every Switchboard metric defined. */
export function createMetrics(options: CreateMetricsOptions = {}): SwitchboardMetrics {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "switchboard_" });
  const registers = [registry];

  const inbound = new Counter({
    name: "switchboard_inbound_messages_total",
    help: "Inbound platform messages by what the dispatcher did with them.",
    labelNames: ["platform", "outcome"] as const,
    registers,
  });
  const runs = new Counter({
    name: "switchboard_runs_total",
    help: "Agent runs finished, by outcome.",
    labelNames: ["platform", "outcome"] as const,
    registers,
  });
  const runsInProgress = new Gauge({
    name: "switchboard_runs_in_progress",
    help: "Agent runs in progress in this process.",
    labelNames: ["platform"] as const,
    registers,
  });
  const runDuration = new Histogram({
    name: "switchboard_run_duration_seconds",
    help: "Wall time of agent runs.",
    labelNames: ["platform"] as const,
    buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
    registers,
  });
  const queueSamplers = new Map<string, GaugeSampler>();
  const queueDepth = new Gauge({
    name: "switchboard_queue_depth",
    help: "Jobs waiting in a queue.",
    labelNames: ["queue"] as const,
    registers,
    async collect() {
      for (const [queue, sampler] of queueSamplers) {
        try {
          this.set({ queue }, await sampler());
        } catch {
          // keep the last value; the source's own logs say why it failed
        }
      }
    },
  });
  let threadSampler: GaugeSampler | undefined;
  const activeThreads = new Gauge({
    name: "switchboard_active_threads",
    help: "Threads with an agent held in this process.",
    registers,
    async collect() {
      if (!threadSampler) return;
      try {
        this.set(await threadSampler());
      } catch {
        // keep the last value
      }
    },
  });
  const llmTokens = new Counter({
    name: "switchboard_llm_tokens_total",
    help: "LLM tokens by kind (input, output, cache_read, cache_write).",
    labelNames: ["provider", "model", "kind"] as const,
    registers,
  });
  const llmCost = new Counter({
    name: "switchboard_llm_cost_usd_total",
    help: "LLM cost in US dollars, from the model's prices.",
    labelNames: ["provider", "model"] as const,
    registers,
  });
  const platformCalls = new Counter({
    name: "switchboard_platform_api_calls_total",
    help: "Platform API requests by method and outcome.",
    labelNames: ["platform", "method", "outcome"] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: "switchboard_platform_rate_limited_total",
    help: "Platform API requests answered with HTTP 429.",
    labelNames: ["platform", "method"] as const,
    registers,
  });
  const approvals = new Counter({
    name: "switchboard_approvals_total",
    help: "Approval requests by outcome.",
    labelNames: ["outcome"] as const,
    registers,
  });

  const mcpCalls = new Counter({
    name: "switchboard_mcp_calls_total",
    help: "MCP tool calls by server (as configured) and outcome.",
    labelNames: ["server", "outcome"] as const,
    registers,
  });
  const mcpFailures = new Counter({
    name: "switchboard_mcp_server_failures_total",
    help: "MCP servers failing to start, crashing or failing to list their tools.",
    labelNames: ["server", "kind"] as const,
    registers,
  });

  const nonNegative = (n: number) => (Number.isFinite(n) && n > 0 ? n : 0);

  return {
    registry,
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    inboundMessage(platform, outcome) {
      inbound.inc({ platform, outcome });
    },
    runStarted(platform) {
      runsInProgress.inc({ platform });
    },
    runFinished(platform, outcome, durationMs) {
      runsInProgress.dec({ platform });
      runs.inc({ platform, outcome });
      runDuration.observe({ platform }, nonNegative(durationMs) / 1000);
    },
    setQueueDepth(depth, queue = "runs") {
      queueDepth.set({ queue }, nonNegative(depth));
    },
    sampleQueueDepth(sampler, queue = "runs") {
      queueSamplers.set(queue, sampler);
    },
    setActiveThreads(count) {
      activeThreads.set(nonNegative(count));
    },
    sampleActiveThreads(sampler) {
      threadSampler = sampler;
    },
    llmUsage(provider, model, usage) {
      llmTokens.inc({ provider, model, kind: "input" }, nonNegative(usage.input));
      llmTokens.inc({ provider, model, kind: "output" }, nonNegative(usage.output));
      llmTokens.inc({ provider, model, kind: "cache_read" }, nonNegative(usage.cacheRead));
      llmTokens.inc({ provider, model, kind: "cache_write" }, nonNegative(usage.cacheWrite));
      llmCost.inc({ provider, model }, nonNegative(usage.cost.total));
    },
    platformApiCall(platform, method, outcome) {
      platformCalls.inc({ platform, method, outcome });
      if (outcome === "rate_limited") rateLimited.inc({ platform, method });
    },
    approval(outcome) {
      approvals.inc({ outcome });
    },
    mcpCall(server, outcome) {
      mcpCalls.inc({ server, outcome });
    },
    mcpFailure(server, kind) {
      mcpFailures.inc({ server, kind });
    },
  };
}
