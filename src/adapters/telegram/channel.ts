/** Telegram as a channel: its settings (`channels.telegram`), secrets, checks and adapter. */
import { Type } from "@sinclair/typebox";
import { defineChannel, required } from "../channel.js";
import { Obj, Secret, SecretFile, StringEnum } from "../config-schema.js";
import { botIdOfToken } from "./ids.js";
import { telegramProbe } from "./probe.js";

export const telegramChannel = defineChannel({
  description: "Telegram.",
  fields: {
    mode: StringEnum(["polling", "webhook"] as const, {
      default: "polling",
      description: "polling: long polling (no public URL); webhook: Telegram POSTs updates to webhook.url.",
    }),
    botToken: Secret("Bot token from @BotFather (123456:ABC…). Default: $TELEGRAM_BOT_TOKEN."),
    botTokenFile: SecretFile("the bot token"),
    apiRoot: Type.Optional(Type.String({ description: "Bot API base URL (tests, local Bot API servers)." })),
    pollTimeoutSeconds: Type.Integer({
      default: 25,
      minimum: 0,
      maximum: 50,
      description:
        "polling mode: how long one getUpdates waits for news (0: answer at once; polls that come back empty at once are spaced out).",
    }),
    webhook: Obj(
      {
        url: Type.Optional(
          Type.String({
            pattern: "^https://",
            title: "an https:// URL",
            description: "Public https URL Telegram posts updates to.",
          }),
        ),
        path: Type.String({
          default: "/telegram/webhook",
          description: "Path the gateway serves the webhook on.",
        }),
        secretToken: Secret("Secret Telegram sends back in a header. Default: $TELEGRAM_WEBHOOK_SECRET."),
        secretTokenFile: SecretFile("the webhook secret"),
      },
      "webhook mode settings.",
    ),
  },
  env: { botToken: "TELEGRAM_BOT_TOKEN", "webhook.secretToken": "TELEGRAM_WEBHOOK_SECRET" },
  requires: (c) => [{ field: "botToken", value: c.botToken, variable: "TELEGRAM_BOT_TOKEN" }],
  issues: (c) => {
    const token =
      c.botToken && botIdOfToken(c.botToken) === undefined
        ? [
            {
              field: "botToken",
              message:
                "is not a BotFather token: it has the shape <bot id>:<secret> (123456789:AAH…); check TELEGRAM_BOT_TOKEN or botTokenFile",
            },
          ]
        : [];
    if (c.mode !== "webhook") return token;
    return [
      ...token,
      ...(c.webhook.url
        ? []
        : [
            {
              field: "webhook.url",
              message:
                'is required in webhook mode (the public https URL Telegram posts to); or use mode: "polling"',
            },
          ]),
      ...(c.webhook.secretToken
        ? []
        : [
            {
              field: "webhook.secretToken",
              message: "is required in webhook mode; set TELEGRAM_WEBHOOK_SECRET or secretTokenFile",
            },
          ]),
    ];
  },
  summary: (c) => `telegram (${c.mode})`,
  probe: (c) => (c.botToken ? [telegramProbe(c.botToken, c.apiRoot)] : []),
  commandMenu: true,
  async create(c, ctx) {
    const { TelegramAdapter } = await import("./adapter.js");
    const token = required(c.botToken, "channels.telegram.botToken", "TELEGRAM_BOT_TOKEN");
    const pollLease =
      c.mode === "polling" && ctx.inbound
        ? ctx.lease?.(`telegram:polling:${token.split(":")[0]}`)
        : undefined;
    return new TelegramAdapter({
      token,
      mode: c.mode,
      ...(c.apiRoot ? { apiRoot: c.apiRoot } : {}),
      ...(c.mode === "webhook" && c.webhook.url && c.webhook.secretToken
        ? { webhook: { url: c.webhook.url, secretToken: c.webhook.secretToken, path: c.webhook.path } }
        : {}),
      ...(pollLease ? { lease: pollLease } : {}),
      pollTimeoutSeconds: c.pollTimeoutSeconds,
      ...(c.editIntervalMs
        ? { editIntervalMs: c.editIntervalMs, groupEditIntervalMs: c.editIntervalMs }
        : {}),
      ...ctx.shared,
      logger: ctx.logger,
    });
  },
});
