/**
 * The fast path of control signals: a notice "thread X changed" that reaches the process holding
 * X at once. It carries no state: the holder re-reads the durable control state when notified and
 * at every checkpoint, so a lost notice only delays a signal until the next checkpoint. The Redis
 * implementation lives in redis/redis-control-bus.ts, so the embedded mode never loads ioredis.
 */

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
