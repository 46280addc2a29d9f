/**
 * Embedded mode (no Redis) keeps which thread a platform message belongs to in a file under
 * `dataDir`, so a conversation survives a restart of `switchboard start`: in a Telegram group, a
 * reply to the bot's answer after the restart continues the thread with its history, as in Redis mode.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeChat } from "../fakes/telegram/server.js";
import { CliProcess } from "./support/cli-process.js";
import { lastUserText, TG_USERS, until, World } from "./support/world.js";

let world: World;
const running: CliProcess[] = [];

beforeAll(async () => {
  world = await World.create({ redis: false });
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await world?.close();
});

function launch(config: string): CliProcess {
  const p = new CliProcess(["start", "--config", config], { cwd: world.dir, env: world.env() });
  running.push(p);
  return p;
}

async function stop(p: CliProcess): Promise<number | null> {
  running.splice(running.indexOf(p), 1);
  return p.stop();
}

describe("a restart in embedded mode", () => {
  it("a reply to the bot's answer after a restart continues the thread with its history", async () => {
    const config = world.writeConfig("embedded.yaml", { channels: ["telegram"], logLevel: "info" });
    const chat: FakeChat = { id: -100990001, type: "supergroup", title: "Restarts" };

    const first = launch(config);
    await first.waitForLog("switchboard started", { role: "all" });
    world.telegram.userMessage({ chat, from: TG_USERS.alice, text: "remember the word kiwi", mention: true });
    const answer = await until(
      () =>
        world.telegram.botMessages(chat.id).find((m) => m.text === "alpha answers: remember the word kiwi"),
      "the first answer",
    );
    expect(await stop(first)).toBe(0);
    expect(existsSync(join(world.dir, "data", "message-threads.jsonl"))).toBe(true);

    const second = launch(config);
    await second.waitForLog("switchboard started", { role: "all" });
    // No mention: a reply to the bot's own message addresses it.
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: "which word was it?",
      replyTo: answer.message_id,
    });
    const again = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text === "alpha answers: which word was it?"),
      "the answer after the restart",
    );
    const request = world
      .requests("openai-completions")
      .find((r) => lastUserText(r).includes("which word was it?"));
    const history = JSON.stringify(request?.body.messages);
    expect(history).toContain("remember the word kiwi");
    expect(history).toContain("alpha answers: remember the word kiwi");
    // Same reply chain: the answer replies to the thread's first message, as the first answer did.
    expect(again.reply_to_message_id).toBe(answer.reply_to_message_id);
    expect(await stop(second)).toBe(0);
  });
});
