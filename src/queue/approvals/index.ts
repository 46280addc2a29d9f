/** Pending-approval stores: Redis for deployments with `REDIS_URL`, memory for the embedded runtime. */
export { MemoryApprovalStore } from "./memory-store.js";
export { RedisApprovalStore } from "./redis-store.js";
