/**
 * The page's live feed (`GET /api/events`, Server-Sent Events). Every stream starts with a
 * `snapshot` event: the conversation list, the messages of the conversation named by
 * `?conversation=`, who the user is and the command help. Then each change follows as its own event:
 * `conversation` and `conversation_removed` for the list, and `message`, `message_deleted` and
 * `typing` for the stream's conversation. Events carry whole objects with a `version`, so a page
 * that reconnects (the browser does it by itself) is up to date again from the snapshot and never
 * misses an edit. When the store says changes may have been lost (its feed reconnected), the stream
 * sends a fresh snapshot.
 *
 * A page that reads too slowly is disconnected rather than buffered without bound; it reconnects
 * and gets a fresh snapshot.
 */
import type { Context, Env } from "hono";
import { streamSSE } from "hono/streaming";
import type { WebChatEvent, WebSnapshot } from "./model.js";
import type { WebChatService } from "./service.js";
import type { WebStoreEvent } from "./store-types.js";

/** Events queued for one slow page before it is dropped (it reconnects and gets a snapshot). */
const MAX_QUEUED = 5000;
/** What the browser waits before reconnecting, in ms. */
const RECONNECT_MS = 1000;

type Item = { event: string; data: string } | { comment: string } | { snapshot: true };

/** The snapshot a page gets first. */
async function snapshotOf(adapter: WebChatService, conversationId?: string): Promise<WebSnapshot> {
  const [conversations, typing, messages] = await Promise.all([
    adapter.store.list(),
    adapter.store.typingNow(),
    conversationId ? adapter.store.messages(conversationId) : Promise.resolve(undefined),
  ]);
  const snapshot: WebSnapshot = { me: adapter.identity, conversations, commands: adapter.commands, typing };
  if (conversationId && messages) {
    snapshot.conversationId = conversationId;
    snapshot.messages = messages;
  }
  return snapshot;
}

/** Whether a stream following `conversationId` sends `event`. */
function concerns(event: WebChatEvent, conversationId: string | undefined): boolean {
  switch (event.type) {
    case "conversation":
    case "conversation_removed":
      return true;
    case "message":
      return event.message.conversationId === conversationId;
    case "message_deleted":
    case "typing":
      return event.conversationId === conversationId;
  }
}

/** Serves one event stream until the page goes away, the adapter stops or the page falls behind. */
export function serveEventStream<E extends Env>(c: Context<E>, adapter: WebChatService): Response {
  const conversationId = c.req.query("conversation") || undefined;
  const heartbeatMs = adapter.config.heartbeatMs ?? 20_000;
  c.header("X-Accel-Buffering", "no");
  c.header("Cache-Control", "no-store");
  return streamSSE(
    c,
    async (stream) => {
      const queue: Item[] = [];
      let wake: (() => void) | undefined;
      let closed = false;
      const close = () => {
        closed = true;
        wake?.();
        // Ends a write that waits for a page that stopped reading.
        if (!stream.aborted) stream.abort();
      };
      const push = (item: Item) => {
        if (closed) return;
        if (queue.length >= MAX_QUEUED) {
          close();
          return;
        }
        queue.push(item);
        wake?.();
      };
      const onEvent = (e: WebStoreEvent) => {
        if (e.type === "resync") {
          // Whatever is queued is older than the state the snapshot will read.
          queue.length = 0;
          push({ snapshot: true });
          return;
        }
        if (!concerns(e, conversationId)) return;
        const { type, ...data } = e;
        push({ event: type, data: JSON.stringify(data) });
      };
      const offStop = adapter.onStop(close);
      const release = adapter.trackStream();
      const heartbeat = setInterval(() => push({ comment: "keep-alive" }), heartbeatMs);
      heartbeat.unref();
      stream.onAbort(close);
      let unsubscribe: (() => void) | undefined;
      let id = 0;
      try {
        // Subscribe before reading the snapshot, so nothing between the two is lost.
        unsubscribe = await adapter.subscribe(onEvent);
        queue.unshift({ snapshot: true });
        await stream.write(`retry: ${RECONNECT_MS}\n\n`);
        while (!closed && !stream.aborted) {
          const item = queue.shift();
          if (!item) {
            await new Promise<void>((r) => (wake = r));
            wake = undefined;
            continue;
          }
          if ("comment" in item) await stream.write(`: ${item.comment}\n\n`);
          else if ("snapshot" in item) {
            const snapshot = await snapshotOf(adapter, conversationId);
            await stream.writeSSE({ event: "snapshot", data: JSON.stringify(snapshot), id: String(++id) });
          } else await stream.writeSSE({ event: item.event, data: item.data, id: String(++id) });
        }
      } finally {
        clearInterval(heartbeat);
        unsubscribe?.();
        offStop();
        release();
      }
    },
    async (err) => {
      // The page reconnects and starts again from a snapshot.
      adapter.config.logger?.warn({ err }, "web chat: an event stream failed");
    },
  );
}
