/**
 * The docker-compose shape with only the web chat: one `--role gateway` process serving the page and
 * two `--role worker` processes running the agents, all `switchboard start` child processes sharing
 * Redis. A conversation is held through them: replies rendered by a worker reach the page's event
 * stream on the gateway; each worker is restarted and the next message is answered by the other;
 * the gateway is restarted and the bookmarked conversation reopens with its history (the session
 * cookie still works: sign-ins live in Redis too) and keeps answering. And one process without Redis
 * keeps its conversations in files across a restart; its sign-ins live in memory, so the restarted
 * process prints a new link, and the sign-in form takes the person back to the bookmark.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebClient } from "../adapters/web/client.js";
import { openEventStream } from "../adapters/web/sse-client.js";
import { CliProcess } from "./support/cli-process.js";
import { scriptedAnswer, until, World } from "./support/world.js";

let world: World;
const running = new Set<CliProcess>();

beforeAll(async () => {
  world = await World.create();
  // Streamed in pieces, so a reply is posted and then edited into place by the worker.
  world.llm.respondWith("openai-completions", scriptedAnswer("alpha", { fragmentSize: 4, writeDelayMs: 10 }));
});
afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop()));
  await world?.close();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A config file: the web chat only, on Redis (or files); `port` for the gateway (workers take any). */
function config(name: string, port: number, redis = true): string {
  let text = world
    .yaml({ channels: [], web: true, logLevel: "info" })
    .replace("http:\n  port: 0", `http:\n  port: ${port}`);
  if (!redis) text = text.replace(/^ {2}redisUrl: .*\n/m, "");
  const path = join(world.dir, name);
  writeFileSync(path, text);
  return path;
}

function launch(role: "gateway" | "worker" | "all", file: string): CliProcess {
  const p = new CliProcess(["start", "--role", role, "--config", file], { cwd: world.dir, env: world.env() });
  running.add(p);
  return p;
}

async function stop(p: CliProcess): Promise<void> {
  running.delete(p);
  expect(await p.stop()).toBe(0);
}

interface Message {
  id: string;
  text: string;
  from: { isBot: boolean };
}

/** Waits until the conversation shows the bot's answer to `text`, as the page would read it. */
async function answered(client: WebClient, conversationId: string, text: string): Promise<Message[]> {
  return until(
    async () => {
      const { messages } = await client.call<{ messages: Message[] }>(
        "GET",
        `api/conversations/${conversationId}/messages`,
      );
      return messages.some((m) => m.from.isBot && m.text === `alpha answers: ${text}`) ? messages : undefined;
    },
    `the answer to "${text}"`,
    20_000,
  );
}

/** Runs a turn; returns which worker ran it (by its "run finished" log lines). */
async function turn(client: WebClient, conversationId: string, text: string, workers: CliProcess[]) {
  const before = workers.map((w) => w.logs().filter((l) => l.msg === "run finished").length);
  await client.call("POST", `api/conversations/${conversationId}/messages`, { text, clientId: text });
  await answered(client, conversationId, text);
  return until(() => {
    const i = workers.findIndex(
      (w, k) => w.logs().filter((l) => l.msg === "run finished").length > (before[k] ?? 0),
    );
    return i >= 0 ? workers[i] : undefined;
  }, "the worker's log line for the run");
}

