/**
 * The control bus contract (control-bus-contract.ts) on the embedded runtime's in-process bus and on
 * Redis pub/sub, one server and the cluster, where two buses on two connections stand for two
 * processes.
 */
import { LocalControlBus } from "../../src/queue/control-bus.js";
import { RedisControlBus } from "../../src/queue/redis/redis-control-bus.js";
import { connectBackend, redisBackends, uniquePrefix } from "../support/redis.js";
import { controlBusContract } from "./control-bus-contract.js";

controlBusContract("in-process", async () => {
  const bus = new LocalControlBus();
  return { bus, other: bus, ready: async () => {}, close: () => bus.close() };
});

for (const backend of redisBackends()) {
  controlBusContract(backend, async () => {
    const channel = `${uniquePrefix("sbt-bus")}control`;
    const [a, b] = [connectBackend(backend), connectBackend(backend)];
    const bus = new RedisControlBus(a, channel);
    const other = new RedisControlBus(b, channel);
    return {
      bus,
      other,
      ready: async () => {
        await Promise.all([bus.whenSubscribed(), other.whenSubscribed()]);
      },
      close: async () => {
        await Promise.all([bus.close(), other.close()]);
        a.disconnect();
        b.disconnect();
      },
    };
  });
}
