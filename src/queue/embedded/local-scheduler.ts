/**
 * The embedded runtime's job queue: wake jobs for threads, run in arrival order with at most
 * `concurrency` at once. Jobs are plain function calls; there is nothing to recover after a crash
 * because the embedded inbox lives in the same process.
 */
export class LocalScheduler {
  private readonly waiting: string[] = [];
  private running = 0;
  private closed = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly run: (threadKey: string) => Promise<void>,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /**
   * Queues a wake job for a thread. Ignored after `close()`, and when a job of the thread is
   * already waiting: that job has not started, so it will see whatever made the caller wake it.
   */
  add(threadKey: string): void {
    if (this.closed || this.waiting.includes(threadKey)) return;
    this.waiting.push(threadKey);
    this.pump();
  }

  /** Jobs queued or running. */
  get size(): number {
    return this.waiting.length + this.running;
  }

  /** Stops starting jobs; resolves when the running ones are done. */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    if (this.running === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (!this.closed && this.running < this.concurrency && this.waiting.length > 0) {
      const threadKey = this.waiting.shift() as string;
      this.running++;
      void this.run(threadKey)
        .catch((e: unknown) => this.onError(e, `a wake job of ${threadKey}`))
        .finally(() => {
          this.running--;
          if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
          this.pump();
        });
    }
  }
}
