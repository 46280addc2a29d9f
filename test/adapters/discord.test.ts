/** Discord specifics beyond the shared contract, with discord.js against the fake Discord. */
import { afterEach, describe, expect, it } from "vitest";
import { DiscordAdapter } from "../../src/adapters/discord/index.js";
import { type ChannelError, type InboundCommand, isChannelError } from "../../src/adapters/types.js";
import { BOT_USER_ID, FakeDiscord, GENERAL_ID, GUILD_ID, NO_THREADS_ID } from "../fakes/discord/server.js";
import { ManualClock } from "../support/manual-clock.js";
import { conversation, createDiscordHarness, type DiscordHarness } from "./harness/discord.js";
import { until } from "./support/drive.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function harness(opts: Parameters<typeof createDiscordHarness>[0] = {}): Promise<DiscordHarness> {
  const h = await createDiscordHarness(opts);
  cleanups.push(() => h.close());
  return h;
}

const waitFor = (what: string, cond: () => boolean) => until(cond, 5000, what);

describe("Discord conversations", () => {
  it("answers a mention in a new thread named after it, and follows the thread without mentions", async () => {
    const h = await harness();
    const mention = await h.groupMessage({ text: "why is the build red?\nlogs attached", mention: true });
    await waitFor("the mention", () => h.received.messages.length === 1);
    const m = h.received.messages[0];
    const { messageId } = h.locate(mention);
    expect(m?.threadKey).toBe(`discord:${GUILD_ID}:${GENERAL_ID}:${messageId}`);
    await h.adapter.typing(m?.threadKey as string);
    await h.adapter.post(m?.threadKey as string, "Looking.");
    const thread = h.fake.world.channels.get(messageId);
    expect(thread).toMatchObject({ type: 11, parentId: GENERAL_ID, name: "why is the build red?" });
    expect(h.fake.view(GENERAL_ID).map((v) => v.content)).toEqual([
      `<@${BOT_USER_ID}> why is the build red?\nlogs attached`,
    ]);
    expect(h.fake.view(messageId).map((v) => [v.author, v.content])).toEqual([["switchboard", "Looking."]]);

    // In the bot's thread people need not mention it; the bot's own echo is not delivered.
    h.fake.userMessage({ channelId: messageId, author: h.users.bob, content: "it's the linter" });
    await waitFor("the thread reply", () => h.received.messages.length === 2);
    expect(h.received.messages[1]).toMatchObject({
      text: "it's the linter",
      mentioned: false,
      threadKey: m?.threadKey,
    });
    const history = await h.adapter.fetchHistory(
      m?.threadKey as string,
      20,
      h.received.messages[1]?.messageId,
    );
    expect(history.map((x) => [x.text, x.fromBot])).toEqual([
      ["why is the build red?\nlogs attached", false],
      ["Looking.", true],
    ]);
  });

  it("keeps a reply inside an existing thread in that thread", async () => {
    const h = await harness();
    const thread = h.fake.userThread({ channelId: GENERAL_ID, owner: h.users.alice, name: "release plan" });
    h.fake.userMessage({ channelId: thread.id, author: h.users.alice, content: "who does the release?" });
    h.fake.userMessage({ channelId: thread.id, author: h.users.bob, content: "you know", mention: true });
    await waitFor("the mention", () => h.received.messages.length === 1);
    const key = h.received.messages[0]?.threadKey as string;
    expect(key).toBe(`discord:${GUILD_ID}:${GENERAL_ID}:${thread.id}`);
    await h.adapter.post(key, "Alice does.");
    expect(
      h.fake
        .view(thread.id)
        .map((v) => v.content)
        .at(-1),
    ).toBe("Alice does.");
    expect(h.fake.rest.calls.filter((c) => c.route.endsWith("/threads"))).toEqual([]);
  });

  it("replies in the reply chain where threads are not allowed, and finds the chain again", async () => {
    const h = await harness();
    const first = h.fake.userMessage({
      channelId: NO_THREADS_ID,
      author: h.users.alice,
      content: "deploy status?",
      mention: true,
    });
    await waitFor("the mention", () => h.received.messages.length === 1);
    const key = h.received.messages[0]?.threadKey as string;
    const ref = await h.adapter.post(key, "Deploying.");
    const [, , botMessage] = ref.split(":");
    expect(h.fake.view(NO_THREADS_ID).map((v) => [v.content, v.replyTo])).toEqual([
      [`<@${BOT_USER_ID}> deploy status?`, undefined],
      ["Deploying.", first.id],
    ]);
    // A reply to the bot addresses it and continues the same conversation.
    h.fake.userMessage({
      channelId: NO_THREADS_ID,
      author: h.users.bob,
      content: "done yet?",
      replyTo: botMessage,
    });
    await waitFor("the reply", () => h.received.messages.length === 2);
    expect(h.received.messages[1]).toMatchObject({ text: "done yet?", mentioned: true, threadKey: key });
    const history = await h.adapter.fetchHistory(key, 20, h.received.messages[1]?.messageId);
    expect(history.map((x) => x.text)).toEqual(["deploy status?", "Deploying."]);
    expect(conversation(h.fake, key).map((v) => v.text)).toEqual([
      `<@${BOT_USER_ID}> deploy status?`,
      "Deploying.",
      "done yet?",
    ]);
  });

  it("answers DMs in the DM and keeps them one conversation", async () => {
    const h = await harness();
    await h.directMessage("hello");
    await h.directMessage("again");
    await waitFor("the DMs", () => h.received.messages.length === 2);
    const [a, b] = h.received.messages;
    expect(a?.threadKey).toBe(b?.threadKey);
    expect(a).toMatchObject({ isDirect: true, mentioned: true });
    await h.adapter.post(a?.threadKey as string, "Hi!");
    const dm = h.fake.dm(h.users.alice);
    expect(h.fake.view(dm.id).map((v) => v.content)).toEqual(["hello", "again", "Hi!"]);
  });

  it("ignores other bots, system noise and malformed events, and keeps working", async () => {
    const h = await harness();
    const robot = h.fake.world.addUser({ id: "900000000000000555", username: "robot", bot: true });
    h.fake.userMessage({ channelId: GENERAL_ID, author: robot, content: "beep", mention: true });
    h.fake.gateway.dispatch(
      "MESSAGE_CREATE",
      { id: "1", channel_id: GENERAL_ID, guild_id: GUILD_ID },
      GUILD_ID,
    );
    h.fake.gateway.dispatch("MESSAGE_REACTION_ADD", { channel_id: GENERAL_ID }, GUILD_ID);
    h.fake.gateway.dispatch("INTERACTION_CREATE", { id: "2", type: 99 }, GUILD_ID);
    h.fake.userMessage({
      channelId: GENERAL_ID,
      author: h.users.alice,
      content: "still there?",
      mention: true,
    });
    await waitFor("the real mention", () => h.received.messages.length === 1);
    expect(h.received.messages.map((m) => m.text)).toEqual(["still there?"]);
  });
});

