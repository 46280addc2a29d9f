/**
 * Handlers behind the runtime's event claim, as a gateway's inbound pipeline puts them: adapters
 * no longer dedupe, so tests of a connection handed between processes check "no event twice"
 * through the one dedupe point, over the processes' shared Redis.
 */
import type { InboundHandlers } from "../../../src/adapters/types.js";
import { MemoryEventClaimStore } from "../../../src/queue/embedded/memory-event-claims.js";
import { EventClaims } from "../../../src/queue/event-claims.js";
import type { RedisClient } from "../../../src/queue/redis/client.js";
import { RedisEventClaimStore } from "../../../src/queue/redis/redis-event-claims.js";
import { RuntimeKeys } from "../../../src/redis-keys.js";

/** `handlers` behind an event claim over `redis` (shared by processes), or in memory (one process). */
export function claimed(handlers: InboundHandlers, redis?: RedisClient, prefix?: string): InboundHandlers {
  const store = redis
    ? new RedisEventClaimStore(redis, new RuntimeKeys(prefix))
    : new MemoryEventClaimStore();
  const claims = new EventClaims({ store });
  return {
    onMessage: async (m) => void (await claims.once(m.eventId, async () => handlers.onMessage(m))),
    onCommand: async (c) => void (await claims.once(c.eventId, async () => handlers.onCommand(c))),
    onReaction: async (r) => void (await claims.once(r.eventId, async () => handlers.onReaction(r))),
  };
}
