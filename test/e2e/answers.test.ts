/**
 * Every answer in its own message, on every platform and the web chat: a second message sent while
 * the first answer streams is taken into the run, and its answer appears as a new bot message after
 * the user's second message (a reply to it where the platform shows replies), never appended to the
 * first answer. The typing indicator is gone by the time the final text shows (within one edit
 * interval); both are read from what the fake platforms recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebMessage } from "../../src/adapters/web/model.js";
import type { Gateway } from "../../src/gateway/app/index.js";
import { WebClient } from "../adapters/web/client.js";
import { BOT_USER_ID as DISCORD_BOT } from "../fakes/discord/server.js";
import { BOT_USER_ID as SLACK_BOT } from "../fakes/slack/server.js";
import { type FakeChat, BOT_ID as TG_BOT } from "../fakes/telegram/server.js";
import { GENERAL_ID, SLACK_ADMIN, scriptedAnswer, TG_USERS, until, World } from "./support/world.js";

/** Edit interval of every channel in the e2e config (`editIntervalMs: 100`); the web chat's default. */
const EDIT_INTERVAL_MS = 100;
const WEB_EDIT_INTERVAL_MS = 250;
const DISCORD_TYPING_MS = 10_000;

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create();
  // One character per event, 25 ms apart: the first answer streams for about half a second, long
  // enough for the second message to arrive while it does.
  world.llm.respondWith("openai-completions", scriptedAnswer("alpha", { fragmentSize: 1, writeDelayMs: 25 }));
  app = await world.start("all", { web: true });
  world.slack.eventsUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await world?.close();
});

/** Windows in which "typing…" showed: each from a typing call until it fades or a bot message ends it. */
function windows(
  typing: number[],
  posts: number[],
  durationMs: number,
): Array<{ from: number; until: number }> {
  return typing.map((t) => ({
    from: t,
    until: Math.min(t + durationMs, posts.find((p) => p >= t) ?? Number.POSITIVE_INFINITY),
  }));
}

