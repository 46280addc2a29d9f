import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { TelegramAdapter, type TelegramAdapterConfig } from "../../../src/adapters/telegram/index.js";
import { ChannelError, type InboundMessage } from "../../../src/adapters/types.js";
import { EventBusyError } from "../../../src/queue/event-claims.js";
import { BOT_ID, BOT_USERNAME, type FakeChat, FakeTelegram } from "../../fakes/telegram/server.js";
import { ManualClock } from "../../support/manual-clock.js";
import { Received } from "../contract.js";
import { until } from "../support/drive.js";
import { dmWith, GROUP, USERS } from "./harness.js";

const alice = USERS.alice as NonNullable<(typeof USERS)["alice"]>;
const bob = USERS.bob as NonNullable<(typeof USERS)["bob"]>;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function fakeTelegram(): Promise<FakeTelegram> {
  const fake = await new FakeTelegram().start();
  cleanups.push(() => fake.close());
  return fake;
}

async function polling(fake: FakeTelegram, extra: Partial<TelegramAdapterConfig> = {}) {
  const adapter = new TelegramAdapter({
    token: fake.token,
    apiRoot: fake.apiRoot(),
    pollTimeoutSeconds: 5,
    ...extra,
  });
  const received = new Received();
  await adapter.start(received);
  cleanups.push(() => adapter.stop());
  return { adapter, received };
}

