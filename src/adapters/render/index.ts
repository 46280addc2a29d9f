/** Platform-neutral rendering of agent runs into chat messages. */
export { MemoryRateLimiter } from "./rate-limiter.js";
export { createRendererFactory } from "./run-renderer.js";
