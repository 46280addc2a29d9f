/**
 * The web chat as a channel: its settings (`channels.web`) and adapter. It needs no secret: it
 * runs when enabled, or, with `enabled` absent, when no other channel runs; the gateway serves its
 * page under `path` and gives it the stores it shares with other processes.
 */
import { Type } from "@sinclair/typebox";
import { defineChannel } from "../channel.js";

/** The user id of the person at the web chat page (the web adapter's default identity). */
const WEB_USER_ID = "web:local";

/**
 * The web chat's admins. The page is reached only by signing in with a link that `switchboard start`
 * printed, so whoever uses it operates this installation: with no admins configured, the page's user
 * is the admin (it may then DM the bot under the default `allowlist` policy and approve tool calls).
 */
export function webAdmins(configured: readonly string[]): string[] {
  return configured.length > 0 ? [...configured] : [WEB_USER_ID];
}

export const webChannel = defineChannel({
  description: "The web chat served by the gateway's HTTP server.",
  fields: {
    path: Type.String({
      default: "/",
      pattern: "^/",
      title: "a path starting with /",
      description: "Path of the web chat page on the HTTP server.",
    }),
  },
  fallback: true,
  summary: (c) => `web chat (path ${c.path})`,
  async create(c, ctx) {
    const { WebChatAdapter } = await import("./adapter.js");
    return new WebChatAdapter({
      userId: WEB_USER_ID,
      admins: webAdmins(c.admins),
      path: c.path,
      ...(ctx.webChat
        ? { store: ctx.webChat.store, auth: ctx.webChat.auth, uploads: ctx.webChat.uploads }
        : {}),
      ...(c.files ? { maxFileBytes: Math.floor(c.files.maxFileMb * 1024 * 1024) } : {}),
      isAllowedHost: ctx.isAllowedHost,
      ...(c.editIntervalMs ? { editIntervalMs: c.editIntervalMs } : {}),
      logger: ctx.logger,
    });
  },
});
