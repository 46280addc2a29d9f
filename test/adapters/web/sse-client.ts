/** A small Server-Sent Events client for tests: reads the web chat's event stream over fetch. */
import { createParser } from "eventsource-parser";
import { until } from "../support/drive.js";

export interface ReceivedEvent {
  event: string;
  id: string | undefined;
  data: Record<string, unknown>;
}

export interface EventStreamClient {
  readonly status: number;
  readonly events: ReceivedEvent[];
  /** True once the server ended the stream. */
  readonly ended: boolean;
  /** Waits (bounded) for an event matching `match` among all received so far, and returns it. */
  waitFor(match: (e: ReceivedEvent) => boolean, what?: string): Promise<ReceivedEvent>;
  close(): void;
}

export async function openEventStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<EventStreamClient> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: abort.signal,
  });
  const events: ReceivedEvent[] = [];
  let ended = false;
  const parser = createParser({
    onEvent(e) {
      events.push({
        event: e.event ?? "message",
        id: e.id,
        data: JSON.parse(e.data) as Record<string, unknown>,
      });
    },
  });
  if (res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }));
        }
      } catch {
        // aborted by close()
      } finally {
        ended = true;
      }
    })();
  } else {
    ended = true;
  }
  return {
    status: res.status,
    events,
    get ended() {
      return ended;
    },
    async waitFor(match, what = "an event") {
      let found: ReceivedEvent | undefined;
      await until(
        () => {
          found = events.find(match);
          return found !== undefined;
        },
        5000,
        what,
      );
      return found as ReceivedEvent;
    },
    close() {
      abort.abort();
    },
  };
}
