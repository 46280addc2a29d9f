/**
 * Kept only for src/gateway/app/gateway.ts's import while it is being split; the key registry is
 * src/redis-keys.ts. Import from there.
 */
export { SessionKeys } from "../../redis-keys.js";
