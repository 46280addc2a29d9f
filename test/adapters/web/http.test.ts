/**
 * The web chat's HTTP API as the page uses it (signed in, with its CSRF token): sending, commands,
 * reactions, errors, live events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundHandlers } from "../../../src/adapters/types.js";
import {
  MemoryWebChatStore,
  WebChatAdapter,
  type WebConversation,
  type WebMessage,
  type WebStoreListener,
} from "../../../src/adapters/web/index.js";
import { Received } from "../contract.js";
import { until } from "../support/drive.js";
import type { WebClient } from "./client.js";
import { serveWebChat, signIn, type WebServer } from "./harness.js";
import { openEventStream } from "./sse-client.js";

let adapter: WebChatAdapter;
let received: Received;
let server: WebServer;
let client: WebClient;

async function setup(
  config: ConstructorParameters<typeof WebChatAdapter>[0] = {},
  handlers?: InboundHandlers,
) {
  adapter = new WebChatAdapter({ admins: ["web:local"], ...config });
  received = new Received();
  await adapter.start(handlers ?? received);
  server = await serveWebChat(adapter);
  client = await signIn(adapter, server.url);
}

afterEach(async () => {
  await adapter.stop();
  await server.close();
});

const newConversation = async (body: Record<string, unknown> = {}) =>
  (await client.call<{ conversation: WebConversation }>("POST", "api/conversations", body)).conversation;

const send = async (conversationId: string, text: string, clientId?: string) =>
  (
    await client.call<{ message: WebMessage }>("POST", `api/conversations/${conversationId}/messages`, {
      text,
      ...(clientId ? { clientId } : {}),
    })
  ).message;

/** A request with a raw body (the page's cookie and CSRF token included), and its status and answer. */
async function status(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: client.headers({
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    }),
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.status, body: (await res.json()) as { message?: string } };
}

const reactionPath = (ref: string) => {
  const [, conversationId, messageId] = ref.split(":");
  return `api/conversations/${conversationId}/messages/${messageId}/reactions`;
};

