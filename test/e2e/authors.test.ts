/**
 * Who said what: in channels and groups each user message reaches the model with its author's
 * display name in front (`alice: …`), and the thread context of a first mention names people rather
 * than platform ids; direct messages reach it as typed. Read from the requests the fake model got.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import type { FakeChat } from "../fakes/telegram/server.js";
import { GENERAL_ID, lastUserText, SLACK_ADMIN, TG_USERS, until, World } from "./support/world.js";

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create({ redis: false });
  app = await world.start("all");
  world.slack.eventsUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await world?.close();
});

const request = (text: string) =>
  until(
    () => world.requests("openai-completions").find((r) => lastUserText(r).includes(text)),
    `the model request for "${text}"`,
  );

describe("authors reach the model", () => {
  it("Telegram: a group message carries its author's name; a DM is as typed", async () => {
    const group: FakeChat = { id: -100550001, type: "supergroup", title: "Authors" };
    world.telegram.userMessage({ chat: group, from: TG_USERS.bob, text: "is staging up?", mention: true });
    expect(lastUserText(await request("is staging up?"))).toBe("bob: is staging up?");

    const dm: FakeChat = { id: TG_USERS.alice.id, type: "private" };
    world.telegram.userMessage({ chat: dm, from: TG_USERS.alice, text: "just between us" });
    expect(lastUserText(await request("just between us"))).toBe("just between us");
  });

  it("Discord: a channel message carries its author's name", async () => {
    const { alice } = world.discordUsers;
    world.discord.userMessage({
      channelId: GENERAL_ID,
      author: alice,
      content: "deploy please",
      mention: true,
    });
    expect(lastUserText(await request("deploy please"))).toBe("alice: deploy please");
  });

  it("Slack: the thread context of a first mention names people, not user ids", async () => {
    world.slack.user("U07CAROL1", "carol");
    world.slack.channel("CAUTHORS");
    const root = world.slack.seed({ channel: "CAUTHORS", user: "U07CAROL1", text: "the deploy failed" });
    await world.slack.userMessage({
      channel: "CAUTHORS",
      user: SLACK_ADMIN,
      text: "what now?",
      threadTs: root.ts,
      mention: true,
    });
    const text = lastUserText(await request("what now?"));
    expect(text).toContain("\ncarol: the deploy failed\n");
    expect(text).not.toContain("U07CAROL1");
    expect(text.endsWith("\n\nada: what now?")).toBe(true);
  });
});
