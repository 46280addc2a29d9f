/**
 * The web chat at `/` never shadows the platforms' routes, as the wiring builds the server: with an
 * HTTP access token set, Slack's signed Events API requests and Telegram's webhook updates reach
 * their adapters (and are answered), `/healthz` and `/readyz` answer without the token, `/metrics`
 * only with it, and the token does not open the web chat, which signs its users in itself.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { createGateway } from "../../src/gateway/app/index.js";
import { parseConfigText } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { WebClient } from "../adapters/web/client.js";
import { SLACK_ADMIN, TG_USERS, until, World } from "./support/world.js";

const TOKEN = `http-token-${randomBytes(12).toString("hex")}`;
const TG_SECRET = `tg-secret-${randomBytes(8).toString("hex")}`;
let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create({ redis: false });
  const yaml = world
    .yaml({ channels: ["telegram", "slack"], web: true })
    .replace(
      "  telegram:\n    enabled: true\n",
      "  telegram:\n    enabled: true\n    mode: webhook\n    webhook:\n      url: https://bot.example.com/telegram/webhook\n",
    );
  const parsed = parseConfigText(yaml, {
    env: { ...world.env(), SWITCHBOARD_HTTP_TOKEN: TOKEN, TELEGRAM_WEBHOOK_SECRET: TG_SECRET },
    baseDir: world.dir,
    fileName: "routes.yaml",
  });
  if (!parsed.ok) throw new Error(`config invalid: ${JSON.stringify(parsed.issues)}`);
  expect(parsed.config.channels.web.path).toBe("/");
  app = await createGateway({ config: parsed.config, role: "all", logger: silentProcessLogger() });
  world.gateways.push(app);
  await app.start();
  world.slack.eventsUrl = `${app.url}/slack/events`;
  // The fake Telegram posts updates to the URL the adapter registered; point it at this server.
  await until(() => world.telegram.webhook, "the webhook registration");
  if (world.telegram.webhook) world.telegram.webhook.url = `${app.url}/telegram/webhook`;
}, 120_000);
afterAll(async () => {
  await world?.close();
});

describe("routes beside the web chat at / with an HTTP token", () => {
  it("delivers Slack's signed events and Telegram's webhook updates, and both get answers", async () => {
    world.slack.channel("CROUTES");
    const { message } = await world.slack.userMessage({
      channel: "CROUTES",
      user: SLACK_ADMIN,
      text: "ping through the events API",
      mention: true,
    });
    await until(
      () =>
        world.slack
          .view("CROUTES")
          .find((v) => v.ts === message.ts)
          ?.replies.some((r) => r.text === "alpha answers: ping through the events API"),
      "the Slack answer",
    );

    const chat = { id: -100900001, type: "supergroup" as const, title: "Routes" };
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: "ping through the webhook",
      mention: true,
    });
    await until(
      () =>
        world.telegram.botMessages(chat.id).some((m) => m.text === "alpha answers: ping through the webhook"),
      "the Telegram answer",
    );
    expect(world.telegram.webhookResponses.length).toBeGreaterThan(0);
    expect(world.telegram.webhookResponses.every((s) => s === 200)).toBe(true);
  });

  it("keeps each route's own authentication", async () => {
    const url = app.url as string;
    const forgedSlack = await fetch(`${url}/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-signature": "v0=forged",
        "x-slack-request-timestamp": "1",
      },
      body: "{}",
    });
    expect(forgedSlack.status).toBe(401);
    const forgedTelegram = await fetch(`${url}/telegram/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "forged" },
      body: JSON.stringify({ update_id: 1 }),
    });
    expect(forgedTelegram.status).toBe(401);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      200,
    );
    const chat = await fetch(`${url}/api/conversations`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(chat.status).toBe(401);
    expect((await fetch(`${url}/?token=${TOKEN}`, { redirect: "manual" })).status).toBe(401);
  });

  it("serves the web chat to a signed-in page", async () => {
    const web = app.web;
    if (!web || !app.webUrl) throw new Error("the web chat did not start");
    const client = await WebClient.open(await web.signInLink(app.webUrl));
    const { conversation } = await client.call<{ conversation: { id: string } }>(
      "POST",
      "api/conversations",
      {},
    );
    await client.call("POST", `api/conversations/${conversation.id}/messages`, {
      text: "ping from the page",
    });
    await until(async () => {
      const { messages } = await client.call<{ messages: { text: string }[] }>(
        "GET",
        `api/conversations/${conversation.id}/messages`,
      );
      return messages.some((m) => m.text === "alpha answers: ping from the page");
    }, "the web chat answer");
  });
});
