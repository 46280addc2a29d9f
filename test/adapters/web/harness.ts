/**
 * The web chat side of the adapter contract. The "platform" is the adapter's own HTTP API, served
 * by a real Node server: users sign in and write and react through `fetch` exactly as the page does;
 * what the bot did is read back from the conversation store the page is fed from.
 *
 * Web chat has no platform rate limit. For the 429 storm the harness refuses the next posts/edits in
 * front of the adapter with the `ChannelError` a platform adapter would throw, so the renderer's
 * handling of it is still checked with the web chat's capabilities.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type ChannelAdapter, ChannelError, type MessageRef } from "../../../src/adapters/types.js";
import {
  conversationOf,
  MemoryWebChatStore,
  parseMessageRef,
  WebChatAdapter,
  type WebChatConfig,
  type WebConversation,
  type WebMessage,
} from "../../../src/adapters/web/index.js";
import { MemoryWebUploadStore } from "../../../src/adapters/web/upload-store.js";
import { ManualClock } from "../../support/manual-clock.js";
import { type ContractHarness, Received, type UserMessage, type VisibleMessage } from "../contract.js";
import { WebClient } from "./client.js";

export interface WebServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `adapter.app()` on a random loopback port. */
export async function serveWebChat(adapter: WebChatAdapter): Promise<WebServer> {
  const app = adapter.app();
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/** Signs a new client in to the adapter served at `url` (its page at `url` + `base`). */
export async function signIn(adapter: WebChatAdapter, url: string, base = "/"): Promise<WebClient> {
  return WebClient.open(await adapter.signInLink(`${url}${base}`));
}

interface StormState {
  left: number;
  retryAfterMs: number;
  refused: number;
}

/** `inner` with posts and edits refused while a storm lasts. */
function withStorm(inner: WebChatAdapter, storm: StormState): ChannelAdapter {
  const gate = () => {
    if (storm.left <= 0) return;
    storm.left--;
    storm.refused++;
    throw new ChannelError("rate_limited", "too many requests (harness storm)", "web", storm.retryAfterMs);
  };
  return {
    platform: inner.platform,
    capabilities: inner.capabilities,
    start: (h) => inner.start(h),
    stop: () => inner.stop(),
    connections: () => inner.connections(),
    post: async (threadKey, text, opts) => {
      gate();
      return inner.post(threadKey, text, opts);
    },
    edit: async (ref, text, opts) => {
      gate();
      return inner.edit(ref, text, opts);
    },
    delete: (ref) => inner.delete(ref),
    react: (ref, emoji) => inner.react(ref, emoji),
    unreact: (ref, emoji) => inner.unreact(ref, emoji),
    typing: (threadKey) => inner.typing(threadKey),
    channelOf: (threadKey) => inner.channelOf(threadKey),
    fetchHistory: (threadKey, limit, before) => inner.fetchHistory(threadKey, limit, before),
    registerCommands: (commands) => inner.registerCommands(commands),
    download: (file) => inner.download(file),
    uploadFile: (threadKey, file, opts) => inner.uploadFile(threadKey, file, opts),
    findUploaded: (threadKey, key) => inner.findUploaded(threadKey, key),
  };
}

export interface WebHarness extends ContractHarness {
  readonly web: WebChatAdapter;
  readonly server: WebServer;
  readonly client: WebClient;
}

let clientSeq = 0;

export async function createWebHarness(config: WebChatConfig = {}): Promise<WebHarness> {
  const clock = new ManualClock();
  const store = new MemoryWebChatStore({ now: () => clock.now() });
  const uploads = new MemoryWebUploadStore();
  const web = new WebChatAdapter({ now: () => clock.now(), store, uploads, ...config });
  const storm: StormState = { left: 0, retryAfterMs: 0, refused: 0 };
  const adapter = withStorm(web, storm);
  const received = new Received();
  await adapter.start(received);
  const server = await serveWebChat(web);
  const client = await signIn(web, server.url);

  const edits = new Map<string, Array<{ at: number; text: string }>>();
  const unsubscribe = await web.subscribe((e) => {
    if (e.type !== "message" || e.change !== "edited") return;
    const list = edits.get(e.message.ref) ?? [];
    list.push({ at: clock.now(), text: e.message.text });
    edits.set(e.message.ref, list);
  });

  const conversationOfMessage = new Map<string, string>();
  let direct: string | undefined;
  let last: { path: string; body: unknown } | undefined;

  const newConversation = async (kind: "direct" | "group") =>
    (await client.call<{ conversation: WebConversation }>("POST", "api/conversations", { kind })).conversation
      .id;

  const write = async (conversationId: string, text: string): Promise<UserMessage> => {
    const path = `api/conversations/${conversationId}/messages`;
    const body = { text, clientId: `harness-${++clientSeq}` };
    last = { path, body };
    const { message } = await client.call<{ message: WebMessage }>("POST", path, body);
    conversationOfMessage.set(message.id, conversationId);
    return { id: message.id };
  };

  const directConversation = async () => {
    direct ??= await newConversation("direct");
    return direct;
  };

  const harness: WebHarness = {
    platform: "web",
    adapter,
    web,
    server,
    client,
    received,
    clock,
    async groupMessage(o) {
      const parent = o.replyTo ? conversationOfMessage.get(o.replyTo.id) : undefined;
      const conversationId = parent ?? (await newConversation("group"));
      return write(conversationId, o.mention ? `@${web.identity.botName} ${o.text}` : o.text);
    },
    async directMessage(text) {
      return write(await directConversation(), text);
    },
    async fileMessage(o) {
      const conversationId = await newConversation("group");
      const file = await client.upload(conversationId, o.name, o.bytes);
      const path = `api/conversations/${conversationId}/messages`;
      const body = {
        text: `@${web.identity.botName} ${o.text}`,
        clientId: `harness-${++clientSeq}`,
        files: [file],
      };
      last = { path, body };
      const { message } = await client.call<{ message: WebMessage }>("POST", path, body);
      conversationOfMessage.set(message.id, conversationId);
      return { id: message.id };
    },
    botFiles(threadKey: string) {
      const conversationId = conversationOf(threadKey);
      return (store.messagesNow(conversationId) ?? [])
        .filter((m) => m.from.isBot)
        .flatMap((m) =>
          (m.files ?? []).flatMap((f) => {
            const bytes = uploads.bytesOf(conversationId, f.id);
            return bytes ? [{ name: f.name, bytes, caption: m.text }] : [];
          }),
        );
    },
    async react(ref: MessageRef, emoji: string) {
      const { conversationId, messageId } = parseMessageRef(ref);
      const path = `api/conversations/${conversationId}/messages/${messageId}/reactions`;
      const body = { emoji, added: true };
      last = { path, body };
      await client.call("POST", path, body);
    },
    async command(name, args) {
      await write(await directConversation(), `/${name} ${args}`);
    },
    async redeliverLast() {
      if (!last) throw new Error("nothing delivered yet");
      await client.call("POST", last.path, last.body);
    },
    thread(threadKey: string): VisibleMessage[] {
      return (store.messagesNow(conversationOf(threadKey)) ?? []).map((m) => ({
        text: m.text,
        fromBot: m.from.isBot,
      }));
    },
    edits(ref: MessageRef) {
      return edits.get(ref) ?? [];
    },
    rateLimitStorm(count, retryAfterMs) {
      storm.left = count;
      storm.retryAfterMs = retryAfterMs;
    },
    rateLimited() {
      return storm.refused;
    },
    async close() {
      unsubscribe();
      await web.stop();
      await server.close();
    },
  };
  return harness;
}
