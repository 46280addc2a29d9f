/**
 * Conversation commands typed at a channel's top level (a Slack slash command has no thread; a
 * Discord application command outside a thread; a Telegram group command that replies to nothing)
 * act on no conversation: `/new`, `/compact`, `/stop` change nothing and answer how to use them in
 * a thread, and `/status` shows the channel's defaults for new threads. Conversations going on in
 * the channel are untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import type { FakeChat } from "../fakes/telegram/server.js";
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

const HINT = (command: string) =>
  `To use it on a conversation, mention me in that conversation's thread followed by ${command}.`;
const NEW_ANSWER = `Nothing changed: /new starts a fresh session in the thread it is typed in, and the channel's top level is not a conversation (each conversation here has its own thread). ${HINT("/new")}`;
const COMPACT_ANSWER = `Nothing compacted: /compact summarises the thread it is typed in, and the channel's top level is not a conversation (each conversation here has its own thread). ${HINT("/compact")}`;
const STOP_ANSWER =
  "Nothing stopped: /stop at the channel's top level does not stop the conversations in this channel (each has its own thread). To stop one, mention me in its thread followed by “stop” (or /stop).";

describe("conversation commands at a channel's top level", () => {
  it("Slack: /new, /compact, /stop answer how to use them in a thread; /status shows the channel's defaults", async () => {
    const slack = world.slack;
    slack.channel("CTOP");
    const replies = (ts: string) => slack.view("CTOP").find((v) => v.ts === ts)?.replies ?? [];
    const { message: thread } = await slack.userMessage({
      channel: "CTOP",
      user: SLACK_ADMIN,
      text: "first words",
      mention: true,
    });
    await until(
      () => replies(thread.ts).some((r) => r.text === "alpha answers: first words"),
      "the thread's answer",
    );

    const answerTo = async (command: string, text = "") => {
      const before = slack.responses.length;
      await slack.slashCommand({ channel: "CTOP", user: SLACK_ADMIN, command, text });
      const r = await until(() => slack.responses[before], `the /${command} answer`);
      return String(r.body.text);
    };
    expect(await answerTo("new")).toBe(NEW_ANSWER);
    expect(await answerTo("compact")).toBe(COMPACT_ANSWER);
    expect(await answerTo("stop")).toBe(STOP_ANSWER);
    const channelStatus = (await answerTo("status")).split("\n");
    expect(channelStatus.filter((l) => !l.startsWith("Tools: "))).toEqual([
      "This channel's defaults for new threads (threads already going on keep theirs):",
      "Model: alpha/one (Alpha One)",
      "Thinking: off",
      `Change them here with /model and /thinking. ${HINT("/status")}`,
    ]);
    // How tools run holds for every thread of the channel (the machine decides which sandbox).
    expect(channelStatus[3]).toMatch(/^Tools: (sandboxed|not sandboxed)/);
    await answerTo("model", "beta/two");
    expect(await answerTo("status")).toContain("\nModel: beta/two (Beta Two)\n");

    // The conversation went on untouched: same session, its own model, and /status in the thread
    // (after a mention) is that thread's status.
    await slack.userMessage({ channel: "CTOP", user: SLACK_ADMIN, text: "still here?", threadTs: thread.ts });
    await until(
      () => replies(thread.ts).some((r) => r.text === "alpha answers: still here?"),
      "the thread's next answer, in its session",
    );
    await slack.userMessage({
      channel: "CTOP",
      user: SLACK_ADMIN,
      text: "/status",
      threadTs: thread.ts,
      mention: true,
    });
    const status = await until(
      () => replies(thread.ts).find((r) => r.text.startsWith("Thread: ")),
      "the thread's /status",
    );
    expect(status.text).toContain("\nModel: alpha/one (Alpha One)\n");
  });

  it("Discord: /new outside a thread answers how to use it in one", async () => {
    const discord = world.discord;
    const { alice } = world.discordUsers;
    const i = discord.interaction({ channelId: GENERAL_ID, user: alice, name: "new" });
    const answer = await until(() => {
      const id = discord.rest.interactions.get(i.id)?.originalId;
      const text = id ? discord.world.find(GENERAL_ID, id)?.content : undefined;
      // The deferred reply shows a placeholder until the answer replaces it.
      return text?.startsWith("Nothing changed") ? text : undefined;
    }, "the /new answer");
    expect(answer).toBe(NEW_ANSWER);
  });

  it("Telegram: /stop in a group that replies to nothing answers how to stop a conversation", async () => {
    const tg = world.telegram;
    const chat: FakeChat = { id: -100880002, type: "supergroup", title: "Top level" };
    tg.command(chat, TG_USERS.alice, "stop", "", { addressed: true });
    const answer = await until(
      () => tg.botMessages(chat.id).find((m) => m.text.startsWith("Nothing stopped")),
      "the /stop answer",
    );
    expect(answer.text).toBe(STOP_ANSWER);
  });
});
