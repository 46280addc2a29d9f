/** The gateway's HTTP server: health, readiness, metrics, and routes mounted by the wiring code. */
export { hostRule } from "./host.js";
export { createMetrics } from "./metrics.js";
export type { ReadinessProbe } from "./readiness.js";
export {
  createHttpServer,
  type GatewayEnv,
  type GatewayHttpServer,
} from "./server.js";
