/**
 * Pending-approval stores: memory for the embedded runtime; the Redis one (./redis-store.ts) is
 * reached through the gateway's redis-kit so that the embedded mode never loads ioredis.
 */
export { MemoryApprovalStore } from "./memory-store.js";
