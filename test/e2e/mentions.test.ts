/**
 * A mention on each platform, through Switchboard as `start` builds it (Redis runtime, one `all`
 * process): the mention gets 👀 once it is durable, and the reply is edited into place with the
 * fake model's text. A mention inside an existing thread the bot has no session for carries the
 * thread's earlier messages into the first model request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { BOT_USER_ID } from "../fakes/discord/server.js";
import { type FakeChat, BOT_ID as TG_BOT_ID } from "../fakes/telegram/server.js";
import {
  GENERAL_ID,
  lastUserText,
  SLACK_ADMIN,
  SLACK_OTHER,
  TG_USERS,
  until,
  World,
} from "./support/world.js";

/** Every user message's text of a model request, in order (what the model reads from users). */
function allUserText(request: { body: Record<string, unknown> }): string {
  const messages = (request.body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  return messages
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n")
          : "",
    )
    .join("\n");
}

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create();
  app = await world.start("all");
  world.slack.eventsUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await world?.close();
});

describe("a mention end to end", () => {
  it("Telegram: 👀 on the mention, then the model's reply in its chain", async () => {
    const chat: FakeChat = { id: -100777001, type: "supergroup", title: "Ops" };
    const m = world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: "hello from telegram",
      mention: true,
    });
    const reply = await until(
      () => world.telegram.botMessages(chat.id).find((b) => b.text === "alpha answers: hello from telegram"),
      "the bot's reply",
    );
    expect(reply.reply_to_message_id).toBe(m.message_id);
    expect(world.telegram.message(chat.id, m.message_id)?.botReactions).toEqual(["👀"]);
    expect(reply.from.id).toBe(TG_BOT_ID);
  });

  it("Slack: 👀 on the mention, the model's reply in the mention's thread, and replies there need no mention", async () => {
    world.slack.channel("CMENTION");
    const { message } = await world.slack.userMessage({
      channel: "CMENTION",
      user: SLACK_ADMIN,
      text: "hello from slack",
      mention: true,
    });
    const thread = await until(() => {
      const top = world.slack.view("CMENTION").find((v) => v.ts === message.ts);
      return top?.replies.some((r) => r.text === "alpha answers: hello from slack") ? top : undefined;
    }, "the bot's reply in the thread");
    expect(thread.reactions).toContain("eyes");

    // A reply in the bot's thread needs no mention.
    await world.slack.userMessage({
      channel: "CMENTION",
      user: SLACK_ADMIN,
      text: "and a follow-up",
      threadTs: message.ts,
    });
    await until(
      () =>
        world.slack
          .view("CMENTION")
          .find((v) => v.ts === message.ts)
          ?.replies.some((r) => r.text === "alpha answers: and a follow-up"),
      "the answer to the unmentioned reply",
    );
  });

  it("Slack: a retry (X-Slack-Retry-Num) that arrives while the first delivery is still handled is answered once", async () => {
    world.slack.channel("CRETRY");
    // The first delivery is durable and then hangs on its 👀 while Slack retries the event.
    world.slack.holdMethod("reactions.add");
    const { message, deliveries } = await world.slack.userMessage({
      channel: "CRETRY",
      user: SLACK_ADMIN,
      text: "retried while busy",
      mention: true,
    });
    const answered = () =>
      world.slack
        .view("CRETRY")
        .find((v) => v.ts === message.ts)
        ?.replies.filter((r) => r.text === "alpha answers: retried while busy").length ?? 0;
    await until(() => answered() === 1 || undefined, "the answer to the first delivery");
    const retries = await Promise.all(deliveries.map((d) => world.slack.redeliver(d.eventId as string, 1)));
    expect(retries.map((r) => r.status)).toEqual(deliveries.map(() => 200));
    world.slack.releaseMethod("reactions.add");
    const eyes = () =>
      world.slack.api.calls.filter(
        (c) => c.method === "reactions.add" && (c.params as { timestamp?: string }).timestamp === message.ts,
      ).length;
    await until(() => eyes() > 0 || undefined, "the first delivery's 👀");
    // Another message through the same gateway, answered, so a second handling would have shown by now.
    const { message: next } = await world.slack.userMessage({
      channel: "CRETRY",
      user: SLACK_ADMIN,
      text: "and then",
      mention: true,
    });
    await until(
      () =>
        world.slack
          .view("CRETRY")
          .find((v) => v.ts === next.ts)
          ?.replies.some((r) => r.text === "alpha answers: and then"),
      "the next answer",
    );
    expect(eyes()).toBe(1);
    expect(answered()).toBe(1);
  });

  it("Discord: 👀 on the mention, then the model's reply in a thread on it", async () => {
    const { alice } = world.discordUsers;
    const m = world.discord.userMessage({
      channelId: GENERAL_ID,
      author: alice,
      content: "hello from discord",
      mention: true,
    });
    await until(
      () =>
        world.discord
          .view(GENERAL_ID)
          .find((v) => v.id === m.id)
          ?.thread?.some((t) => t.fromBot && t.content === "alpha answers: hello from discord"),
      "the bot's reply in the thread",
    );
    const stored = world.discord.world.find(GENERAL_ID, m.id);
    expect([...(stored?.reactions.get("👀") ?? [])]).toContain(BOT_USER_ID);
  });

  it("a mention inside an existing Slack thread sees the earlier messages in the first model request", async () => {
    world.slack.channel("CCONTEXT");
    const root = world.slack.seed({
      channel: "CCONTEXT",
      user: SLACK_OTHER,
      text: "the deploy failed at step 3",
    });
    world.slack.seed({
      channel: "CCONTEXT",
      user: SLACK_ADMIN,
      text: "logs say disk full",
      threadTs: root.ts,
    });
    const before = world.requests("openai-completions").length;
    await world.slack.userMessage({
      channel: "CCONTEXT",
      user: SLACK_ADMIN,
      text: "what should we do?",
      threadTs: root.ts,
      mention: true,
    });
    const request = await until(
      () =>
        world
          .requests("openai-completions")
          .slice(before)
          .find((r) => lastUserText(r).includes("what should we do?")),
      "the first model request of the thread",
    );
    const text = lastUserText(request);
    expect(text).toContain("the deploy failed at step 3");
    expect(text).toContain("logs say disk full");
    expect(text).toContain("[Earlier messages in this thread");
    expect(text.indexOf("logs say disk full")).toBeLessThan(text.indexOf("what should we do?"));
  });

  it("Telegram private chat: messages sent before the thread's session exists reach the model once each", async () => {
    const dm: FakeChat = { id: TG_USERS.bob.id, type: "private" };
    const texts = ["first of three", "second of three", "third of three"];
    // In one getUpdates batch: the later ones arrive while the first is queued and no session exists.
    for (const text of texts) world.telegram.userMessage({ chat: dm, from: TG_USERS.bob, text });
    const last = await until(
      () =>
        world
          .requests("openai-completions")
          .filter((r) => allUserText(r).includes("third of three"))
          .at(-1),
      "a model request with the third message",
    );
    const seen = allUserText(last);
    for (const text of texts) expect(seen.split(text).length - 1, `"${text}" in the model's context`).toBe(1);
    expect(seen).not.toContain("[Earlier messages in this thread");
  });

  it("/readyz reports Redis and each channel's connection; /metrics counts messages, runs, tokens and platform calls", async () => {
    const ready = await fetch(`${app.url}/readyz`);
    const report = (await ready.json()) as { ok: boolean; probes: { name: string; ok: boolean }[] };
    expect(ready.status).toBe(200);
    expect(report.probes.map((p) => [p.name, p.ok])).toEqual(
      expect.arrayContaining([
        ["redis", true],
        ["telegram", true],
        ["slack", true],
        ["discord", true],
      ]),
    );
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchboard_inbound_messages_total\{[^}]*platform="telegram"[^}]*outcome="accepted"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(
      /switchboard_runs_total\{[^}]*platform="slack"[^}]*outcome="completed"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(
      /switchboard_llm_tokens_total\{[^}]*provider="alpha"[^}]*kind="output"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(
      /switchboard_platform_api_calls_total\{[^}]*platform="discord"[^}]*method="post"[^}]*outcome="ok"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(/switchboard_queue_depth\{[^}]*queue="runs"[^}]*\} 0/);
  });

  it("someone not allowed gets no run and one short notice per thread", async () => {
    const chat: FakeChat = { id: -100777002, type: "supergroup", title: "Visitors" };
    const carol = { id: 503, is_bot: false, first_name: "Carol", username: "carol" };
    const before = world.llm.requests.length;
    const first = world.telegram.userMessage({ chat, from: carol, text: "let me in", mention: true });
    const notice = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("not on the list")),
      "the access notice",
    );
    world.telegram.userMessage({ chat, from: carol, text: "please?", replyTo: notice.message_id });
    world.telegram.userMessage({ chat, from: TG_USERS.alice, text: "a marker after carol", mention: true });
    await until(
      () => world.telegram.botMessages(chat.id).some((m) => m.text === "alpha answers: a marker after carol"),
      "alice's answer",
    );
    expect(
      world.telegram.botMessages(chat.id).filter((m) => m.text.includes("not on the list")),
    ).toHaveLength(1);
    expect(world.llm.requests.slice(before).some((r) => lastUserText(r).includes("let me in"))).toBe(false);
    expect(world.telegram.message(chat.id, first.message_id)?.botReactions).toEqual([]);
  });
});
