/** Slack specifics beyond the shared contract, with Bolt and web-api against the fake Slack. */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SlackAdapter } from "../../src/adapters/slack/index.js";
import { type ChannelError, type InboundCommand, isChannelError } from "../../src/adapters/types.js";
import { BOT_USER_ID, FakeSlack, TEAM_ID } from "../fakes/slack/server.js";
import { postSigned } from "../fakes/slack/signing.js";
import { CHANNEL, createSlackHarness, DM, type SlackHarness, USERS } from "./harness/slack.js";
import { claimed } from "./support/claimed.js";
import { until } from "./support/drive.js";

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const alice = USERS.alice as string;

describe("Slack over HTTP", () => {
  it("answers a forged signature with 401 and delivers nothing", async () => {
    h = await createSlackHarness({ mode: "http" });
    const body = JSON.stringify({
      type: "event_callback",
      team_id: TEAM_ID,
      event_id: "EvFORGED",
      event: {
        type: "app_mention",
        user: alice,
        text: `<@${BOT_USER_ID}> rm -rf /`,
        ts: "1.000001",
        channel: CHANNEL,
      },
    });
    const forged = await postSigned(h.eventsUrl as string, body, { secret: "not-the-secret" });
    const stale = await postSigned(h.eventsUrl as string, body, {
      secret: h.fake.signingSecret,
      timestampSec: Math.floor(Date.now() / 1000) - 600,
    });
    expect(forged.status).toBe(401);
    expect(stale.status).toBe(401);
    await h.groupMessage({ text: "a real one", mention: true });
    await until(() => h?.received.messages.length === 1, 30_000, "the genuine mention");
    expect(h.received.messages.map((m) => m.text)).toEqual(["a real one"]);
  });

  it("acks a slash command before the command handler finishes, then answers via response_url", async () => {
    h = await createSlackHarness({ mode: "http", start: false });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const commands: InboundCommand[] = [];
    await h.adapter.start({
      onMessage() {},
      onReaction() {},
      async onCommand(c) {
        commands.push(c);
        await gate;
        await c.respond?.("Model set to **sonnet**.", { ephemeral: true });
      },
    });
    const ack = await h.fake.slashCommand({
      channel: CHANNEL,
      user: alice,
      command: "/model",
      text: " sonnet ",
    });
    expect(ack.status).toBe(200);
    await until(() => commands.length === 1, 30_000, "the command");
    expect(commands[0]).toMatchObject({ name: "model", args: "sonnet", isDirect: false, channelId: CHANNEL });
    expect(commands[0]?.threadKey).toBe(`slack:${TEAM_ID}:${CHANNEL}:0`);
    expect(h.fake.responses).toEqual([]);
    release();
    await until(() => h?.fake.responses.length === 1, 30_000, "the response");
    expect(h.fake.responses[0]?.body).toMatchObject({
      text: "Model set to *sonnet*.",
      response_type: "ephemeral",
    });
  });

  it("leaves mounting to the gateway: other paths are not handled", async () => {
    h = await createSlackHarness({ mode: "http" });
    const res = await fetch((h.eventsUrl as string).replace("/slack/events", "/elsewhere"), {
      method: "POST",
    });
    expect(res.status).toBe(404);
  });
});

describe("Slack over Socket Mode", () => {
  it("acks every envelope and reports the connection", async () => {
    h = await createSlackHarness({ mode: "socket" });
    expect(h.adapter.connections()).toMatchObject([{ name: "slack:socket", state: "connected" }]);
    const { deliveries } = await h.fake.userMessage({
      channel: CHANNEL,
      user: alice,
      text: "hi",
      mention: true,
    });
    expect(deliveries.every((d) => d.via === "socket" && d.ack !== undefined)).toBe(true);
    await until(() => h?.received.messages.length === 1, 30_000, "the mention");
    const cmd = await h.fake.slashCommand({ channel: DM, user: alice, command: "/status" });
    expect(cmd.ack).toBeDefined();
    await until(() => h?.received.commands.length === 1, 30_000, "the command");
    expect(h.received.commands[0]).toMatchObject({ name: "status", args: "", isDirect: true });
    await h.adapter.stop();
    expect(h.adapter.connections()).toMatchObject([{ state: "stopped" }]);
  });

  it("behind the event claim, a retried event is handled once, and a retry after a failed handler is handled", async () => {
    h = await createSlackHarness({ mode: "socket", start: false });
    let failNext = true;
    const texts: string[] = [];
    await h.adapter.start(
      claimed({
        onMessage(m) {
          if (failNext) {
            failNext = false;
            throw new Error("inbox unavailable");
          }
          texts.push(m.text);
        },
        onReaction() {},
        onCommand() {},
      }),
    );
    const { deliveries } = await h.fake.userMessage({ channel: DM, user: alice, text: "are you there?" });
    const eventId = deliveries[0]?.eventId as string;
    await h.fake.redeliver(eventId, 1);
    await until(() => texts.length === 1, 30_000, "the retried delivery");
    await h.fake.redeliver(eventId, 2);
    await h.fake.userMessage({ channel: DM, user: alice, text: "next" });
    await until(() => texts.length === 2, 30_000, "the next message");
    expect(texts).toEqual(["are you there?", "next"]);
  });
});

