/**
 * Scheduled prompts end to end, as people meet them: `/schedule in 1m …` in a Telegram group
 * (through the Telegram fake) and in the web chat (its HTTP API), answered in the same
 * conversation at the minute; `/schedule list`, `pause`, `resume` and `rm`; a person who is no
 * admin of a group may list but not schedule. The process is the embedded one, and the schedules'
 * clock is the test's (a manual clock), so "at the minute" needs no waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { conversation, waitForBot } from "./support/drivers.js";
import { openWebConversation } from "./support/web-chat.js";
import { until, World } from "./support/world.js";

let world: World;
let app: Gateway;
const clock = new ManualClock(Date.UTC(2026, 11, 3, 10, 0));

beforeAll(async () => {
  world = await World.create({ redis: false });
  app = await world.start("all", { channels: ["telegram"], web: true }, clock);
});
afterAll(async () => {
  await world?.close();
});

// Chat shows the id as code (Telegram's HTML drops the backticks).
const idOf = (text: string) => /Scheduled `?([0-9a-f]{8})/.exec(text)?.[1] ?? "";

describe("/schedule", () => {
  it("answers a one-off in a Telegram group at the minute, then lists nothing", async () => {
    const c = conversation(world, "telegram");
    await c.start("hello");
    await waitForBot(c, (m) => m.text === "alpha answers: hello", "the first answer");
    await c.command("schedule", "in 1m ping the team");
    const made = await waitForBot(c, (m) => m.text.includes("⏰ Scheduled"), "the confirmation");
    expect(made.text).toContain("once at Thu 2026-12-03 10:01");
    expect(made.text).toContain("Runs: Thu 2026-12-03 10:01 UTC");
    const requests = world.requests("openai-completions").length;
    await clock.advance(59_000);
    expect(world.requests("openai-completions").length).toBe(requests);
    await clock.advance(1_000);
    await waitForBot(c, (m) => m.text === "alpha answers: ping the team", "the scheduled answer");
    // The model read the prompt marked as scheduled.
    const sent = JSON.stringify(world.requests("openai-completions").at(-1)?.body.messages);
    expect(sent).toContain(`[Scheduled prompt ${idOf(made.text)} (once at Thu 2026-12-03 10:01 UTC)`);
    await until(async () => {
      await c.command("schedule", "list");
      return c.botMessages().some((m) => m.text.startsWith("No schedules in this conversation"));
    }, "the one-off to be gone from the list");
  });

  it("pauses, resumes and removes a repeating schedule, and lists it with its next run", async () => {
    const c = conversation(world, "telegram");
    await c.start("hi");
    await waitForBot(c, (m) => m.text === "alpha answers: hi", "the first answer");
    await c.command("schedule", "every weekday 09:00 Europe/Berlin summarise the deploys");
    const made = await waitForBot(c, (m) => m.text.includes("⏰ Scheduled"), "the confirmation");
    const id = idOf(made.text);
    expect(made.text).toContain("every weekday at 09:00");
    expect(made.text).toContain("Fri 2026-12-04 09:00 CET");
    await c.command("schedule", "list");
    const list = await waitForBot(c, (m) => m.text.startsWith("Schedules here (1)"), "the list");
    expect(list.text).toContain(id);
    expect(list.text).toContain("next: Fri 2026-12-04 09:00 CET");
    await c.command("schedule", `pause ${id}`);
    await waitForBot(c, (m) => m.text.startsWith("⏸️ Paused") && m.text.includes(id), "the pause");
    await c.command("schedule", `resume ${id}`);
    await waitForBot(c, (m) => m.text.includes("Next run: Fri 2026-12-04 09:00 CET"), "the resume");
    await c.command("schedule", `rm ${id}`);
    await waitForBot(c, (m) => m.text.startsWith("🗑️ Removed schedule") && m.text.includes(id), "the removal");
    await c.command("schedule", `rm ${id}`);
    await waitForBot(
      c,
      (m) => m.text.startsWith("No schedule ") && m.text.includes(id),
      "the second removal's answer",
    );
  });

  it("says what was wrong with a schedule it cannot read, and keeps non-admins of a group out", async () => {
    const c = conversation(world, "telegram");
    await c.start("hey");
    await waitForBot(c, (m) => m.text === "alpha answers: hey", "the first answer");
    await c.command("schedule", "every 10s too often");
    await waitForBot(c, (m) => m.text.startsWith("Nothing scheduled:"), "the refusal");
    await c.commandByOther?.("schedule", "every 1h spam");
    await waitForBot(
      c,
      (m) => m.text.startsWith("Only an admin may make or change schedules"),
      "the refusal to bob",
    );
  });
});

describe("a scheduled answer the platform refused", () => {
  it("is posted by a retry without a second model call once the chat is back", async () => {
    const c = conversation(world, "telegram");
    await c.start("hello again");
    await waitForBot(c, (m) => m.text === "alpha answers: hello again", "the first answer");
    await c.command("schedule", "every 1h hourly report");
    const made = await waitForBot(c, (m) => m.text.includes("⏰ Scheduled"), "the confirmation");
    const chat = c.telegramChat;
    if (!chat) throw new Error("no chat");
    world.telegram.loseChat(chat.id);
    const before = world.requests("openai-completions").length;
    await clock.advance(60 * 60_000);
    await until(
      () => world.requests("openai-completions").length === before + 1,
      "the scheduled run's model call",
    );
    world.telegram.addChat(chat);
    // The first retry (after 1 minute) wakes the conversation: the owed answer is posted.
    await clock.advance(60_000);
    await waitForBot(c, (m) => m.text === "alpha answers: hourly report", "the retried answer");
    expect(world.requests("openai-completions").length).toBe(before + 1);
    await c.command("schedule", `rm ${idOf(made.text)}`);
    await waitForBot(c, (m) => m.text.startsWith("🗑️ Removed schedule"), "the removal");
  });

  it("pauses the schedule when its conversation stays gone through every retry", async () => {
    const c = conversation(world, "telegram");
    await c.start("one more");
    await waitForBot(c, (m) => m.text === "alpha answers: one more", "the first answer");
    await c.command("schedule", "every 1h status");
    const made = await waitForBot(c, (m) => m.text.includes("⏰ Scheduled"), "the confirmation");
    const chat = c.telegramChat;
    if (!chat) throw new Error("no chat");
    world.telegram.loseChat(chat.id);
    const before = world.requests("openai-completions").length;
    await clock.advance(60 * 60_000);
    await until(
      () => world.requests("openai-completions").length === before + 1,
      "the scheduled run's model call",
    );
    // 1 min, 5 min, 30 min, 2 h: still refused after the last wait, the schedule is paused.
    for (const wait of [60_000, 300_000, 1_800_000, 7_200_000]) {
      await clock.sleeping(wait);
      await clock.advance(wait);
    }
    world.telegram.addChat(chat);
    await c.command("schedule", "list");
    const list = await waitForBot(c, (m) => m.text.startsWith("Schedules here"), "the list");
    expect(list.text).toContain(idOf(made.text));
    expect(list.text).toContain("paused: its answers could not be posted 4 times");
    expect(world.requests("openai-completions").length).toBe(before + 1);
  });
});

describe("/schedule in the web chat", () => {
  it("answers `/schedule in 1m …` at the minute in the same conversation", async () => {
    const web = await openWebConversation(app);
    await web.say("/schedule in 1m water the plants");
    await until(
      async () => (await web.botTexts()).some((t) => t.includes("⏰ Scheduled")),
      "the confirmation",
    );
    await clock.advance(60_000);
    await until(
      async () => (await web.botTexts()).includes("alpha answers: water the plants"),
      "the scheduled answer in the web chat",
    );
  });
});
