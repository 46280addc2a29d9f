/** The web chat adapter's outbound side, its memory bounds, and how typed lines are read. */
import { describe, expect, it } from "vitest";
import { ChannelError, isChannelError } from "../../../src/adapters/types.js";
import { interpretLine } from "../../../src/adapters/web/inbound.js";
import { WebChatAdapter, type WebChatEvent } from "../../../src/adapters/web/index.js";
import { Received } from "../contract.js";

async function rejection(p: Promise<unknown>): Promise<ChannelError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ChannelError) return err;
    throw err;
  }
  throw new Error("expected a ChannelError");
}

describe("web chat adapter, outbound", () => {
  it("posts, edits, reacts and deletes, telling the page each change", async () => {
    const adapter = new WebChatAdapter();
    const events: WebChatEvent[] = [];
    await adapter.subscribe((e) => {
      if (e.type !== "resync") events.push(e);
    });
    const { threadKey } = await adapter.createConversation();
    const ref = await adapter.post(threadKey, "Working…");
    await adapter.edit(ref, "Done.\n\n");
    await adapter.edit(ref, "Done.");
    await adapter.react(ref, "👀");
    await adapter.unreact(ref, "👀");
    await adapter.delete(ref);
    expect(
      events.filter((e) => e.type !== "conversation").map((e) => (e.type === "message" ? e.change : e.type)),
    ).toEqual(["posted", "edited", "reactions", "reactions", "message_deleted"]);
    expect(await adapter.fetchHistory(threadKey, 10)).toEqual([]);
    expect(adapter.channelOf(threadKey)).toBe(threadKey);
  });

  it("refuses what a platform would refuse, with the code the renderer understands", async () => {
    const adapter = new WebChatAdapter();
    const { threadKey } = await adapter.createConversation();
    const ref = await adapter.post(threadKey, "hello");
    expect((await rejection(adapter.post("telegram:1:0:0", "hi"))).kind).toBe("bad_request");
    expect((await rejection(adapter.post(threadKey, "   "))).kind).toBe("bad_request");
    expect((await rejection(adapter.post(threadKey, "x".repeat(100_001)))).kind).toBe("too_long");
    expect((await rejection(adapter.edit("web:cnothere00:m1", "hi"))).kind).toBe("not_found");
    expect((await rejection(adapter.edit("slack:T:C:1", "hi"))).kind).toBe("not_found");
    const otherConversation = (await adapter.createConversation()).id;
    expect(
      (await rejection(adapter.edit(ref.replace(/web:c\w+:/, `web:${otherConversation}:`), "hi"))).kind,
    ).toBe("not_found");
    await adapter.delete(ref);
    const gone = await rejection(adapter.edit(ref, "again"));
    expect(isChannelError(gone, "not_found")).toBe(true);
    expect((await rejection(adapter.delete(ref))).kind).toBe("not_found");
  });

  it("posts into a conversation this process forgot (a restart), creating it", async () => {
    const adapter = new WebChatAdapter();
    const ref = await adapter.post("web:cforgotten1", "Still here.");
    expect(ref).toMatch(/^web:cforgotten1:m\d+$/);
    expect(await adapter.store.get("cforgotten1")).toMatchObject({ threadKey: "web:cforgotten1" });
  });

  it("keeps memory bounded: old messages and conversations are forgotten first", async () => {
    const adapter = new WebChatAdapter({ maxMessagesPerConversation: 3 });
    const removed: string[] = [];
    let now = 1000;
    const clocked = new WebChatAdapter({ maxConversations: 2, now: () => now });
    await clocked.subscribe((e) => {
      if (e.type === "conversation_removed") removed.push(e.conversationId);
    });
    const { threadKey } = await adapter.createConversation();
    const refs: string[] = [];
    for (let i = 0; i < 5; i++) refs.push(await adapter.post(threadKey, `message ${i}`));
    expect((await adapter.fetchHistory(threadKey, 10)).map((m) => m.text)).toEqual([
      "message 2",
      "message 3",
      "message 4",
    ]);
    expect((await rejection(adapter.edit(refs[0] as string, "x"))).kind).toBe("not_found");

    const first = await clocked.createConversation();
    now += 10;
    const second = await clocked.createConversation();
    now += 10;
    await clocked.post(first.threadKey, "first is busy again");
    now += 10;
    await clocked.createConversation();
    expect(removed).toEqual([second.id]);
    expect((await clocked.store.list()).map((c) => c.id)).not.toContain(second.id);
  });

  it("returns the history before a message, the latest ones first cut", async () => {
    const adapter = new WebChatAdapter();
    await adapter.start(new Received());
    const { id, threadKey } = await adapter.createConversation({ kind: "group" });
    for (const t of ["one", "two", "three"]) await adapter.receiveText(id, t);
    const ask = await adapter.receiveText(id, "@Switchboard four?");
    await adapter.post(threadKey, "five");
    expect((await adapter.fetchHistory(threadKey, 2, ask.ref)).map((m) => [m.text, m.fromBot])).toEqual([
      ["two", false],
      ["three", false],
    ]);
    expect((await adapter.fetchHistory(threadKey, 10)).map((m) => m.fromBot)).toEqual([
      false,
      false,
      false,
      false,
      true,
    ]);
    await adapter.stop();
  });

  it("shows typing for its duration and reports it to pages that connect meanwhile", async () => {
    let now = 0;
    const adapter = new WebChatAdapter({ typingDurationMs: 3000, now: () => now });
    const { id, threadKey } = await adapter.createConversation();
    await adapter.typing(threadKey);
    now = 1000;
    expect(await adapter.store.typingNow()).toEqual([{ conversationId: id, durationMs: 2000 }]);
    now = 3000;
    expect(await adapter.store.typingNow()).toEqual([]);
  });

  it("stop waits for a delivery in progress", async () => {
    const adapter = new WebChatAdapter();
    let release!: () => void;
    const taken = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    await adapter.start({
      onMessage: async () => {
        await taken;
        order.push("delivered");
      },
      onReaction() {},
      onCommand() {},
    });
    const { id } = await adapter.createConversation();
    const sending = adapter.receiveText(id, "hi");
    const stopping = adapter.stop().then(() => order.push("stopped"));
    release();
    await Promise.all([sending, stopping]);
    expect(order).toEqual(["delivered", "stopped"]);
  });
});