describe("Discord reactions", () => {
  it("delivers a reaction on a message the client never cached, with the right reference", async () => {
    const clock = new ManualClock();
    const fake = await new FakeDiscord({ now: () => clock.now() }).start();
    cleanups.push(() => fake.close());
    const first = await harness({ fake, clock });
    await first.groupMessage({ text: "approve?", mention: true });
    await waitFor("the mention", () => first.received.messages.length === 1);
    const key = first.received.messages[0]?.threadKey as string;
    const ref = await first.adapter.post(key, "Run the migration? React ✅");
    const dm = fake.dm(first.users.alice);
    const dmRef = await first.adapter.post(`discord:dm:${dm.id}:0`, "Delete the branch?");
    await first.adapter.stop();

    // A fresh process: nothing cached but what the gateway sends at login.
    const second = await harness({ fake, clock });
    const [, channelId, messageId] = ref.split(":");
    fake.reaction({
      channelId: channelId as string,
      messageId: messageId as string,
      user: second.users.bob,
      emoji: "✅",
    });
    const [, dmChannel, dmMessage] = dmRef.split(":");
    fake.reaction({
      channelId: dmChannel as string,
      messageId: dmMessage as string,
      user: second.users.alice,
      emoji: "❌",
    });
    await waitFor("both reactions", () => second.received.reactions.length === 2);
    const seen = (r: (typeof second.received.reactions)[number]) => [
      r.messageId,
      r.threadKey,
      r.emoji,
      r.added,
    ];
    expect(second.received.reactions.map(seen).sort()).toEqual(
      [
        [ref, key, "✅", true],
        [dmRef, `discord:dm:${dm.id}:0`, "❌", true],
      ].sort(),
    );
    fake.reaction({
      channelId: channelId as string,
      messageId: messageId as string,
      user: second.users.bob,
      emoji: "✅",
      added: false,
    });
    await waitFor("the removal", () => second.received.reactions.length === 3);
    expect(second.received.reactions[2]).toMatchObject({ messageId: ref, added: false });
    expect(new Set(second.received.reactions.map((r) => r.eventId)).size).toBe(3);
  });

  it("adds and removes its own reactions with Unicode emoji", async () => {
    const h = await harness();
    const m = h.fake.userMessage({
      channelId: GENERAL_ID,
      author: h.users.alice,
      content: "ack me",
      mention: true,
    });
    await waitFor("the mention", () => h.received.messages.length === 1);
    const ref = h.received.messages[0]?.messageId as string;
    await h.adapter.react(ref, "👀");
    await h.adapter.react(ref, "♾️");
    await h.adapter.unreact(ref, "👀");
    expect([...(h.fake.world.find(GENERAL_ID, m.id)?.reactions.keys() ?? [])]).toEqual(["♾️"]);
    const custom = await h.adapter.react(ref, ":party:").catch((e: ChannelError) => e);
    expect(isChannelError(custom, "bad_request")).toBe(true);
  });
});

