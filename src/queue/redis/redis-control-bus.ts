/**
 * The control bus over Redis pub/sub (the contract and the in-process bus: ../control-bus.ts).
 */
import type { ControlBus } from "../control-bus.js";
import type { RedisClient } from "./client.js";
import { RedisSubscriber } from "./subscriber.js";

/**
 * Redis pub/sub on one channel for all threads, with one subscriber connection per process
 * (created lazily on the first `subscribe`; on a cluster it moves to another node when its node
 * goes away).
 */
export class RedisControlBus implements ControlBus {
  private subscriber: RedisSubscriber | undefined;
  private readonly handlers = new Set<(threadKey: string) => void>();

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
  ) {}

  async publish(threadKey: string): Promise<void> {
    await this.redis.publish(this.channel, threadKey);
  }

  subscribe(handler: (threadKey: string) => void): () => void {
    this.handlers.add(handler);
    // Errors: the subscriber reconnects by itself; checkpoints cover notices missed meanwhile.
    this.subscriber ??= new RedisSubscriber(this.redis, [this.channel], {
      message: (channel, threadKey) => {
        if (channel !== this.channel) return;
        for (const h of [...this.handlers]) {
          try {
            h(threadKey);
          } catch {
            // A handler's failure must not stop the others.
          }
        }
      },
    });
    return () => {
      this.handlers.delete(handler);
    };
  }

  /** Resolves once the subscription is active (tests use it to avoid a race with the first publish). */
  async whenSubscribed(): Promise<void> {
    await this.subscriber?.ready.catch(() => {});
  }

  async close(): Promise<void> {
    this.handlers.clear();
    const sub = this.subscriber;
    this.subscriber = undefined;
    await sub?.close();
  }
}
