import { MemoryApprovalStore } from "../../src/queue/approvals/memory-store.js";
import { RedisApprovalStore } from "../../src/queue/approvals/redis-store.js";
import { connectBackend, redisBackends, uniquePrefix } from "../support/redis.js";
import { approvalStoreContract } from "./approval-store-contract.js";

approvalStoreContract("memory", async () => {
  const store = new MemoryApprovalStore();
  return { store, other: store, close: () => store.close() };
});

// On one server and on the Redis Cluster, where a step touching two hash slots fails (CROSSSLOT).
for (const backend of redisBackends())
  approvalStoreContract(backend, async () => {
    const prefix = uniquePrefix();
    const a = connectBackend(backend);
    const b = connectBackend(backend);
    const store = new RedisApprovalStore(a, { prefix });
    const other = new RedisApprovalStore(b, { prefix });
    return {
      store,
      other,
      async close() {
        await store.close();
        await other.close();
        await a.quit();
        await b.quit();
      },
    };
  });
