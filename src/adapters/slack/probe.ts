/**
 * The credential checks of `switchboard check` for Slack: `auth.test` with the bot token and, in
 * Socket Mode, `apps.connections.open` with the app-level token.
 */
import { askPlatform, refusedBy } from "../credential-probe.js";
import type { CredentialProbe } from "../types.js";

const SLACK_REFUSALS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
]);

function slackCall(
  api: string,
  method: string,
  token: string,
  ok: (body: Record<string, unknown>) => string,
  fix: string,
) {
  return () =>
    askPlatform(
      `${api}${method}`,
      { method: "POST", headers: { authorization: `Bearer ${token}` } },
      (status, body) => {
        if (body.ok === true) return { ok: true, detail: ok(body) };
        const detail = `HTTP ${status}: ${String(body.error ?? "no answer")}`;
        return SLACK_REFUSALS.has(String(body.error)) ? refusedBy(detail, fix) : { ok: false, detail };
      },
    );
}

/** The bot token's check, plus the app token's when `appToken` is given (Socket Mode). */
export function slackProbes(
  botToken: string,
  appToken: string | undefined,
  apiUrl: string | undefined,
): CredentialProbe[] {
  const api = (apiUrl ?? "https://slack.com/api/").replace(/\/*$/, "/");
  const probes: CredentialProbe[] = [
    {
      name: "slack",
      check: slackCall(
        api,
        "auth.test",
        botToken,
        (body) => `team ${String(body.team_id ?? "?")}, bot user ${String(body.user_id ?? "?")}`,
        "set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-…) of the installed app",
      ),
    },
  ];
  if (appToken) {
    probes.push({
      name: "slack app token",
      check: slackCall(
        api,
        "apps.connections.open",
        appToken,
        () => "Socket Mode connections allowed",
        "set SLACK_APP_TOKEN to an app-level token (xapp-…) with connections:write",
      ),
    });
  }
  return probes;
}
