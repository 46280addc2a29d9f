/**
 * The fast path of control signals: a notice "thread X changed" that reaches the process holding
 * X at once. It carries no state: the holder re-reads the durable control state when notified and
 * at every checkpoint, so a lost notice only delays a signal until the next checkpoint.
 */
import type { Redis } from "ioredis";

export interface ControlBus {
  /** Notifies every process that `threadKey`'s control state changed. */
  publish(threadKey: string): Promise<void>;
  /** Calls `handler` for every notice; returns the function that unsubscribes. */
  subscribe(handler: (threadKey: string) => void): () => void;
  close(): Promise<void>;
}

/** In one process: a plain fan-out. */
export class LocalControlBus implements ControlBus {
  private readonly handlers = new Set<(threadKey: string) => void>();

  async publish(threadKey: string): Promise<void> {
    for (const h of [...this.handlers]) {
      try {
        h(threadKey);
      } catch {
        // A handler's failure must not stop the others.
      }
    }
  }

  subscribe(handler: (threadKey: string) => void): () => void {
    this.handlers.add(handler);
    return () => {
      this.handlers.delete(handler);
    };
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}

/**
 * Redis pub/sub on one channel for all threads, with one subscriber connection per process
 * (created lazily on the first `subscribe`, as a duplicate of `redis`).
 */
export class RedisControlBus implements ControlBus {
  private subscriber: Redis | undefined;
  private ready: Promise<unknown> | undefined;
  private readonly handlers = new Set<(threadKey: string) => void>();

  constructor(
    private readonly redis: Redis,
    private readonly channel: string,
  ) {}

  async publish(threadKey: string): Promise<void> {
    await this.redis.publish(this.channel, threadKey);
  }

  subscribe(handler: (threadKey: string) => void): () => void {
    this.handlers.add(handler);
    if (!this.subscriber) {
      const sub = this.redis.duplicate();
      sub.on("error", () => {
        // ioredis reconnects by itself; checkpoints cover notices missed meanwhile.
      });
      sub.on("message", (channel: string, threadKey: string) => {
        if (channel !== this.channel) return;
        for (const h of [...this.handlers]) {
          try {
            h(threadKey);
          } catch {
            // A handler's failure must not stop the others.
          }
        }
      });
      this.ready = sub.subscribe(this.channel).catch(() => {});
      this.subscriber = sub;
    }
    return () => {
      this.handlers.delete(handler);
    };
  }

  /** Resolves once the subscription is active (tests use it to avoid a race with the first publish). */
  async whenSubscribed(): Promise<void> {
    await this.ready;
  }

  async close(): Promise<void> {
    this.handlers.clear();
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (sub) await sub.quit().catch(() => sub.disconnect());
  }
}
