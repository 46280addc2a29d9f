/**
 * The page's live feed (`GET /api/events`, Server-Sent Events). Every stream starts with a
 * `snapshot` event: the conversation list, the messages of the conversation named by
 * `?conversation=`, who the user is and the command help. Then each change follows as its own event
 * (`conversation`, `conversation_removed`, `message`, `message_deleted`, `typing`), carrying whole
 * objects with a `version`, so a page that reconnects (the browser does it by itself) is up to date
 * again from the snapshot and never misses an edit.
 *
 * A page that reads too slowly is disconnected rather than buffered without bound; it reconnects
 * and gets a fresh snapshot.
 */
import type { Context, Env } from "hono";
import { streamSSE } from "hono/streaming";
import type { WebChatAdapter } from "./adapter.js";
import type { WebChatEvent, WebSnapshot } from "./model.js";

/** Events queued for one slow page before it is dropped (it reconnects and gets a snapshot). */
const MAX_QUEUED = 5000;
/** What the browser waits before reconnecting, in ms. */
const RECONNECT_MS = 1000;

type Item = { event: string; data: string } | { comment: string };

/** The snapshot a page gets first. */
export function snapshotOf(adapter: WebChatAdapter, conversationId?: string): WebSnapshot {
  const snapshot: WebSnapshot = {
    me: adapter.identity,
    conversations: adapter.store.list(),
    commands: adapter.commands,
    typing: adapter.store.typingNow(),
  };
  const messages = conversationId ? adapter.store.messages(conversationId) : undefined;
  if (conversationId && messages) {
    snapshot.conversationId = conversationId;
    snapshot.messages = messages;
  }
  return snapshot;
}

function itemOf(event: WebChatEvent): Item {
  const { type, ...data } = event;
  return { event: type, data: JSON.stringify(data) };
}

/** Serves one event stream until the page goes away, the adapter stops or the page falls behind. */
export function serveEventStream<E extends Env>(c: Context<E>, adapter: WebChatAdapter): Response {
  const conversationId = c.req.query("conversation") || undefined;
  const heartbeatMs = adapter.config.heartbeatMs ?? 20_000;
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (stream) => {
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
    // Subscribe before taking the snapshot, so nothing between the two is lost.
    const unsubscribe = adapter.subscribe((e) => push(itemOf(e)));
    const offStop = adapter.onStop(close);
    const release = adapter.trackStream();
    const heartbeat = setInterval(() => push({ comment: "keep-alive" }), heartbeatMs);
    heartbeat.unref();
    stream.onAbort(close);
    queue.unshift({ event: "snapshot", data: JSON.stringify(snapshotOf(adapter, conversationId)) });
    let id = 0;
    try {
      await stream.write(`retry: ${RECONNECT_MS}\n\n`);
      while (!closed && !stream.aborted) {
        const item = queue.shift();
        if (!item) {
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
          continue;
        }
        if ("comment" in item) await stream.write(`: ${item.comment}\n\n`);
        else await stream.writeSSE({ event: item.event, data: item.data, id: String(++id) });
      }
    } finally {
      clearInterval(heartbeat);
      unsubscribe();
      offStop();
      release();
    }
  });
}
