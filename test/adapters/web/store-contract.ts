/**
 * The contract every `WebChatStore` keeps, run by the memory, file and Redis stores: what the page
 * shows of a conversation (messages, edits, reactions, typing, retried sends), the limits, the feed
 * of changes across instances that share the backend, and what survives a restart.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type WebChatEvent,
  type WebChatStore,
  WebConversationMissingError,
  type WebStoreEvent,
} from "../../../src/adapters/web/index.js";
import { until } from "../support/drive.js";

export interface StoreWorld {
  /** An instance on the backend; instances of one world share it (another process). */
  open(limits?: { maxConversations?: number; maxMessagesPerConversation?: number }): WebChatStore;
  /** Whether a new instance sees what earlier ones wrote (false for the memory store). */
  readonly durable: boolean;
  /** Whether live instances share the backend (processes sharing Redis); else one instance does it all. */
  readonly shared: boolean;
  /** The clock every instance uses. */
  clock: { now: number };
  cleanup(): Promise<void>;
}

const user = { id: "web:local", name: "you", isBot: false };
const bot = { id: "web:bot", name: "Switchboard", isBot: true };

/** Collects a store's feed. */
async function feedOf(store: WebChatStore): Promise<WebStoreEvent[]> {
  const events: WebStoreEvent[] = [];
  await store.subscribe((e) => events.push(e));
  return events;
}

const describeEvent = (e: WebStoreEvent) =>
  e.type === "message" ? `${e.change} ${e.message.id} v${e.message.version}` : e.type;