describe("Discord application commands", () => {
  it("registers commands at start, in the guild when one is configured, else globally", async () => {
    const h = await harness({
      adapter: { commands: [{ name: "model", description: "Show or switch the model" }] },
    });
    expect(h.fake.rest.commands).toEqual([
      {
        scope: "guild",
        body: [
          {
            name: "model",
            description: "Show or switch the model",
            type: 1,
            options: [{ type: 3, name: "text", description: "Arguments", required: false }],
          },
        ],
      },
    ]);
    const worker = new DiscordAdapter({ token: h.fake.token, apiUrl: h.fake.apiUrl });
    await worker.registerCommands([{ name: "new", description: "Start over" }]);
    expect(h.fake.rest.commands[1]?.scope).toBe("global");
  });

  it("defers within 3 s before the handler runs, answers by follow-ups, then by channel messages", async () => {
    const h = await harness({ start: false });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const commands: InboundCommand[] = [];
    await h.adapter.start({
      onMessage() {},
      onReaction() {},
      async onCommand(c) {
        commands.push(c);
        await gate;
      },
    });
    const i = h.fake.interaction({ channelId: GENERAL_ID, user: h.users.alice, name: "status" });
    await waitFor("the command", () => commands.length === 1);
    expect(i.callbacks).toEqual([{ type: 5, at: i.createdAt, ephemeral: false }]);
    const c = commands[0] as InboundCommand;
    expect(c).toMatchObject({ name: "status", args: "", threadKey: `discord:${GUILD_ID}:${GENERAL_ID}:0` });
    await c.respond?.("**Model:** sonnet");
    await c.respond?.("Context: 12%", { ephemeral: true });
    await h.clock.advance(15 * 60_000);
    await c.respond?.("Still here after 15 minutes.");
    release();
    const seen = h.fake.view(GENERAL_ID);
    expect(seen.map((v) => [v.content, v.ephemeral])).toEqual([
      ["**Model:** sonnet", false],
      ["Context: 12%", true],
      ["Still here after 15 minutes.", false],
    ]);
    expect(i.followUps).toHaveLength(1);
  });
});

describe("Discord outbound-only (a worker)", () => {
  it("posts into a conversation another process started, within Discord's limits", async () => {
    const h = await harness();
    await h.groupMessage({ text: "long answer please", mention: true });
    await waitFor("the mention", () => h.received.messages.length === 1);
    const key = h.received.messages[0]?.threadKey as string;
    const worker = new DiscordAdapter({ token: h.fake.token, apiUrl: h.fake.apiUrl });
    const ref = await worker.post(key, "part one");
    await worker.edit(ref, "part one, edited");
    const tooLong = await worker.post(key, "x".repeat(2001)).catch((e: ChannelError) => e);
    expect(isChannelError(tooLong, "too_long")).toBe(true);
    h.fake.rest.rateLimitStorm(1, 3000);
    const limited = await worker.edit(ref, "again").catch((e: ChannelError) => e);
    expect(isChannelError(limited, "rate_limited")).toBe(true);
    expect((limited as ChannelError).retryAfterMs).toBeGreaterThanOrEqual(3000);
    const gone = await worker
      .edit(`discord:${GENERAL_ID}:123456789012345678`, "x")
      .catch((e: ChannelError) => e);
    expect(isChannelError(gone, "not_found")).toBe(true);
    expect(
      conversation(h.fake, key)
        .map((v) => v.text)
        .slice(1),
    ).toEqual(["part one, edited"]);
    expect(h.fake.gateway.live()).toHaveLength(1);
  });
});