describe("web chat across a gateway and two workers (separate processes)", () => {
  it("answers, survives a restart of each worker and of the gateway, and reopens the bookmark", async () => {
    const port = await freePort();
    const gatewayConfig = config("web-gateway.yaml", port);
    const workerConfig = config("web-worker.yaml", 0);
    let gateway = launch("gateway", gatewayConfig);
    let workerA = launch("worker", workerConfig);
    let workerB = launch("worker", workerConfig);
    const [, link] = await gateway.waitForLine(/^Web chat: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/);
    await Promise.all([gateway, workerA, workerB].map((p) => p.waitForLog("switchboard started")));
    const client = await WebClient.open(link as string);
    expect(client.pageUrl).toBe(`http://127.0.0.1:${port}/`);

    const { conversation } = await client.call<{ conversation: { id: string } }>(
      "POST",
      "api/conversations",
      {},
    );
    const stream = await openEventStream(`${client.pageUrl}api/events?conversation=${conversation.id}`, {
      cookie: client.cookie,
    });
    try {
      await stream.waitFor((e) => e.event === "snapshot");
      const first = await turn(client, conversation.id, "hello one", [workerA, workerB]);
      // The worker's rendering reached the page's stream on the gateway, through Redis. The final
      // text comes as an edit of the first post, or (on a loaded machine, when the whole reply
      // streamed in before the first post went out) in that post itself.
      const edited = await stream.waitFor(
        (e) =>
          e.event === "message" &&
          (e.data.change === "edited" || e.data.change === "posted") &&
          (e.data.message as Message).text === "alpha answers: hello one",
        "the final text on the page's event stream",
      );
      expect((edited.data.message as Message).from.isBot).toBe(true);
      expect(first).toBeDefined();
    } finally {
      stream.close();
    }

    // Each worker restarts in turn; the other one answers meanwhile.
    await stop(workerA);
    expect(await turn(client, conversation.id, "hello two", [workerB])).toBe(workerB);
    workerA = launch("worker", workerConfig);
    await workerA.waitForLog("switchboard started");
    await stop(workerB);
    expect(await turn(client, conversation.id, "hello three", [workerA])).toBe(workerA);
    workerB = launch("worker", workerConfig);
    await workerB.waitForLog("switchboard started");

    // The gateway restarts: the bookmark reopens the conversation with its history.
    await stop(gateway);
    gateway = launch("gateway", gatewayConfig);
    await gateway.waitForLog("switchboard started");
    const bookmark = await fetch(`${client.pageUrl}c/${conversation.id}`, {
      headers: { cookie: client.cookie },
    });
    expect(bookmark.status).toBe(200);
    const history = await answered(client, conversation.id, "hello three");
    expect(history.filter((m) => !m.from.isBot).map((m) => m.text)).toEqual([
      "hello one",
      "hello two",
      "hello three",
    ]);
    expect(history.filter((m) => m.from.isBot).map((m) => m.text)).toEqual([
      "alpha answers: hello one",
      "alpha answers: hello two",
      "alpha answers: hello three",
    ]);
    const list = await client.call<{ conversations: { id: string; title: string }[] }>(
      "GET",
      "api/conversations",
    );
    expect(list.conversations).toContainEqual(
      expect.objectContaining({ id: conversation.id, title: "hello one" }),
    );
    await turn(client, conversation.id, "hello four", [workerA, workerB]);
    // /status adds up what the model reported for each of the four replies (10 in, 5 out), saved
    // by whichever worker ran it.
    await client.call("POST", `api/conversations/${conversation.id}/messages`, { text: "/status" });
    const status = await until(async () => {
      const { messages } = await client.call<{ messages: Message[] }>(
        "GET",
        `api/conversations/${conversation.id}/messages`,
      );
      return messages.find((m) => m.from.isBot && m.text.includes("Thread usage:"));
    }, "the /status reply");
    expect(status.text).toContain("Thread usage: 40 in · 20 out");

    for (const p of [gateway, workerA, workerB])
      expect(p.logs().filter((l) => String(l.msg).includes("no enabled channel"))).toEqual([]);
    await Promise.all([gateway, workerA, workerB].map(stop));
  }, 240_000);

  it("one process with files keeps the conversation across a restart; a new link signs in again", async () => {
    const port = await freePort();
    const file = config("web-embedded.yaml", port, false);
    let p = launch("all", file);
    const [, link] = await p.waitForLine(/^Web chat: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/);
    const before = await WebClient.open(link as string);
    const { conversation } = await before.call<{ conversation: { id: string } }>(
      "POST",
      "api/conversations",
      {},
    );
    await before.call("POST", `api/conversations/${conversation.id}/messages`, { text: "kept in files" });
    await answered(before, conversation.id, "kept in files");
    await stop(p);

    p = launch("all", file);
    const [, fresh] = await p.waitForLine(/^Web chat: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/);
    expect(fresh).not.toBe(link);
    const bookmark = `http://127.0.0.1:${port}/c/${conversation.id}`;
    const signedOut = await fetch(bookmark, { headers: { cookie: before.cookie, accept: "text/html" } });
    expect(signedOut.status).toBe(401);
    expect(await signedOut.text()).toContain(`name="next" value="/c/${conversation.id}"`);
    expect((await fetch(link as string, { redirect: "manual" })).status).toBe(401);
    const form = await fetch(`http://127.0.0.1:${port}/signin`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: fresh as string, next: `/c/${conversation.id}` }).toString(),
      redirect: "manual",
    });
    expect(form.status).toBe(303);
    expect(form.headers.get("location")).toBe(`/c/${conversation.id}`);
    const cookie = (form.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect((await fetch(bookmark, { headers: { cookie } })).status).toBe(200);
    // A second browser of the same person: a link made by the signed-in page.
    const { csrf } = (await (
      await fetch(`http://127.0.0.1:${port}/api/session`, { headers: { cookie } })
    ).json()) as { csrf: string };
    const made = await fetch(`http://127.0.0.1:${port}/api/sign-in-links`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" },
      body: "{}",
    });
    const after = await WebClient.open(((await made.json()) as { url: string }).url);
    const history = await answered(after, conversation.id, "kept in files");
    expect(history.map((m) => m.text)).toEqual(["kept in files", "alpha answers: kept in files"]);
    await after.call("POST", `api/conversations/${conversation.id}/messages`, { text: "and after" });
    await answered(after, conversation.id, "and after");
    await stop(p);
  }, 180_000);
});
