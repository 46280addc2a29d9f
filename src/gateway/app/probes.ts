/**
 * Readiness and reachability checks of a process: each enabled channel's inbound connections (for
 * `/readyz`) and each platform's credentials (for `switchboard check`).
 */
import type { ChannelAdapter } from "../../adapters/types.js";
import type { CheckProbe, CheckResult } from "../cli/types.js";
import type { ChannelsConfig } from "../config/types.js";
import type { ProbeResult, ReadinessProbe } from "../http/readiness.js";

/** Ready when every connection of `adapter` is up (a `standby` one: another gateway holds it). */
export function adapterProbe(adapter: ChannelAdapter): ReadinessProbe {
  return {
    name: adapter.platform,
    async check(): Promise<ProbeResult> {
      const connections = adapter.connections();
      if (connections.length === 0) return { ok: false, detail: "not started" };
      const bad = connections.filter((c) => !["connected", "standby", "idle"].includes(c.state));
      const detail = connections
        .map((c) => `${c.name}: ${c.state}${c.detail ? ` (${c.detail})` : ""}`)
        .join(", ");
      return { ok: bad.length === 0, detail };
    },
  };
}

async function answer(
  url: string,
  init: RequestInit,
  ok: (status: number, body: Record<string, unknown>) => CheckResult,
): Promise<CheckResult> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return ok(res.status, body);
}

/** A refused credential: a config error (`check` exits 2), with what to set. */
function refusedBy(detail: string, fix: string): CheckResult {
  return { ok: false, refused: true, detail: `${detail}: the token was refused; ${fix}` };
}

const SLACK_REFUSALS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
]);

/**
 * One check per enabled platform that asks its API who the configured token belongs to
 * (Telegram `getMe`, Slack `auth.test` and, in Socket Mode, `apps.connections.open` with the app
 * token, Discord `users/@me`). A token the API refuses is reported as `refused` with the variable to
 * fix. Tokens travel only in the requests; details say what answered, never the token.
 */
export function platformProbes(channels: ChannelsConfig): CheckProbe[] {
  const probes: CheckProbe[] = [];
  const tg = channels.telegram;
  if (tg.enabled && tg.botToken) {
    const token = tg.botToken;
    const root = (tg.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
    probes.push({
      name: "telegram",
      check: () =>
        answer(`${root}/bot${token}/getMe`, { method: "POST" }, (status, body) => {
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
    });
  }
  const sl = channels.slack;
  if (sl.enabled && sl.botToken) {
    const token = sl.botToken;
    const api = (sl.apiUrl ?? "https://slack.com/api/").replace(/\/*$/, "/");
    probes.push({
      name: "slack",
      check: () =>
        answer(
          `${api}auth.test`,
          { method: "POST", headers: { authorization: `Bearer ${token}` } },
          (status, body) => {
            if (body.ok === true) {
              return {
                ok: true,
                detail: `team ${String(body.team_id ?? "?")}, bot user ${String(body.user_id ?? "?")}`,
              };
            }
            const detail = `HTTP ${status}: ${String(body.error ?? "no answer")}`;
            return SLACK_REFUSALS.has(String(body.error))
              ? refusedBy(
                  detail,
                  "set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-…) of the installed app",
                )
              : { ok: false, detail };
          },
        ),
    });
    const appToken = sl.appToken;
    if (sl.mode === "socket" && appToken) {
      probes.push({
        name: "slack app token",
        check: () =>
          answer(
            `${api}apps.connections.open`,
            { method: "POST", headers: { authorization: `Bearer ${appToken}` } },
            (status, body) => {
              if (body.ok === true) return { ok: true, detail: "Socket Mode connections allowed" };
              const detail = `HTTP ${status}: ${String(body.error ?? "no answer")}`;
              return SLACK_REFUSALS.has(String(body.error))
                ? refusedBy(
                    detail,
                    "set SLACK_APP_TOKEN to an app-level token (xapp-…) with connections:write",
                  )
                : { ok: false, detail };
            },
          ),
      });
    }
  }
  const dc = channels.discord;
  if (dc.enabled && dc.botToken) {
    const token = dc.botToken;
    const api = (dc.apiUrl ?? "https://discord.com/api").replace(/\/+$/, "");
    probes.push({
      name: "discord",
      check: () =>
        answer(`${api}/v10/users/@me`, { headers: { authorization: `Bot ${token}` } }, (status, body) => {
          if (status === 200) return { ok: true, detail: `bot ${String(body.username ?? "?")}` };
          const detail = `HTTP ${status}: ${String(body.message ?? "no answer")}`;
          return status === 401
            ? refusedBy(detail, "set DISCORD_BOT_TOKEN to the token under Bot in the developer portal")
            : { ok: false, detail };
        }),
    });
  }
  return probes;
}
