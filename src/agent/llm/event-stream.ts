import type { AssistantMessage, AssistantMessageEvent, AssistantMessageEventSource } from "./types.js";

/**
 * A push-based async iterable with a final result.
 *
 * The producer calls `push(event)` any number of times and then `end(result)` once; consumers
 * iterate with `for await` and/or await `result()`. Events pushed before a consumer starts
 * iterating are buffered, never dropped. When `isComplete(event)` returns true for a pushed
 * event, `extractResult(event)` becomes the result and the stream ends after that event.
 * `push` and `end` after the end are ignored, so a late producer callback cannot corrupt a
 * finished stream. Only one consumer should iterate; `result()` may be awaited by anyone.
 */
export class EventStream<TEvent, TResult> implements AsyncIterable<TEvent> {
  private readonly buffer: TEvent[] = [];
  private readonly waiting: ((r: IteratorResult<TEvent>) => void)[] = [];
  private finished = false;
  private resolveResult!: (r: TResult) => void;
  private readonly resultPromise: Promise<TResult>;

  constructor(
    private readonly isComplete: (event: TEvent) => boolean,
    private readonly extractResult: (event: TEvent) => TResult,
  ) {
    this.resultPromise = new Promise<TResult>((resolve) => {
      this.resolveResult = resolve;
    });
  }

  push(event: TEvent): void {
    if (this.finished) return;
    if (this.isComplete(event)) {
      this.finished = true;
      this.resolveResult(this.extractResult(event));
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.buffer.push(event);
    if (this.finished) this.flushWaiters();
  }

  /** Ends the stream. `result` is used only when no completing event was pushed. */
  end(result?: TResult): void {
    if (this.finished) return;
    this.finished = true;
    if (result !== undefined) this.resolveResult(result);
    this.flushWaiters();
  }

  get ended(): boolean {
    return this.finished;
  }

  result(): Promise<TResult> {
    return this.resultPromise;
  }

  private flushWaiters(): void {
    // Waiters exist only when the buffer is empty, so every pending reader is at the end.
    for (const waiter of this.waiting.splice(0)) waiter({ value: undefined, done: true });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TEvent> {
    while (true) {
      const next = this.buffer.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.finished) return;
      const r = await new Promise<IteratorResult<TEvent>>((resolve) => this.waiting.push(resolve));
      if (r.done) return;
      yield r.value;
    }
  }
}

/**
 * The stream every provider returns: it completes on the `done` or `error` event, and its
 * result is the final `AssistantMessage` (for `error`, the message with `stopReason`
 * `error` or `aborted`).
 */
export class AssistantMessageEventStream
  extends EventStream<AssistantMessageEvent, AssistantMessage>
  implements AssistantMessageEventSource
{
  constructor() {
    super(
      (e) => e.type === "done" || e.type === "error",
      (e) => {
        if (e.type === "done") return e.message;
        if (e.type === "error") return e.error;
        throw new Error(`AssistantMessageEventStream: "${e.type}" is not a final event`);
      },
    );
  }
}
