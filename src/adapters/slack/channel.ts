/** Slack as a channel: its settings (`channels.slack`), secrets, checks and adapter. */
import { Type } from "@sinclair/typebox";
import { defineChannel, required } from "../channel.js";
import { Secret, SecretFile, StringEnum } from "../config-schema.js";
import { slackProbes } from "./probe.js";

export const slackChannel = defineChannel({
  description: "Slack.",
  fields: {
    mode: StringEnum(["socket", "http"] as const, {
      default: "socket",
      description:
        "socket: Socket Mode (needs appToken, no public URL); http: Events API (needs signingSecret).",
    }),
    botToken: Secret("Bot token (xoxb-…). Default: $SLACK_BOT_TOKEN."),
    botTokenFile: SecretFile("the bot token"),
    appToken: Secret("App-level token (xapp-…) for Socket Mode. Default: $SLACK_APP_TOKEN."),
    appTokenFile: SecretFile("the app-level token"),
    signingSecret: Secret("Signing secret for http mode. Default: $SLACK_SIGNING_SECRET."),
    signingSecretFile: SecretFile("the signing secret"),
    eventsPath: Type.String({
      default: "/slack/events",
      description: "http mode: path of the Events API endpoint.",
    }),
    apiUrl: Type.Optional(Type.String({ description: "Slack Web API base URL (tests and proxies)." })),
  },
  env: { botToken: "SLACK_BOT_TOKEN", appToken: "SLACK_APP_TOKEN", signingSecret: "SLACK_SIGNING_SECRET" },
  requires: (c) => [
    { field: "botToken", value: c.botToken, variable: "SLACK_BOT_TOKEN" },
    c.mode === "socket"
      ? { field: "appToken", value: c.appToken, variable: "SLACK_APP_TOKEN" }
      : { field: "signingSecret", value: c.signingSecret, variable: "SLACK_SIGNING_SECRET" },
  ],
  warnings: (c) => [
    ...(c.botToken && !/^xoxb-/.test(c.botToken)
      ? [{ field: "botToken", message: "does not look like a bot token (xoxb-…)" }]
      : []),
    ...(c.appToken && !/^xapp-/.test(c.appToken)
      ? [{ field: "appToken", message: "does not look like an app-level token (xapp-…)" }]
      : []),
  ],
  summary: (c) => `slack (${c.mode} mode)`,
  probe: (c) =>
    c.botToken ? slackProbes(c.botToken, c.mode === "socket" ? c.appToken : undefined, c.apiUrl) : [],
  commandMenu: true,
  async create(c, ctx) {
    const { SlackAdapter } = await import("./adapter.js");
    const botToken = required(c.botToken, "channels.slack.botToken", "SLACK_BOT_TOKEN");
    const inbound = !ctx.inbound
      ? undefined
      : c.mode === "socket"
        ? {
            mode: "socket" as const,
            appToken: required(c.appToken, "channels.slack.appToken", "SLACK_APP_TOKEN"),
          }
        : {
            mode: "http" as const,
            signingSecret: required(c.signingSecret, "channels.slack.signingSecret", "SLACK_SIGNING_SECRET"),
            path: c.eventsPath,
          };
    return new SlackAdapter({
      botToken,
      ...(inbound ? { inbound } : {}),
      ...(c.apiUrl ? { apiUrl: c.apiUrl } : {}),
      ...(c.editIntervalMs ? { editIntervalMs: c.editIntervalMs } : {}),
      ...ctx.shared,
      logger: ctx.logger,
    });
  },
});