describe("Telegram webhook", () => {
  async function webhookSetup(secret: string) {
    const fake = await fakeTelegram();
    let adapter: TelegramAdapter | undefined;
    const server: Server = createServer((req, res) => adapter?.webhookCallback(req, res));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/telegram`;
    adapter = new TelegramAdapter({
      token: fake.token,
      apiRoot: fake.apiRoot(),
      mode: "webhook",
      webhook: { url, secretToken: secret },
    });
    const received = new Received();
    await adapter.start(received);
    cleanups.push(() => (adapter as TelegramAdapter).stop());
    return { fake, adapter, received, url };
  }

  it("registers the webhook with its secret and asks for reactions", async () => {
    const { fake, url } = await webhookSetup("s3cret-token");
    const call = fake.calls.find((c) => c.method === "setWebhook");
    expect(call?.params).toMatchObject({ url, secret_token: "s3cret-token" });
    expect(call?.params.allowed_updates).toContain("message_reaction");
  });

  it("delivers updates Telegram posts with the right secret", async () => {
    const { fake, received, adapter } = await webhookSetup("s3cret-token");
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "via webhook" });
    await until(() => received.messages.length === 1, 30_000, "webhook delivery");
    expect(received.messages[0]?.text).toBe("via webhook");
    await until(() => fake.webhookResponses.length === 1, 30_000, "webhook response");
    expect(fake.webhookResponses).toEqual([200]);
    expect(adapter.connections()).toEqual([
      expect.objectContaining({ name: "telegram:webhook", state: "connected" }),
    ]);
  });

  it("answers 401 to a wrong or missing secret and delivers nothing", async () => {
    const { received, url } = await webhookSetup("s3cret-token");
    const update = {
      update_id: 1,
      message: { message_id: 1, date: 1, chat: dmWith(alice), from: alice, text: "forged" },
    };
    const wrong = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "guess" },
      body: JSON.stringify(update),
    });
    const missing = await fetch(url, { method: "POST", body: JSON.stringify(update) });
    expect([wrong.status, missing.status]).toEqual([401, 401]);
    const bad = await fetch(url, {
      method: "POST",
      headers: { "x-telegram-bot-api-secret-token": "s3cret-token" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect(received.messages).toEqual([]);
  });
});

describe("Telegram inbound", () => {
  it("cuts a message longer than maxInboundChars and says how much was cut", async () => {
    const fake = await fakeTelegram();
    const { received } = await polling(fake, { maxInboundChars: 50 });
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "a".repeat(80) });
    await until(() => received.messages.length === 1);
    expect(received.messages[0]?.text).toBe(
      `${"a".repeat(50)}\n\n[… message truncated: 30 characters over the limit]`,
    );
  });

  it("asks getUpdates for message_reaction and confirms handled updates on stop", async () => {
    const fake = await fakeTelegram();
    const { adapter, received } = await polling(fake);
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "hi" });
    await until(() => received.messages.length === 1);
    const poll = fake.calls.find((c) => c.method === "getUpdates");
    expect(poll?.params.allowed_updates).toEqual(expect.arrayContaining(["message", "message_reaction"]));
    await adapter.stop();
    expect(fake.pendingUpdates).toBe(0);
  });

  it("in groups delivers replies to the bot and commands, but not commands for other bots", async () => {
    const fake = await fakeTelegram();
    const { adapter, received } = await polling(fake);
    fake.userMessage({ chat: GROUP, from: alice, text: "hey", mention: true });
    await until(() => received.messages.length === 1);
    const ref = await adapter.post((received.messages[0] as InboundMessage).threadKey, "Hi Alice");
    const botMsgId = Number(ref.split(":")[2]);
    fake.userMessage({ chat: GROUP, from: bob, text: "/model@other_bot gpt" });
    fake.userMessage({ chat: GROUP, from: bob, text: "and a follow-up", replyTo: botMsgId });
    await until(() => received.messages.length === 2);
    const followUp = received.messages[1] as InboundMessage;
    expect(followUp).toMatchObject({ text: "and a follow-up", mentioned: true, replyTo: ref });
    // The reply joins the thread of the first mention.
    expect(followUp.threadKey).toBe((received.messages[0] as InboundMessage).threadKey);
    expect(received.commands).toEqual([]);
  });

  it("strips the mention and keeps DMs in one thread per chat", async () => {
    const fake = await fakeTelegram();
    const { received } = await polling(fake);
    fake.userMessage({ chat: GROUP, from: alice, text: "summarise this", mention: true });
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "one" });
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "two" });
    await until(() => received.messages.length === 3);
    const [group, one, two] = received.messages as [InboundMessage, InboundMessage, InboundMessage];
    expect(group.text).toBe("summarise this");
    expect(group.text).not.toContain(BOT_USERNAME);
    expect(one.threadKey).toBe(`telegram:${alice.id}:0:0`);
    expect(two.threadKey).toBe(one.threadKey);
  });

  it("never confirms an update whose handling failed or is busy elsewhere: it is asked for again, in order", async () => {
    const fake = await fakeTelegram();
    const clock = new ManualClock();
    // The first attempt at "one" fails (Redis unreachable), the second meets another attempt's
    // live claim (EventBusyError); the third is handled. "two" waits behind it.
    const failures = [new Error("Connection is closed."), new EventBusyError("telegram:x", 15_000)];
    const received = new Received();
    const handlers = {
      onMessage: (m: InboundMessage) => {
        if (m.text === "one") {
          const failure = failures.shift();
          if (failure) throw failure;
        }
        received.onMessage(m);
      },
      onReaction: () => {},
      onCommand: () => {},
    };
    const adapter = new TelegramAdapter({
      token: fake.token,
      apiRoot: fake.apiRoot(),
      pollTimeoutSeconds: 5,
      clock,
    });
    await adapter.start(handlers);
    cleanups.push(() => adapter.stop());
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "one" });
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "two" });
    for (let i = 0; i < 200 && received.messages.length < 2; i++) {
      await until(() => failures.length < 2 || received.messages.length > 0);
      await clock.advance(1000);
    }
    expect(received.messages.map((m) => m.text)).toEqual(["one", "two"]);
    // While "one" was not handled, no getUpdates confirmed it (its offset never went past it).
    const first = fake.lastUpdateId - 1;
    const offsets = fake.calls
      .filter((c) => c.method === "getUpdates")
      .map((c) => Number(c.params.offset ?? 0));
    const pastFirst = offsets.findIndex((o) => o > first);
    expect(offsets.slice(0, pastFirst).filter((o) => o === first).length).toBeGreaterThanOrEqual(2);
    await adapter.stop();
    expect(fake.pendingUpdates).toBe(0);
  });

  it("logs and skips malformed updates and keeps polling", async () => {
    const fake = await fakeTelegram();
    const warnings: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn: (_o: object, m?: string) => warnings.push(m ?? ""),
      error: (_o: object, m?: string) => warnings.push(m ?? ""),
    };
    const { received } = await polling(fake, { logger });
    fake.pushRaw({ message: { text: "no update id" } });
    fake.pushRaw({ message: { chat: "garbage", text: 5 } });
    fake.pushRaw({
      message: { message_id: 1, date: 1, chat: { id: 5, type: "private" }, from: { id: "x" } },
    });
    fake.pushRaw({ message_reaction: { chat: null } });
    fake.pushRaw({ message: null });
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "still alive?" });
    await until(() => received.messages.length === 1);
    expect(received.messages.map((m) => m.text)).toEqual(["still alive?"]);
    expect(warnings.filter((w) => w.includes("malformed"))).toHaveLength(5);
  });

  it("keeps forum topics apart and answers inside the topic", async () => {
    const fake = await fakeTelegram();
    const { adapter, received } = await polling(fake);
    const forum: FakeChat = { id: -1009999, type: "supergroup", title: "Forum", is_forum: true };
    const releases = fake.createTopic(forum, alice, "Releases");
    const random = fake.createTopic(forum, alice, "Random");
    const m1 = fake.userMessage({
      chat: forum,
      from: alice,
      text: "ship it?",
      mention: true,
      topic: releases,
    });
    fake.userMessage({ chat: forum, from: bob, text: "lunch?", mention: true, topic: random });
    await until(() => received.messages.length === 2);
    const [a, b] = received.messages as [InboundMessage, InboundMessage];
    // The topic opener is not a reply root: each mention starts its own chain inside its topic.
    expect(a.threadKey).toBe(`telegram:${forum.id}:${releases}:${m1.message_id}`);
    expect(b.threadKey.startsWith(`telegram:${forum.id}:${random}:`)).toBe(true);
    await adapter.post(a.threadKey, "Shipping now");
    await adapter.typing(a.threadKey);
    const inTopic = fake.chat(forum.id, { topic: releases }).map((m) => m.text);
    expect(inTopic).toEqual(["@switchboard_bot ship it?", "Shipping now"]);
    expect(fake.chat(forum.id, { topic: random }).map((m) => m.text)).not.toContain("Shipping now");
    const typing = fake.calls.find((c) => c.method === "sendChatAction");
    expect(typing?.params).toMatchObject({
      chat_id: forum.id,
      message_thread_id: releases,
      action: "typing",
    });
  });

  it("reports reactions with the approval marks for Telegram's stand-in emoji", async () => {
    const fake = await fakeTelegram();
    const { adapter, received } = await polling(fake);
    fake.userMessage({ chat: GROUP, from: alice, text: "approve?", mention: true });
    await until(() => received.messages.length === 1);
    const ref = await adapter.post((received.messages[0] as InboundMessage).threadKey, "Run it?");
    const id = Number(ref.split(":")[2]);
    fake.reaction({ chat: GROUP, from: bob, messageId: id, emoji: "👎" });
    fake.reaction({ chat: GROUP, from: bob, messageId: id, emoji: "👎", added: false });
    fake.reaction({ chat: GROUP, from: bob, messageId: id, emoji: "🔥" });
    await until(() => received.reactions.length === 3);
    expect(received.reactions.map((r) => [r.emoji, r.added, r.user.name])).toEqual([
      ["❌", true, "bob"],
      ["❌", false, "bob"],
      ["🔥", true, "bob"],
    ]);
  });
});

describe("Telegram outbound", () => {
  it("works without start() (outbound-only worker mode)", async () => {
    const fake = await fakeTelegram();
    fake.addChat(GROUP);
    const adapter = new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot() });
    const ref = await adapter.post(`telegram:${GROUP.id}:0:0`, "**Build** passed");
    await adapter.edit(ref, "**Build** passed ✅");
    await adapter.react(ref, "👀");
    const msg = fake.botMessages(GROUP.id)[0];
    expect(msg?.text).toBe("Build passed ✅");
    expect(msg?.entities).toEqual([{ type: "bold", offset: 0, length: 5 }]);
    expect(msg?.botReactions).toEqual(["👀"]);
    expect(adapter.connections()).toEqual([]);
    expect(fake.calls.map((c) => c.method)).not.toContain("getUpdates");
  });

  it("treats 'message is not modified' as success", async () => {
    const fake = await fakeTelegram();
    fake.addChat(GROUP);
    const adapter = new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot() });
    const ref = await adapter.post(`telegram:${GROUP.id}:0:0`, "same");
    await expect(adapter.edit(ref, "same")).resolves.toBeUndefined();
    expect(fake.calls.filter((c) => c.method === "editMessageText").map((c) => c.status)).toEqual([400]);
  });

  it("falls back to plain text when Telegram rejects the HTML", async () => {
    const fake = await fakeTelegram();
    fake.addChat(GROUP);
    const adapter = new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot() });
    fake.rejectHtmlNext(1);
    await adapter.post(`telegram:${GROUP.id}:0:0`, "See **[docs](https://example.com)** and `code`");
    expect(fake.botMessages(GROUP.id).map((m) => m.text)).toEqual([
      "See docs (https://example.com) and code",
    ]);
    const sends = fake.calls.filter((c) => c.method === "sendMessage");
    expect(sends.map((c) => c.params.parse_mode)).toEqual(["HTML", undefined]);
  });

  it("normalises platform errors: 429 with retry-after, missing message, bad token", async () => {
    const fake = await fakeTelegram();
    fake.addChat(GROUP);
    const adapter = new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot() });
    fake.rateLimitNext(1, 7);
    const limited = await adapter.post(`telegram:${GROUP.id}:0:0`, "x").catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ChannelError);
    expect(limited).toMatchObject({ kind: "rate_limited", retryAfterMs: 7000, platform: "telegram" });
    await expect(adapter.edit(`telegram:${GROUP.id}:999`, "y")).rejects.toMatchObject({ kind: "not_found" });
    const bad = new TelegramAdapter({ token: `${BOT_ID}:WRONG`, apiRoot: fake.apiRoot() });
    const err = await bad.post(`telegram:${GROUP.id}:0:0`, "x").catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "unauthorized" });
    expect(String((err as Error).message)).not.toContain("WRONG");
  });

  it("registers native commands with setMyCommands", async () => {
    const fake = await fakeTelegram();
    const adapter = new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot() });
    await adapter.registerCommands([
      { name: "model", description: "Show or switch the model" },
      { name: "stop", description: "Stop the current run" },
    ]);
    expect(fake.commands.at(-1)).toEqual([
      { command: "model", description: "Show or switch the model" },
      { command: "stop", description: "Stop the current run" },
    ]);
  });

  it("uses a slower edit interval and the group budget in groups", () => {
    const adapter = new TelegramAdapter({ token: `${BOT_ID}:x` });
    expect(adapter.editIntervalFor(`telegram:${GROUP.id}:0:5`)).toBe(3000);
    expect(adapter.editIntervalFor(`telegram:${alice.id}:0:0`)).toBe(1000);
    expect(adapter.rateRuleFor(`telegram:${GROUP.id}:0:5`)).toEqual({ limit: 20, windowMs: 60_000 });
    expect(adapter.channelOf(`telegram:${GROUP.id}:0:5`)).toBe(`telegram:${GROUP.id}`);
  });
});
