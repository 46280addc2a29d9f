/** The credential check of `switchboard check` for Telegram: `getMe` with the bot token. */
import { askPlatform, refusedBy } from "../credential-probe.js";
import type { CredentialProbe } from "../types.js";

/** Asks the Bot API at `apiRoot` (default Telegram's) who `token` belongs to. */
export function telegramProbe(token: string, apiRoot: string | undefined): CredentialProbe {
  const root = (apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
  return {
    name: "telegram",
    check: () =>
      askPlatform(`${root}/bot${token}/getMe`, { method: "POST" }, (status, body) => {
        const result = body.result as { username?: string } | undefined;
        if (body.ok === true) return { ok: true, detail: `bot @${result?.username ?? "?"}` };
        const detail = `HTTP ${status}: ${String(body.description ?? "no answer")}`;
        return status === 401 || status === 404
          ? refusedBy(
              detail,
              "set TELEGRAM_BOT_TOKEN (or channels.telegram.botTokenFile) to the token @BotFather gave",
            )
          : { ok: false, detail };
      }),
  };
}