export function runWebStoreContract(name: string, makeWorld: () => Promise<StoreWorld>): void {
  describe(`web chat store contract: ${name}`, () => {
    let world: StoreWorld;
    const opened: WebChatStore[] = [];
    const open = (limits?: Parameters<StoreWorld["open"]>[0]) => {
      const s = world.open(limits);
      opened.push(s);
      return s;
    };

    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await world?.cleanup();
    });

    it("starts conversations, lists them newest first and names them after the first message a person wrote", async () => {
      world = await makeWorld();
      const store = open();
      const first = await store.create();
      world.clock.now += 10;
      const second = await store.create({ kind: "group", title: "  Release   planning " });
      expect(first).toMatchObject({
        title: "New conversation",
        kind: "direct",
        threadKey: `web:${first.id}`,
      });
      expect(second).toMatchObject({ title: "Release planning", kind: "group" });
      expect((await store.list()).map((c) => c.id)).toEqual([second.id, first.id]);

      world.clock.now += 10;
      await store.add(first.id, { from: bot, text: "Hello from the bot", format: "markdown" });
      expect((await store.get(first.id))?.title).toBe("New conversation");
      await store.add(first.id, { from: user, text: "What is in\n the build folder?", format: "plain" });
      await store.add(first.id, { from: user, text: "And the other one?", format: "plain" });
      await store.add(second.id, { from: user, text: "Not a new title", format: "plain" });
      expect((await store.get(first.id))?.title).toBe("What is in the build folder?");
      expect((await store.get(second.id))?.title).toBe("Release planning");
      expect((await store.list()).map((c) => c.id)).toEqual([second.id, first.id]);
      expect(await store.get("cnothere000")).toBeUndefined();
      expect(await store.messages("cnothere000")).toBeUndefined();

      const again = await store.create({ id: first.id, title: "ignored" });
      expect(again.title).toBe("What is in the build folder?");
    });

    it("numbers messages per conversation, edits, reacts and removes them, never reusing a number", async () => {
      world = await makeWorld();
      const store = open();
      const c = await store.create();
      const a = await store.add(c.id, { from: user, text: "ask", format: "plain" });
      const b = await store.add(c.id, { from: bot, text: "Working…", format: "markdown", replyTo: a.id });
      expect([a.id, b.id]).toEqual(["m1", "m2"]);
      expect(b).toMatchObject({ ref: `web:${c.id}:m2`, conversationId: c.id, version: 1, replyTo: "m1" });

      const e1 = await store.edit(c.id, b.id, "Done.", "markdown");
      expect(e1).toMatchObject({ text: "Done.", version: 2 });
      expect(e1?.editedAt).toBeGreaterThanOrEqual(b.createdAt);
      expect(await store.edit(c.id, b.id, "Done.", "markdown")).toMatchObject({ version: 2 });
      expect(await store.edit(c.id, "m99", "x", "plain")).toBeUndefined();

      expect(await store.react(c.id, b.id, "✅", "bot", true)).toMatchObject({ changed: true });
      expect(await store.react(c.id, b.id, "✅", "bot", true)).toMatchObject({ changed: false });
      const byUser = await store.react(c.id, b.id, "✅", { userId: "web:local" }, true);
      expect(byUser?.message.reactions).toEqual([{ emoji: "✅", bot: true, users: ["web:local"] }]);
      expect(byUser?.message.version).toBe(4);
      await store.react(c.id, b.id, "✅", "bot", false);
      const off = await store.react(c.id, b.id, "✅", { userId: "web:local" }, false);
      expect(off?.message.reactions).toEqual([]);
      expect(await store.react(c.id, "m99", "✅", "bot", true)).toBeUndefined();
      expect(await store.react("cnothere000", b.id, "✅", "bot", true)).toBeUndefined();

      expect(await store.remove(c.id, a.id)).toBe(true);
      expect(await store.remove(c.id, a.id)).toBe(false);
      expect(await store.remove(c.id, b.id)).toBe(true);
      const next = await store.add(c.id, { from: bot, text: "after", format: "markdown" });
      expect(next.id).toBe("m3");
      expect((await store.messages(c.id))?.map((m) => m.text)).toEqual(["after"]);
      expect(await store.message(c.id, "m3")).toMatchObject({ text: "after" });
      expect(await store.message(c.id, "m1")).toBeUndefined();
    });

    it("refuses a message for a conversation that does not exist", async () => {
      world = await makeWorld();
      const store = open();
      await expect(
        store.add("cnothere000", { from: bot, text: "hi", format: "markdown" }),
      ).rejects.toBeInstanceOf(WebConversationMissingError);
    });

    it("keeps the newest messages and conversations within its limits", async () => {
      world = await makeWorld();
      const store = open({ maxConversations: 2, maxMessagesPerConversation: 3 });
      const events = await feedOf(store);
      const c = await store.create();
      for (let i = 0; i < 5; i++)
        await store.add(c.id, { from: bot, text: `message ${i}`, format: "markdown" });
      expect((await store.messages(c.id))?.map((m) => m.text)).toEqual([
        "message 2",
        "message 3",
        "message 4",
      ]);
      await until(
        () => events.filter((e) => e.type === "message_deleted").length === 2,
        5000,
        "the removal of the two oldest",
      );

      world.clock.now += 10;
      const second = await store.create();
      world.clock.now += 10;
      await store.add(c.id, { from: bot, text: "the first is busy again", format: "markdown" });
      world.clock.now += 10;
      const third = await store.create();
      expect((await store.list()).map((x) => x.id)).toEqual([third.id, c.id]);
      expect(await store.get(second.id)).toBeUndefined();
      await until(
        () => events.some((e) => e.type === "conversation_removed" && e.conversationId === second.id),
        5000,
        "the conversation_removed event",
      );
    });

    it("shows typing for its duration", async () => {
      world = await makeWorld();
      const store = open();
      const c = await store.create();
      await store.typing(c.id, 3000);
      world.clock.now += 1000;
      expect(await store.typingNow()).toEqual([{ conversationId: c.id, durationMs: 2000 }]);
      world.clock.now += 2000;
      expect(await store.typingNow()).toEqual([]);
    });

    it("remembers what a request with a client id left", async () => {
      world = await makeWorld();
      const store = open();
      const c = await store.create();
      expect(await store.clientRecord(c.id, "k1")).toBeUndefined();
      await store.rememberClient(c.id, "k1", { messageId: "m1", delivered: false });
      await store.rememberClient(c.id, "k1", { messageId: "m1", delivered: true });
      expect(await store.clientRecord(c.id, "k1")).toEqual({ messageId: "m1", delivered: true });
    });

    it("feeds every change to every instance, in the order the writer made them", async () => {
      world = await makeWorld();
      const writer = open();
      const reader = world.shared ? open() : writer;
      const events = await feedOf(reader);
      const c = await writer.create();
      const m = await writer.add(c.id, { from: bot, text: "one", format: "markdown" });
      for (const t of ["one two", "one two three", "one two three four"])
        await writer.edit(c.id, m.id, t, "markdown");
      await writer.react(c.id, m.id, "👀", "bot", true);
      await writer.typing(c.id, 1000);
      await writer.remove(c.id, m.id);
      const wanted = [
        "conversation",
        "posted m1 v1",
        "conversation",
        "edited m1 v2",
        "edited m1 v3",
        "edited m1 v4",
        "reactions m1 v5",
        "typing",
        "message_deleted",
      ];
      await until(() => events.length >= wanted.length, 30_000, "every change in the feed");
      expect(events.map(describeEvent)).toEqual(wanted);
      const last = events.find(
        (e): e is Extract<WebChatEvent, { type: "message" }> =>
          e.type === "message" && e.change === "edited" && e.message.version === 4,
      );
      expect(last?.message.text).toBe("one two three four");
    });

    it("lets two writers react to one message at once without losing either", async () => {
      world = await makeWorld();
      const a = open();
      const b = world.shared ? open() : a;
      const c = await a.create();
      const m = await a.add(c.id, { from: bot, text: "Approval needed", format: "markdown" });
      await Promise.all([
        ...["✅", "❌", "♾️"].map((e) => a.react(c.id, m.id, e, "bot", true)),
        ...["👍", "🎉", "👀"].map((e) => b.react(c.id, m.id, e, { userId: "web:local" }, true)),
        a.edit(c.id, m.id, "Approval needed (edited)", "markdown"),
      ]);
      const after = await b.message(c.id, m.id);
      expect(after?.reactions.map((r) => r.emoji).sort()).toEqual(["✅", "❌", "♾️", "👀", "👍", "🎉"].sort());
      expect(after?.text).toBe("Approval needed (edited)");
      expect(after?.version).toBe(8);
    });

    it("keeps everything the page shows across a restart", async (ctx) => {
      world = await makeWorld();
      if (!world.durable) ctx.skip(); // the memory store lives and dies with its process by design
      const before = open({ maxMessagesPerConversation: 10 });
      const c = await before.create({ kind: "group" });
      const q = await before.add(c.id, { from: user, text: "@Switchboard ship it?", format: "plain" });
      const r = await before.add(c.id, { from: bot, text: "Checking", format: "markdown", replyTo: q.id });
      await before.edit(c.id, r.id, "Shipped.", "markdown");
      await before.react(c.id, r.id, "✅", "bot", true);
      await before.react(c.id, q.id, "👀", "bot", true);
      const gone = await before.add(c.id, { from: bot, text: "temporary", format: "markdown" });
      await before.remove(c.id, gone.id);
      await before.rememberClient(c.id, "k9", { messageId: q.id, delivered: true });
      const messages = await before.messages(c.id);
      const list = await before.list();
      await before.close();

      const after = open({ maxMessagesPerConversation: 10 });
      expect(await after.list()).toEqual(list);
      expect(await after.messages(c.id)).toEqual(messages);
      expect(await after.clientRecord(c.id, "k9")).toEqual({ messageId: q.id, delivered: true });
      const next = await after.add(c.id, { from: bot, text: "later", format: "markdown" });
      expect(next.id).toBe("m4");
    });
  });
}
