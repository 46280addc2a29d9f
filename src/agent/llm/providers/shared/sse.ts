/**
 * Server-sent events over a fetch body, for every provider that streams SSE.
 *
 * Usage:
 * ```ts
 * const response = await fetchWithRetry(url, init, retryOptions);
 * for await (const event of parseSSE(response.body!, options.signal)) {
 *   if (event.data === "[DONE]") break;
 *   handle(event.event, JSON.parse(event.data));
 * }
 * ```
 * Bytes are decoded as UTF-8 in stream mode, so a multibyte character split across network
 * chunks is never mangled; events are framed by eventsource-parser 3.x (blank-line framing,
 * multi-line `data:`, comments and `retry:` ignored). An event the connection cut off before its
 * terminating blank line is dropped, as the SSE spec says: providers notice the missing final
 * event (`message_stop`, `[DONE]`, a finish reason) and report a dropped connection.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";

/** One server-sent event. `event` is undefined when the server sent no `event:` field. */
export interface SSEEvent {
  event?: string;
  data: string;
  id?: string;
}

/** The error thrown when `signal` aborts while reading; providers map it to `stopReason: "aborted"`. */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const error = new Error("The request was aborted");
  error.name = "AbortError";
  return error;
}

/**
 * Yields the events of an SSE body in order as they arrive. Ends when the body ends; throws the
 * body's read error (for example a dropped connection) or, when `signal` aborts, an abort error
 * after cancelling the body so the connection is released.
 */
export async function* parseSSE(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SSEEvent, void, undefined> {
  const pending: SSEEvent[] = [];
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      const event: SSEEvent = { data: message.data };
      if (message.event !== undefined) event.event = message.event;
      if (message.id !== undefined) event.id = message.id;
      pending.push(event);
    },
  });
  const decoder = new TextDecoder("utf-8");
  const reader = body.getReader();
  const onAbort = () => {
    reader.cancel().catch(() => {});
  };
  if (signal?.aborted) {
    onAbort();
    throw abortError(signal);
  }
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    while (true) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal?.aborted) throw abortError(signal);
        throw error;
      }
      if (signal?.aborted) throw abortError(signal);
      if (chunk.done) {
        parser.feed(decoder.decode());
        yield* pending.splice(0);
        return;
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      // Yield one at a time so a consumer that stops early leaves nothing half-processed.
      while (pending.length > 0) {
        const next = pending.shift() as SSEEvent;
        yield next;
        if (signal?.aborted) throw abortError(signal);
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {});
    try {
      reader.releaseLock();
    } catch {
      // Already released by the cancel above; nothing left to free.
    }
  }
}