describe("web chat HTTP API", () => {
  beforeEach(() => setup());

  it("delivers a typed message as an InboundMessage and names the conversation after it", async () => {
    const conversation = await newConversation();
    expect(conversation).toMatchObject({ kind: "direct", title: "New conversation" });
    const message = await send(conversation.id, "What is in the build folder?");
    expect(received.messages).toHaveLength(1);
    expect(received.messages[0]).toMatchObject({
      platform: "web",
      threadKey: `web:${conversation.id}`,
      messageId: message.ref,
      channelId: conversation.id,
      text: "What is in the build folder?",
      mentioned: true,
      isDirect: true,
      user: { id: "web:local", name: "you", isBot: false },
      attachments: [],
    });
    expect(received.messages[0]?.eventId).toMatch(/^web:/);
    const list = await client.call<{ conversations: WebConversation[] }>("GET", "api/conversations");
    expect(list.conversations.map((c) => c.title)).toEqual(["What is in the build folder?"]);
    const stored = await client.call<{ messages: WebMessage[] }>(
      "GET",
      `api/conversations/${conversation.id}/messages`,
    );
    expect(stored.messages.map((m) => m.text)).toEqual(["What is in the build folder?"]);
  });

  it("delivers a line starting with a slash command as an InboundCommand, but not a path", async () => {
    const { id } = await newConversation();
    const command = await send(id, "/model claude-sonnet");
    await send(id, "/etc/hosts is broken");
    expect(received.commands).toEqual([
      expect.objectContaining({
        platform: "web",
        threadKey: `web:${id}`,
        name: "model",
        args: "claude-sonnet",
        messageId: command.ref,
        isDirect: true,
      }),
    ]);
    expect(received.messages.map((m) => m.text)).toEqual(["/etc/hosts is broken"]);
  });

  it("in a group conversation delivers only @mentions, with the mention removed", async () => {
    const { id } = await newConversation({ kind: "group", title: "Release planning" });
    await send(id, "shall we ship on Friday?");
    await send(id, "@Switchboard is CI green?");
    expect(received.messages.map((m) => [m.text, m.isDirect])).toEqual([["is CI green?", false]]);
    const history = await adapter.fetchHistory(`web:${id}`, 20, received.messages[0]?.messageId);
    expect(history.map((h) => h.text)).toEqual(["shall we ship on Friday?"]);
    expect((await adapter.store.get(id))?.title).toBe("Release planning");
  });

  it("answers a retried send once, and delivers again when the first delivery failed", async () => {
    let failures = 1;
    const flaky: InboundHandlers = {
      onMessage: (m) => {
        if (failures-- > 0) throw new Error("inbox unavailable");
        received.onMessage(m);
      },
      onReaction: (r) => received.onReaction(r),
      onCommand: (c) => received.onCommand(c),
    };
    await adapter.stop();
    await adapter.start(flaky);
    const { id } = await newConversation();
    const path = `/api/conversations/${id}/messages`;
    const body = JSON.stringify({ text: "deploy it", clientId: "page-1" });
    const first = await status("POST", path, body);
    expect(first.status).toBe(502);
    expect(first.body.message).toMatch(/send it again/);
    expect((await status("POST", path, body)).status).toBe(201);
    expect((await status("POST", path, body)).status).toBe(201);
    expect(received.messages.map((m) => m.text)).toEqual(["deploy it"]);
    expect((await adapter.store.messages(id))?.map((m) => m.text)).toEqual(["deploy it"]);
  });

  it("turns a click on an approval button into an InboundReaction, once", async () => {
    const { id } = await newConversation();
    const ref = await adapter.post(`web:${id}`, "🔐 Approval needed: `bash`");
    for (const emoji of ["✅", "❌", "♾️"]) await adapter.react(ref, emoji);
    const path = reactionPath(ref);
    const approved = await client.call<{ message: WebMessage }>("POST", path, { emoji: "✅" });
    expect(approved.message.reactions).toContainEqual({ emoji: "✅", bot: true, users: ["web:local"] });
    await client.call("POST", path, { emoji: "✅" });
    expect(received.reactions).toEqual([
      expect.objectContaining({
        platform: "web",
        threadKey: `web:${id}`,
        messageId: ref,
        emoji: "✅",
        added: true,
        user: { id: "web:local", name: "you", isBot: false },
      }),
    ]);
    await client.call("POST", path, { emoji: "✅", added: false });
    expect(received.reactions.map((r) => [r.emoji, r.added])).toEqual([
      ["✅", true],
      ["✅", false],
    ]);
    expect(new Set(received.reactions.map((r) => r.eventId)).size).toBe(2);
  });

  it("refuses bad requests with a status and a reason", async () => {
    const { id } = await newConversation();
    const cases: Array<[string, string, string | undefined, number]> = [
      ["POST", "/api/conversations/cnothere00/messages", '{"text":"hi"}', 404],
      ["POST", "/api/conversations/not-an-id/messages", '{"text":"hi"}', 404],
      ["GET", "/api/conversations/cnothere00/messages", undefined, 404],
      ["POST", `/api/conversations/${id}/messages`, '{"text":"   "}', 400],
      ["POST", `/api/conversations/${id}/messages`, '{"text":42}', 400],
      ["POST", `/api/conversations/${id}/messages`, "{not json", 400],
      ["POST", `/api/conversations/${id}/messages`, JSON.stringify({ text: "x".repeat(20_001) }), 413],
      ["POST", "/api/conversations", '{"kind":"channel"}', 400],
      ["POST", `/api/conversations/${id}/messages/m999/reactions`, '{"emoji":"✅"}', 404],
      ["POST", "/api/conversations/cnothere00/messages/m1/reactions", '{"emoji":"✅"}', 404],
    ];
    for (const [method, path, body, expected] of cases) {
      const res = await status(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, expected]);
      expect(res.body.message).toBeTruthy();
    }
    const ref = await adapter.post(`web:${id}`, "hello");
    const bad = await status("POST", `/${reactionPath(ref)}`, '{"emoji":"not an emoji"}');
    expect(bad.status).toBe(400);
    const form = await fetch(`${server.url}/api/conversations`, {
      method: "POST",
      headers: client.headers({ "content-type": "application/x-www-form-urlencoded" }),
      body: "kind=direct",
    });
    expect(form.status).toBe(415);
    expect(received.messages).toEqual([]);
  });

  it("refuses sends while the channel is stopped", async () => {
    const { id } = await newConversation();
    await adapter.stop();
    const res = await status("POST", `/api/conversations/${id}/messages`, '{"text":"anyone?"}');
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/not running/);
  });
});