describe("Slack conversations", () => {
  it("ignores its own posts, other bots and edits; follows threads it takes part in", async () => {
    h = await createSlackHarness({ mode: "socket" });
    const received = h.received;
    await h.fake.deliverEvent({
      type: "message",
      channel: CHANNEL,
      channel_type: "channel",
      bot_id: "B0OTHER",
      text: `<@${BOT_USER_ID}> hi`,
      ts: "5.000001",
    });
    await h.fake.deliverEvent({
      type: "app_mention",
      channel: CHANNEL,
      user: "U0OTHERBOT",
      bot_id: "B0OTHER",
      text: `<@${BOT_USER_ID}> hi`,
      ts: "5.000002",
    });
    await h.fake.deliverEvent({
      type: "message",
      subtype: "message_changed",
      channel: CHANNEL,
      channel_type: "channel",
      ts: "5.000003",
      message: {},
    });
    const root = await h.groupMessage({ text: "help with the deploy", mention: true });
    await until(() => received.messages.length === 1, 30_000, "the mention");
    const key = received.messages[0]?.threadKey as string;
    await h.adapter.post(key, "On it.");
    // A follow-up in the bot's thread arrives without a mention; a reply in someone else's thread does not.
    await h.groupMessage({ text: "it fails at step 3", replyTo: root, user: "bob" });
    const other = await h.groupMessage({ text: "lunch?", user: "carol" });
    await h.groupMessage({ text: "sure", replyTo: other, user: "alice" });
    await h.groupMessage({ text: "marker", mention: true });
    await until(() => received.messages.length === 3, 30_000, "the thread reply and the marker");
    expect(received.messages.map((m) => [m.text, m.mentioned, m.threadKey === key])).toEqual([
      ["help with the deploy", true, true],
      ["it fails at step 3", false, true],
      ["marker", true, false],
    ]);
    expect(h.fake.botTexts(CHANNEL)).toEqual(["On it."]);
  });

  it("keeps a DM as one conversation at the top level and reads its history", async () => {
    h = await createSlackHarness({ mode: "socket" });
    await h.directMessage("first question");
    await until(() => h?.received.messages.length === 1, 30_000, "the DM");
    const m = h.received.messages[0];
    expect(m?.threadKey).toBe(`slack:${TEAM_ID}:${DM}:0`);
    await h.adapter.post(m?.threadKey as string, "first answer");
    await h.directMessage("second question");
    await until(() => h?.received.messages.length === 2, 30_000, "the second DM");
    const second = h.received.messages[1];
    expect(second?.threadKey).toBe(m?.threadKey);
    const history = await h.adapter.fetchHistory(second?.threadKey as string, 10, second?.messageId);
    expect(history.map((x) => [x.text, x.fromBot])).toEqual([
      ["first question", false],
      ["first answer", true],
    ]);
    expect(h.fake.view(DM).every((v) => v.replies.length === 0)).toBe(true);
  });

  it("normalises mention text, links and reactions", async () => {
    h = await createSlackHarness({ mode: "socket" });
    await h.fake.userMessage({
      channel: CHANNEL,
      user: alice,
      mention: true,
      text: "see <https://example.com/a?b=1&amp;c=2|the doc> &amp; ping <@U0BOB|bob> &lt;now&gt;",
    });
    await until(() => h?.received.messages.length === 1, 30_000, "the mention");
    expect(h.received.messages[0]?.text).toBe(
      "see [the doc](https://example.com/a?b=1&c=2) & ping @bob <now>",
    );
    expect(h.received.messages[0]?.user).toEqual({ id: alice, name: "alice", isBot: false });
    const ref = await h.adapter.post(h.received.messages[0]?.threadKey as string, "Deploy?");
    const [, , channel, ts] = ref.split(":");
    await h.fake.reaction({ channel: channel as string, ts: ts as string, user: alice, name: "infinity" });
    await h.fake.reaction({
      channel: channel as string,
      ts: ts as string,
      user: alice,
      name: "+1::skin-tone-3",
    });
    await h.fake.reaction({
      channel: channel as string,
      ts: ts as string,
      user: alice,
      name: "party_parrot",
    });
    await h.fake.reaction({
      channel: channel as string,
      ts: ts as string,
      user: alice,
      name: "infinity",
      added: false,
    });
    await until(() => h?.received.reactions.length === 4, 30_000, "the reactions");
    expect(h.received.reactions.map((r) => [r.emoji, r.added, r.messageId === ref])).toEqual([
      ["♾️", true, true],
      ["👍", true, true],
      [":party_parrot:", true, true],
      ["♾️", false, true],
    ]);
  });
});

