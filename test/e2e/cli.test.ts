/**
 * Switchboard as people run it: `switchboard start` (tsx src/main.ts) as child processes with a
 * config pointing at the platform fakes, the fake LLM server and Redis. A Telegram mention and a
 * Slack mention each get a reply edited into place; a `--role gateway` process and two
 * `--role worker` processes share the work; with no config and no Redis it starts the web chat and
 * prints its one-time sign-in link.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebClient } from "../adapters/web/client.js";
import { type FakeChat, BOT_ID as TG_BOT } from "../fakes/telegram/server.js";
import { CliProcess } from "./support/cli-process.js";
import { SLACK_ADMIN, scriptedAnswer, TG_USERS, until, World } from "./support/world.js";

let world: World;
const running: CliProcess[] = [];

beforeAll(async () => {
  world = await World.create();
  // Streamed slowly enough that replies are edited into place and a run takes a few hundred ms.
  world.llm.respondWith("openai-completions", scriptedAnswer("alpha", { fragmentSize: 3, writeDelayMs: 15 }));
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await world?.close();
});

function launch(args: string[], env: Record<string, string> = world.env(), cwd = world.dir): CliProcess {
  const p = new CliProcess(args, { cwd, env });
  running.push(p);
  return p;
}

async function stop(p: CliProcess): Promise<number | null> {
  running.splice(running.indexOf(p), 1);
  return p.stop();
}

let chatSeq = 0;
const groupChat = (): FakeChat => ({
  id: -100800000 - ++chatSeq,
  type: "supergroup",
  title: `Group ${chatSeq}`,
});

describe("switchboard start as a process", () => {
  it("answers a Telegram mention and a Slack mention with edited replies", async () => {
    const config = world.writeConfig("one.yaml", {
      channels: ["telegram", "slack"],
      slackMode: "socket",
      logLevel: "info",
    });
    const p = launch(["start", "--config", config]);
    await p.waitForLog("switchboard started", { role: "all" });
    await until(() => world.slack.socketConnected, "the Slack Socket Mode connection");

    const chat = groupChat();
    world.telegram.userMessage({ chat, from: TG_USERS.alice, text: "ping over telegram", mention: true });
    const tgReply = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text === "alpha answers: ping over telegram"),
      "the Telegram reply",
    );
    expect(tgReply.from.id).toBe(TG_BOT);
    expect(tgReply.edits).toBeGreaterThan(0);

    world.slack.channel("CPROC");
    const { message } = await world.slack.userMessage({
      channel: "CPROC",
      user: SLACK_ADMIN,
      text: "ping over slack",
      mention: true,
    });
    const slackReply = await until(
      () =>
        world.slack
          .view("CPROC")
          .find((v) => v.ts === message.ts)
          ?.replies.find((r) => r.text === "alpha answers: ping over slack"),
      "the Slack reply in the thread",
    );
    expect(slackReply.edits).toBeGreaterThan(0);
    expect(await stop(p)).toBe(0);
  });

  it("a gateway and two workers share the threads", async () => {
    const config = world.writeConfig("roles.yaml", {
      channels: ["telegram"],
      logLevel: "info",
      concurrency: 1,
    });
    const gateway = launch(["start", "--role", "gateway", "--config", config]);
    const workers = [
      launch(["start", "--role", "worker", "--config", config]),
      launch(["start", "--role", "worker", "--config", config]),
    ];
    await Promise.all([gateway, ...workers].map((p) => p.waitForLog("switchboard started")));

    const chats = Array.from({ length: 6 }, groupChat);
    for (const [i, chat] of chats.entries()) {
      world.telegram.userMessage({ chat, from: TG_USERS.alice, text: `job ${i}`, mention: true });
    }
    for (const [i, chat] of chats.entries()) {
      await until(
        () => world.telegram.botMessages(chat.id).some((m) => m.text === `alpha answers: job ${i}`),
        `the reply to job ${i}`,
      );
    }
    const finished = (p: CliProcess) => p.logs().filter((l) => l.msg === "run finished").length;
    // Log lines are written asynchronously: wait until each run's line is out.
    const counts = await until(() => {
      const c = workers.map(finished);
      return c.reduce((a, b) => a + b, 0) >= chats.length ? c : undefined;
    }, "a log line for every run");
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
    expect((counts[0] ?? 0) + (counts[1] ?? 0)).toBe(chats.length);
    expect(finished(gateway)).toBe(0);
    expect(gateway.logs().filter((l) => l.msg === "message queued")).toHaveLength(chats.length);
    const codes = await Promise.all([gateway, ...workers].map(stop));
    expect(codes).toEqual([0, 0, 0]);
  });

  it("with no config and no Redis, starts the web chat, prints its sign-in link and keeps data in ./data", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "sb-fresh-"));
    try {
      // --port 0: any free port, so the test runs beside a Switchboard on the default 8787.
      const p = launch(["start", "--port", "0"], {}, cwd);
      const [, listening] = await p.waitForLine(/^Listening on (http:\/\/127\.0\.0\.1:\d+) \(role all\)$/);
      const [link, url] = await p
        .waitForLine(/^Web chat: (http:\/\/127\.0\.0\.1:\d+\/)\?token=[A-Za-z0-9_-]{40,}$/)
        .then((m) => [m[0].slice("Web chat: ".length), m[1] as string]);
      expect(`${listening}/`).toBe(url);
      expect((await fetch(url as string)).status).toBe(401);
      const client = await WebClient.open(link as string);
      const page = await fetch(url as string, { headers: { cookie: client.cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<html");
      const { conversation } = await client.call<{ conversation: { id: string } }>(
        "POST",
        "api/conversations",
        {},
      );
      type Listed = { messages: { from: { isBot: boolean }; text: string }[] };
      const botSays = async (text: string) => {
        const { messages } = await client.call<Listed>(
          "GET",
          `api/conversations/${conversation.id}/messages`,
        );
        return messages.find((m) => m.from.isBot && m.text.includes(text));
      };
      await client.call("POST", `api/conversations/${conversation.id}/messages`, { text: "hello" });
      const reply = await until(() => botSays("Set-up needed"), "the set-up instructions in the web chat");
      expect(reply.text).toContain("ANTHROPIC_API_KEY");
      expect(reply.text).toContain("models.custom");
      expect(reply.text).not.toContain("model call failed");
      expect(existsSync(join(cwd, "data", "sessions"))).toBe(true);

      // /status names the thread key (what `switchboard export` takes) and the session's file.
      await client.call("POST", `api/conversations/${conversation.id}/messages`, { text: "/status" });
      const status = await until(() => botSays("Session:"), "the /status reply");
      expect(status.text).toContain(`Thread: web:${conversation.id}`);
      expect(status.text).toMatch(
        new RegExp(`Session: \\S+ \\(${join(cwd, "data", "sessions")}/\\S+\\.jsonl\\)`),
      );
      expect(await stop(p)).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
