/**
 * A gateway SIGKILLed while it handles a Telegram update, through the CLI (`switchboard start
 * --role gateway`, two of them, and a worker) and the fake Telegram: the killed gateway had made
 * the message durable and was adding its 👀 when it died, so Telegram never got the update
 * confirmed and hands it to the gateway that takes the poll over. That gateway meets the dead
 * gateway's event claim, waits for it to expire (nobody renews it) and handles the update (its 👀
 * shows it was handled, not skipped); the inbox append finds the message already stored, so it is
 * answered exactly once.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeChat } from "../fakes/telegram/server.js";
import { backendEnv, type RedisBackend, redisBackends } from "../support/redis.js";
import { CliProcess } from "./support/cli-process.js";
import { TG_USERS, until, World } from "./support/world.js";

const backend: RedisBackend = redisBackends().includes("cluster") ? "cluster" : "redis";

let world: World;
const running: CliProcess[] = [];
beforeAll(async () => {
  world = await World.create();
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.kill("SIGKILL")));
  await world?.close();
});

function launch(role: "gateway" | "worker", name: string): CliProcess {
  let text = world.yaml({ channels: ["telegram"], logLevel: "info", telegramPollTimeoutSeconds: 1 });
  text = text.replace(`apiRoot: ${world.telegram.apiRoot()}`, `apiRoot: ${world.telegram.apiRoot(name)}`);
  text = text.replace(/^ {2}redisUrl: .*\n/m, "");
  const path = join(world.dir, `${name}.yaml`);
  writeFileSync(path, text);
  const p = new CliProcess(["start", "--role", role, "--config", path], {
    cwd: world.dir,
    env: { ...world.env(), ...backendEnv(backend) },
  });
  running.push(p);
  return p;
}

const pollers = (since = 0) =>
  world.telegram.calls.filter((c) => c.method === "getUpdates" && c.at >= since).map((c) => c.prefix);

describe(`a gateway killed while it handles an update (${backend})`, () => {
  it("the next gateway handles the redelivered update, and it is answered exactly once", async () => {
    const chat: FakeChat = { id: -100880001, type: "supergroup", title: "Crash" };
    const gateways = new Map([
      ["gw-a", launch("gateway", "gw-a")],
      ["gw-b", launch("gateway", "gw-b")],
    ]);
    const worker = launch("worker", "w-1");
    await Promise.all(
      [...gateways.values(), worker].map((p) => p.waitForLog("switchboard started", {}, 90_000)),
    );
    const holder = await until(() => pollers().at(-1), "a gateway polling Telegram");
    const standby = holder === "gw-a" ? "gw-b" : "gw-a";
    const answers = (text: string) =>
      world.telegram.botMessages(chat.id).filter((m) => m.text === `alpha answers: ${text}`).length;
    const reactionsBy = (prefix: string, messageId: number) =>
      world.telegram.calls.filter(
        (c) =>
          c.method === "setMessageReaction" &&
          c.prefix === prefix &&
          (c.params as { message_id?: number }).message_id === messageId,
      ).length;

    // The holder handles the update up to its 👀 (after the message is durable) and hangs there.
    world.telegram.holdMethod("setMessageReaction");
    const m = world.telegram.userMessage({ chat, from: TG_USERS.alice, text: "crash here", mention: true });
    await until(() => reactionsBy(holder as string, m.message_id) > 0 || undefined, "the holder's 👀 call");
    const killedAt = Date.now();
    await gateways.get(holder as string)?.kill("SIGKILL");
    world.telegram.releaseMethod("setMessageReaction");

    await until(() => pollers(killedAt).includes(standby) || undefined, `${standby} polling`, 30_000);
    // The redelivered update is handled (not skipped as seen) once the dead gateway's claim expired.
    await until(() => reactionsBy(standby, m.message_id) > 0 || undefined, `${standby}'s 👀`, 60_000);
    expect(world.telegram.message(chat.id, m.message_id)?.botReactions).toEqual(["👀"]);

    const next = world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: "after the crash",
      mention: true,
    });
    await until(() => answers("after the crash") === 1 || undefined, "the next answer", 30_000);
    expect(reactionsBy(standby, next.message_id)).toBe(1);
    expect(answers("crash here")).toBe(1);
  }, 120_000);
});
