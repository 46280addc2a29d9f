/**
 * Slash commands mean what they say. In a channel, a settings command typed at the channel's top
 * level (a Slack slash command, a Discord application command outside a thread, a Telegram command
 * in a group that replies to nothing) sets the channel's default for new threads, and its answer
 * says so: the next mention runs on that model, while threads already going on keep theirs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { BOT_USERNAME, type FakeChat } from "../fakes/telegram/server.js";
import { GENERAL_ID, SLACK_ADMIN, TG_USERS, until, World } from "./support/world.js";

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

const CHANNEL_ANSWER =
  "Model set to beta/two (Beta Two) for new threads in this channel (threads already going on keep theirs).";

describe("a settings command at a channel's top level", () => {
  it("Slack: /model in a channel sets the default for new threads; a running thread keeps its model", async () => {
    const slack = world.slack;
    slack.channel("CSCOPE");
    const replies = (ts: string) => slack.view("CSCOPE").find((v) => v.ts === ts)?.replies ?? [];
    const { message: before } = await slack.userMessage({
      channel: "CSCOPE",
      user: SLACK_ADMIN,
      text: "before the switch",
      mention: true,
    });
    await until(
      () => replies(before.ts).some((r) => r.text === "alpha answers: before the switch"),
      "the answer on the default model",
    );

    await slack.slashCommand({ channel: "CSCOPE", user: SLACK_ADMIN, command: "model", text: "beta/two" });
    const answer = await until(
      () => slack.responses.find((r) => String(r.body.text).startsWith("Model set to")),
      "the /model answer",
    );
    expect(answer.body.text).toBe(CHANNEL_ANSWER);

    const { message: after } = await slack.userMessage({
      channel: "CSCOPE",
      user: SLACK_ADMIN,
      text: "after the switch",
      mention: true,
    });
    await until(
      () => replies(after.ts).some((r) => r.text === "beta answers: after the switch"),
      "a new thread on the channel's model",
    );
    // `/model` alone in a new thread lists the models and marks the one the thread will use.
    const { message: ask } = await slack.userMessage({
      channel: "CSCOPE",
      user: SLACK_ADMIN,
      text: "/model",
      mention: true,
    });
    const list = await until(
      () => replies(ask.ts).find((r) => r.text.startsWith("Models you can use")),
      "the model list",
    );
    expect(list.text).toContain("▶ beta/two");
    await slack.userMessage({
      channel: "CSCOPE",
      user: SLACK_ADMIN,
      text: "still you?",
      threadTs: before.ts,
    });
    await until(
      () => replies(before.ts).some((r) => r.text === "alpha answers: still you?"),
      "the earlier thread on its own model",
    );
  });

  it("Discord: /model outside a thread sets the channel's default for new threads", async () => {
    const discord = world.discord;
    const { alice } = world.discordUsers;
    const i = discord.interaction({ channelId: GENERAL_ID, user: alice, name: "model", args: "beta/two" });
    const answer = await until(() => {
      const id = discord.rest.interactions.get(i.id)?.originalId;
      const text = id ? discord.world.find(GENERAL_ID, id)?.content : undefined;
      return text?.startsWith("Model set to") ? text : undefined;
    }, "the /model answer");
    expect(answer).toBe(CHANNEL_ANSWER);

    const m = discord.userMessage({
      channelId: GENERAL_ID,
      author: alice,
      content: "new topic",
      mention: true,
    });
    await until(
      () =>
        discord
          .view(GENERAL_ID)
          .find((v) => v.id === m.id)
          ?.thread?.some((t) => t.fromBot && t.content === "beta answers: new topic"),
      "a new thread on the channel's model",
    );
  });

  it("Telegram: a group command that replies to nothing sets the group's default; one in a chain sets that chain", async () => {
    const tg = world.telegram;
    const chat: FakeChat = { id: -100880001, type: "supergroup", title: "Scopes" };
    tg.userMessage({ chat, from: TG_USERS.alice, text: "old chain", mention: true });
    const oldAnswer = await until(
      () => tg.botMessages(chat.id).find((m) => m.text === "alpha answers: old chain"),
      "the answer on the default model",
    );

    const command = tg.command(chat, TG_USERS.alice, "model", "beta/two", { addressed: true });
    const answer = await until(
      () => tg.botMessages(chat.id).find((m) => m.text.startsWith("Model set to")),
      "the /model answer",
    );
    expect(answer.text).toBe(CHANNEL_ANSWER);
    expect(answer.reply_to_message_id).toBe(command.message_id);

    tg.userMessage({ chat, from: TG_USERS.alice, text: "new chain", mention: true });
    await until(
      () => tg.botMessages(chat.id).some((m) => m.text === "beta answers: new chain"),
      "a new chain on the group's model",
    );
    tg.userMessage({ chat, from: TG_USERS.alice, text: "old chain again", replyTo: oldAnswer.message_id });
    await until(
      () => tg.botMessages(chat.id).some((m) => m.text === "alpha answers: old chain again"),
      "the old chain on its own model",
    );

    // A reply to the group-wide answer starts a chain of its own (on the group's model).
    tg.userMessage({ chat, from: TG_USERS.alice, text: "about that", replyTo: answer.message_id });
    await until(
      () => tg.botMessages(chat.id).some((m) => m.text === "beta answers: about that"),
      "a chain started by a reply to the command's answer",
    );

    // In a chain, the command applies to that chain and says so.
    const chainAnswer = tg.botMessages(chat.id).find((m) => m.text === "beta answers: new chain");
    tg.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/model@${BOT_USERNAME} alpha/one`,
      replyTo: chainAnswer?.message_id as number,
    });
    await until(
      () =>
        tg.botMessages(chat.id).some((m) => m.text === "Model set to alpha/one (Alpha One) for this thread."),
      "the chain's /model answer",
    );
  });
});
