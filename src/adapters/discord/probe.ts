/** The credential check of `switchboard check` for Discord: `users/@me` with the bot token. */
import { askPlatform, refusedBy } from "../credential-probe.js";
import type { CredentialProbe } from "../types.js";

/** Asks the REST API at `apiUrl` (default Discord's) who `token` belongs to. */
export function discordProbe(token: string, apiUrl: string | undefined): CredentialProbe {
  const api = (apiUrl ?? "https://discord.com/api").replace(/\/+$/, "");
  return {
    name: "discord",
    check: () =>
      askPlatform(`${api}/v10/users/@me`, { headers: { authorization: `Bot ${token}` } }, (status, body) => {
        if (status === 200) return { ok: true, detail: `bot ${String(body.username ?? "?")}` };
        const detail = `HTTP ${status}: ${String(body.message ?? "no answer")}`;
        return status === 401
          ? refusedBy(detail, "set DISCORD_BOT_TOKEN to the token under Bot in the developer portal")
          : { ok: false, detail };
      }),
  };
}
