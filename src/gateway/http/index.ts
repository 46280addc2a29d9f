/** The gateway's HTTP server: health, readiness, metrics, and routes mounted by the wiring code. */
export { isAuthorized, TOKEN_COOKIE } from "./auth.js";
export { hostRule, isLoopbackHostHeader } from "./host.js";
export {
  type ApprovalOutcome,
  type CreateMetricsOptions,
  createMetrics,
  type GaugeSampler,
  type InboundOutcome,
  type LlmUsageSample,
  type PlatformCallOutcome,
  type RunOutcomeLabel,
  type SwitchboardMetrics,
} from "./metrics.js";
export {
  type ProbeReport,
  type ProbeResult,
  type ReadinessProbe,
  type ReadinessReport,
  redisPingProbe,
  runProbes,
} from "./readiness.js";
export {
  createHttpServer,
  type GatewayApp,
  type GatewayEnv,
  type GatewayHandler,
  type GatewayHttpServer,
  type HttpMethod,
  type HttpServerOptions,
  type ListeningAddress,
  type NodeRequestHandler,
  type RouteOptions,
} from "./server.js";
