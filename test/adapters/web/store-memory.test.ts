import { MemoryWebChatStore } from "../../../src/adapters/web/index.js";
import { runWebStoreContract } from "./store-contract.js";

runWebStoreContract("memory", async () => {
  const clock = { now: 1_700_000_000_000 };
  return {
    shared: false,
    durable: false,
    clock,
    open: (limits) => new MemoryWebChatStore({ ...limits, now: () => clock.now }),
    cleanup: async () => {},
  };
});