describe("two messages in quick succession", () => {
  it("Telegram: two bot messages in order, the second replying to the user's second message", async () => {
    const tg = world.telegram;
    const chat: FakeChat = { id: -100660001, type: "supergroup", title: "Answers" };
    const m1 = tg.userMessage({ chat, from: TG_USERS.alice, text: "first question", mention: true });
    const streaming = await until(() => tg.botMessages(chat.id)[0], "the first answer to start");
    const m2 = tg.userMessage({
      chat,
      from: TG_USERS.alice,
      text: "second question",
      replyTo: streaming.message_id,
    });
    const second = await until(
      () => tg.botMessages(chat.id).find((m) => m.text === "alpha answers: second question"),
      "the second answer",
    );
    await until(
      () => tg.botMessages(chat.id)[0]?.text === "alpha answers: first question",
      "the first answer",
    );
    expect(tg.chat(chat.id).map((m) => [m.from.id === TG_BOT ? "bot" : "alice", m.text])).toEqual([
      ["alice", "@switchboard_bot first question"],
      ["bot", "alpha answers: first question"],
      ["alice", "second question"],
      ["bot", "alpha answers: second question"],
    ]);
    expect(tg.botMessages(chat.id)[0]?.reply_to_message_id).toBe(m1.message_id);
    expect(second.reply_to_message_id).toBe(m2.message_id);

    const finalAt = tg.calls.find((c) => c.visibleText === "alpha answers: second question")?.at ?? 0;
    const shown = tg.typingWindows(chat.id);
    expect(shown.length).toBeGreaterThan(0);
    for (const w of shown) expect(w.until).toBeLessThanOrEqual(finalAt + EDIT_INTERVAL_MS);
  });

  it("Slack: two bot messages in the thread, the second after the user's second message", async () => {
    const slack = world.slack;
    slack.channel("CANSWERS");
    const { message: root } = await slack.userMessage({
      channel: "CANSWERS",
      user: SLACK_ADMIN,
      text: "first question",
      mention: true,
    });
    const replies = () => slack.view("CANSWERS").find((v) => v.ts === root.ts)?.replies ?? [];
    await until(() => replies().some((r) => r.user === SLACK_BOT), "the first answer to start");
    await slack.userMessage({
      channel: "CANSWERS",
      user: SLACK_ADMIN,
      text: "second question",
      threadTs: root.ts,
    });
    await until(
      () => replies().some((r) => r.text === "alpha answers: second question"),
      "the second answer",
    );
    await until(() => replies()[0]?.text === "alpha answers: first question", "the first answer");
    expect(replies().map((r) => [r.user === SLACK_BOT ? "bot" : r.user, r.text])).toEqual([
      ["bot", "alpha answers: first question"],
      [SLACK_ADMIN, "second question"],
      ["bot", "alpha answers: second question"],
    ]);
  });

  it("Discord: two bot messages in the thread, the second referencing the user's second message", async () => {
    const discord = world.discord;
    const { alice } = world.discordUsers;
    const m1 = discord.userMessage({
      channelId: GENERAL_ID,
      author: alice,
      content: "first question",
      mention: true,
    });
    const thread = await until(() => discord.world.find(GENERAL_ID, m1.id)?.threadId, "the thread");
    const inThread = () => discord.world.all(thread).filter((m) => !m.ephemeral && !m.deleted);
    await until(() => inThread().some((m) => m.author.id === DISCORD_BOT), "the first answer to start");
    const m2 = discord.userMessage({
      channelId: thread,
      author: alice,
      content: "second question",
      mention: true,
    });
    await until(
      () => inThread().some((m) => m.content === "alpha answers: second question"),
      "the second answer",
    );
    await until(() => inThread()[0]?.content === "alpha answers: first question", "the first answer");
    const seen = inThread();
    expect(seen.map((m) => (m.author.id === DISCORD_BOT ? ["bot", m.content] : ["alice", m.id]))).toEqual([
      ["bot", "alpha answers: first question"],
      ["alice", m2.id],
      ["bot", "alpha answers: second question"],
    ]);
    expect(seen[2]?.reference?.messageId).toBe(m2.id);

    const calls = discord.rest.calls.filter(
      (c) => c.path.startsWith(`/channels/${thread}/`) && c.status < 300,
    );
    const typing = calls.filter((c) => c.route === "POST /channels/:id/typing").map((c) => c.at);
    const posts = calls.filter((c) => c.route === "POST /channels/:id/messages").map((c) => c.at);
    const finalAt =
      calls.find((c) => c.method !== "GET" && c.body?.content === "alpha answers: second question")?.at ?? 0;
    expect(typing.length).toBeGreaterThan(0);
    for (const w of windows(typing, posts, DISCORD_TYPING_MS))
      expect(w.until).toBeLessThanOrEqual(finalAt + EDIT_INTERVAL_MS);
  });

  it("web chat: two bot messages in order, and the typing indicator ends before the final text", async () => {
    const web = app.web;
    if (!web) throw new Error("the web chat is not running");
    const typing: Array<{ at: number; durationMs: number }> = [];
    let finalAt = 0;
    const stopListening = await web.subscribe((e) => {
      if (e.type === "typing") typing.push({ at: Date.now(), durationMs: e.durationMs });
      if (e.type === "message" && e.message.text === "alpha answers: second question" && !finalAt)
        finalAt = Date.now();
    });
    try {
      if (!app.webUrl) throw new Error("the web chat has no address");
      const client = await WebClient.open(await web.signInLink(app.webUrl));
      const conversation = await web.createConversation();
      const send = (text: string) =>
        client.call("POST", `api/conversations/${conversation.id}/messages`, { text });
      let seen: WebMessage[] = [];
      const messages = () => seen;
      const refresh = async () => {
        seen = (await web.store.messages(conversation.id)) ?? [];
        return seen;
      };
      await send("first question");
      await until(async () => (await refresh()).some((m) => m.from.isBot), "the first answer to start");
      await send("second question");
      await until(
        async () => (await refresh()).some((m) => m.text === "alpha answers: second question"),
        "the second answer",
      );
      await until(
        async () => (await refresh()).find((m) => m.from.isBot)?.text === "alpha answers: first question",
        "the first",
      );
      // The page's stream can trail the store on a loaded machine: wait for it to show the final
      // text and the typing stop before judging their order.
      await until(
        async () => finalAt > 0 && typing.at(-1)?.durationMs === 0,
        "the stream to show the final text and the typing stop",
      );
      expect(messages().map((m) => [m.from.isBot ? "bot" : "you", m.text])).toEqual([
        ["you", "first question"],
        ["bot", "alpha answers: first question"],
        ["you", "second question"],
        ["bot", "alpha answers: second question"],
      ]);
      expect(typing.some((t) => t.durationMs > 0)).toBe(true);
      // Each indicator lasts until it fades or the next typing event (a stop is one of zero length).
      for (const [i, t] of typing.entries()) {
        const until = Math.min(t.at + t.durationMs, typing[i + 1]?.at ?? Number.POSITIVE_INFINITY);
        expect(until).toBeLessThanOrEqual(finalAt + WEB_EDIT_INTERVAL_MS);
      }
      expect(typing.at(-1)?.durationMs).toBe(0);
    } finally {
      stopListening();
    }
  });
});