describe("reading a typed line", () => {
  it("finds commands the way other platforms deliver them", () => {
    expect(interpretLine("/model gpt-5", "direct", "Switchboard")).toEqual({
      kind: "command",
      name: "model",
      args: "gpt-5",
    });
    expect(interpretLine("/STOP", "group", "Switchboard")).toEqual({
      kind: "command",
      name: "stop",
      args: "",
    });
    expect(interpretLine("/steer  use the\nother file ", "direct", "Switchboard")).toEqual({
      kind: "command",
      name: "steer",
      args: "use the\nother file",
    });
    expect(interpretLine("/etc/hosts is broken", "direct", "Switchboard").kind).toBe("message");
  });

  it("in groups, counts only a real @mention of the bot and removes it", () => {
    const read = (t: string) => interpretLine(t, "group", "Switchboard");
    expect(read("@switchboard, what changed?")).toEqual({
      kind: "message",
      text: "what changed?",
      mentioned: true,
    });
    expect(read("ask @Switchboard about it")).toEqual({
      kind: "message",
      text: "ask about it",
      mentioned: true,
    });
    expect(read("mail me at ops@switchboard.dev")).toMatchObject({ mentioned: false });
    expect(read("@switchboardish hello")).toMatchObject({ mentioned: false });
    expect(read("no mention here")).toEqual({ kind: "message", text: "no mention here", mentioned: false });
    expect(interpretLine("hello", "direct", "Switchboard")).toEqual({
      kind: "message",
      text: "hello",
      mentioned: true,
    });
  });
});