describe("Slack outbound-only (a worker)", () => {
  let fake: FakeSlack | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it("posts, edits, reacts and maps platform errors without starting", async () => {
    fake = await new FakeSlack({ rateRules: {} }).start();
    fake.channel(CHANNEL);
    const adapter = new SlackAdapter({ botToken: fake.botToken, apiUrl: fake.apiUrl });
    await expect(adapter.start({ onMessage() {}, onReaction() {}, onCommand() {} })).rejects.toThrow(
      /inbound/,
    );
    const parent = fake.seed({ channel: CHANNEL, user: alice, text: "question" });
    const key = `slack:${TEAM_ID}:${CHANNEL}:${parent.ts}`;
    const ref = await adapter.post(key, "**Done** & <dusted>");
    await adapter.edit(ref, "**Done**, really");
    await adapter.react(ref, "✅");
    await adapter.react(ref, "✅");
    await adapter.react(ref, "♾");
    await adapter.unreact(ref, "♾️");
    await adapter.unreact(ref, "♾️");
    const thread = fake.view(CHANNEL)[0];
    expect(thread?.replies).toEqual([
      expect.objectContaining({ text: "*Done*, really", edits: 1, reactions: ["white_check_mark"] }),
    ]);
    const posted = fake.api.calls.find((c) => c.method === "chat.postMessage");
    expect(posted?.params).toMatchObject({ text: "*Done* &amp; &lt;dusted&gt;", thread_ts: parent.ts });

    const tooLong = await adapter.post(key, "x".repeat(40_001)).catch((e: ChannelError) => e);
    expect(isChannelError(tooLong, "too_long")).toBe(true);
    fake.api.rateLimitStorm(1, 7, ["chat.update"]);
    const limited = await adapter.edit(ref, "again").catch((e: ChannelError) => e);
    expect(isChannelError(limited, "rate_limited") && limited.retryAfterMs).toBe(7000);
    const gone = await adapter
      .edit(`slack:${TEAM_ID}:${CHANNEL}:9.000001`, "x")
      .catch((e: ChannelError) => e);
    expect(isChannelError(gone, "not_found")).toBe(true);
    const unknown = await adapter.react(ref, "🦜").catch((e: ChannelError) => e);
    expect(isChannelError(unknown, "bad_request")).toBe(true);
    await expect(adapter.post("telegram:1:0:0", "x")).rejects.toMatchObject({ kind: "bad_request" });
    expect(fake.api.calls.filter((c) => c.method === "auth.test")).toEqual([]);
  });
});

describe("config/slack-manifest.yml", () => {
  it("asks for every event and scope the adapter relies on, and defines the commands", () => {
    const manifest = parse(readFileSync(new URL("../../config/slack-manifest.yml", import.meta.url), "utf8"));
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining([
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
        "reaction_added",
        "reaction_removed",
      ]),
    );
    expect(manifest.oauth_config.scopes.bot).toEqual(
      expect.arrayContaining([
        "app_mentions:read",
        "chat:write",
        "channels:history",
        "groups:history",
        "im:history",
        "reactions:read",
        "reactions:write",
        "commands",
        "users:read",
      ]),
    );
    const commands = manifest.features.slash_commands.map((c: { command: string }) => c.command);
    expect(commands).toEqual(
      expect.arrayContaining([
        "/model",
        "/thinking",
        "/new",
        "/compact",
        "/stop",
        "/status",
        "/steer",
        "/followup",
        "/help",
      ]),
    );
    expect(manifest.features.app_home.messages_tab_enabled).toBe(true);
  });
});