describe("web chat event stream", () => {
  beforeEach(() => setup({ typingDurationMs: 3000 }));

  it("starts with a snapshot, then pushes posts, edits, reactions and typing", async () => {
    const { id } = await newConversation();
    await send(id, "hi");
    await adapter.registerCommands([{ name: "model", description: "Show or switch the model" }]);
    const stream = await openEventStream(`${server.url}/api/events?conversation=${id}`, {
      cookie: client.cookie,
    });
    try {
      expect(stream.status).toBe(200);
      const snapshot = await stream.waitFor((e) => e.event === "snapshot", "the snapshot");
      expect(snapshot.data).toMatchObject({
        me: { id: "web:local", name: "you", isAdmin: true, botName: "Switchboard" },
        conversationId: id,
        messages: [expect.objectContaining({ text: "hi" })],
        commands: [{ name: "model", description: "Show or switch the model" }],
      });
      const ref = await adapter.post(`web:${id}`, "Hel");
      await adapter.edit(ref, "Hello!");
      await adapter.react(ref, "👀");
      await adapter.typing(`web:${id}`);
      const posted = await stream.waitFor(
        (e) => e.event === "message" && e.data.change === "posted" && isBot(e),
      );
      expect(posted.data.message).toMatchObject({ ref, text: "Hel", version: 1 });
      const edited = await stream.waitFor((e) => e.event === "message" && e.data.change === "edited");
      expect(edited.data.message).toMatchObject({ ref, text: "Hello!", version: 2 });
      const reacted = await stream.waitFor((e) => e.event === "message" && e.data.change === "reactions");
      expect(reacted.data.message).toMatchObject({ reactions: [{ emoji: "👀", bot: true, users: [] }] });
      const typing = await stream.waitFor((e) => e.event === "typing");
      expect(typing.data).toEqual({ conversationId: id, durationMs: 3000 });
      const ids = stream.events.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    } finally {
      stream.close();
    }
  });

  it("replays the state on reconnect, so an edit made while away is not lost", async () => {
    const { id } = await newConversation();
    const first = await openEventStream(`${server.url}/api/events?conversation=${id}`, {
      cookie: client.cookie,
    });
    const ref = await adapter.post(`web:${id}`, "Working on it");
    await first.waitFor((e) => e.event === "message" && e.data.change === "posted");
    first.close();
    await until(() => adapter.connections()[0]?.detail === "0 page(s) open", 30_000, "the stream to close");
    await adapter.edit(ref, "Done: 3 files changed.");
    await adapter.typing(`web:${id}`);
    const second = await openEventStream(`${server.url}/api/events?conversation=${id}`, {
      cookie: client.cookie,
    });
    try {
      const snapshot = await second.waitFor((e) => e.event === "snapshot");
      expect(snapshot.data.messages).toEqual([
        expect.objectContaining({ ref, text: "Done: 3 files changed.", version: 2 }),
      ]);
      expect(snapshot.data.typing).toEqual([{ conversationId: id, durationMs: expect.any(Number) }]);
    } finally {
      second.close();
    }
  });

  it("counts open pages and ends their streams when the channel stops", async () => {
    expect(adapter.connections()).toEqual([
      expect.objectContaining({ name: "web:http", state: "connected" }),
    ]);
    const stream = await openEventStream(`${server.url}/api/events`, { cookie: client.cookie });
    await stream.waitFor((e) => e.event === "snapshot");
    expect(adapter.connections()[0]?.detail).toBe("1 page(s) open");
    await adapter.stop();
    await until(() => stream.ended, 30_000, "the stream to end");
    expect(adapter.connections()[0]).toMatchObject({ state: "stopped", detail: "0 page(s) open" });
  });
});

describe("web chat event stream and the store's feed", () => {
  /** A memory store whose feed can say "resync", as the Redis store does after its connection dropped. */
  class FlakyFeedStore extends MemoryWebChatStore {
    private readonly feeds = new Set<WebStoreListener>();
    override async subscribe(listener: WebStoreListener): Promise<() => void> {
      this.feeds.add(listener);
      const off = await super.subscribe(listener);
      return () => {
        this.feeds.delete(listener);
        off();
      };
    }
    resync(): void {
      for (const l of this.feeds) l({ type: "resync" });
    }
  }

  it("sends a stream only its own conversation's messages, and a fresh snapshot after a resync", async () => {
    const store = new FlakyFeedStore();
    await setup({ store });
    const mine = await newConversation();
    const other = await newConversation();
    const stream = await openEventStream(`${server.url}/api/events?conversation=${mine.id}`, {
      cookie: client.cookie,
    });
    try {
      await stream.waitFor((e) => e.event === "snapshot");
      await adapter.post(`web:${other.id}`, "for the other conversation");
      await adapter.typing(`web:${other.id}`);
      await adapter.post(`web:${mine.id}`, "for this one");
      await stream.waitFor((e) => e.event === "message" && isBot(e));
      const texts = stream.events.flatMap((e) =>
        e.event === "message" ? [(e.data.message as WebMessage).text] : [],
      );
      expect(texts).toEqual(["for this one"]);
      expect(stream.events.some((e) => e.event === "typing")).toBe(false);
      // The list still learns about the other conversation's activity.
      expect(
        stream.events.some(
          (e) => e.event === "conversation" && (e.data.conversation as WebConversation).id === other.id,
        ),
      ).toBe(true);

      store.resync();
      const second = await stream.waitFor(
        (e) => e.event === "snapshot" && stream.events.indexOf(e) > 0,
        "a second snapshot",
      );
      expect((second.data.messages as WebMessage[]).map((m) => m.text)).toEqual(["for this one"]);
    } finally {
      stream.close();
    }
  });
});

function isBot(e: { data: Record<string, unknown> }): boolean {
  return (e.data.message as WebMessage | undefined)?.from.isBot === true;
}
