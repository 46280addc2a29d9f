/**
 * Readiness and reachability checks of a process: each enabled channel's inbound connections (for
 * `/readyz`), each platform's credentials (for `switchboard check`), and the depth of the runs queue
 * (a metrics sampler).
 */
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { ChannelAdapter } from "../../adapters/types.js";
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

/** Samples the number of wake jobs waiting in the runs queue (BullMQ prefix: the key prefix without its colon). */
export function queueDepthSampler(
  redis: Redis,
  prefix: string,
  queueName = "runs",
): { sample: () => Promise<number>; close: () => Promise<void> } {
  const queue = new Queue(queueName, {
    connection: redis,
    prefix: prefix.endsWith(":") ? prefix.slice(0, -1) : prefix,
  });
  queue.on("error", () => {});
  return {
    sample: () => queue.getWaitingCount(),
    close: () => queue.close(),
  };
}

async function answer(
  url: string,
  init: RequestInit,
  ok: (status: number, body: Record<string, unknown>) => ProbeResult,
): Promise<ProbeResult> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return ok(res.status, body);
}

/**
 * One probe per enabled platform that asks its API who the configured token belongs to
 * (Telegram `getMe`, Slack `auth.test`, Discord `users/@me`). Tokens travel only in the requests;
 * details say what answered, never the token.
 */
export function platformProbes(channels: ChannelsConfig): ReadinessProbe[] {
  const probes: ReadinessProbe[] = [];
  const tg = channels.telegram;
  if (tg.enabled && tg.botToken) {
    const token = tg.botToken;
    const root = (tg.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
    probes.push({
      name: "telegram",
      check: () =>
        answer(`${root}/bot${token}/getMe`, { method: "POST" }, (status, body) => {
          const result = body.result as { username?: string } | undefined;
          return body.ok === true
            ? { ok: true, detail: `bot @${result?.username ?? "?"}` }
            : { ok: false, detail: `HTTP ${status}: ${String(body.description ?? "no answer")}` };
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
          (status, body) =>
            body.ok === true
              ? {
                  ok: true,
                  detail: `team ${String(body.team_id ?? "?")}, bot user ${String(body.user_id ?? "?")}`,
                }
              : { ok: false, detail: `HTTP ${status}: ${String(body.error ?? "no answer")}` },
        ),
    });
  }
  const dc = channels.discord;
  if (dc.enabled && dc.botToken) {
    const token = dc.botToken;
    const api = (dc.apiUrl ?? "https://discord.com/api").replace(/\/+$/, "");
    probes.push({
      name: "discord",
      check: () =>
        answer(`${api}/v10/users/@me`, { headers: { authorization: `Bot ${token}` } }, (status, body) =>
          status === 200
            ? { ok: true, detail: `bot ${String(body.username ?? "?")}` }
            : { ok: false, detail: `HTTP ${status}: ${String(body.message ?? "no answer")}` },
        ),
    });
  }
  return probes;
}
