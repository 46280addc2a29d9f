/**
 * The web chat mounted in the gateway's HTTP server, as the wiring does it: routes (webhooks,
 * `/healthz`, `/readyz`, `/metrics`) are matched before the web chat whatever its path, and each keeps
 * its own authentication; without an access token every route answers loopback host names only.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { WebChatAdapter } from "../../../src/adapters/web/index.js";
import {
  createHttpServer,
  type GatewayEnv,
  type GatewayHttpServer,
  hostRule,
} from "../../../src/gateway/http/index.js";
import { silentProcessLogger } from "../../../src/gateway/log.js";
import { Received } from "../contract.js";
import { signIn } from "./harness.js";
import { openEventStream } from "./sse-client.js";

const TOKEN = "gateway-token-0123456789";
const SLACK_SECRET = "slack-signing-secret";
const open: Array<{ server: GatewayHttpServer; adapter: WebChatAdapter }> = [];

afterEach(async () => {
  for (const { server, adapter } of open.splice(0)) {
    await adapter.stop();
    await server.close();
  }
});

/**
 * A server like the gateway's: the web chat at `path`, and two webhook endpoints that check their
 * own secret (as Slack's signature and Telegram's secret header do), added before and after it.
 */
async function start(path: string, o: { token?: string; publicUrl?: string } = {}) {
  const server = createHttpServer({
    config: { host: "127.0.0.1", port: 0, ...o },
    logger: silentProcessLogger(),
  });
  server.route(
    "POST",
    "/slack/events",
    (c) =>
      c.req.header("x-slack-signature") === SLACK_SECRET
        ? c.json({ slack: "ok" })
        : c.json({ slack: "bad signature" }, 401),
    { public: true },
  );
  const adapter = new WebChatAdapter({ admins: ["web:local"], path, isAllowedHost: hostRule(o) });
  const received = new Received();
  await adapter.start(received);
  for (const m of adapter.mounts()) server.mount(m.prefix, m.app<GatewayEnv>(), { public: true });
  server.mountNode(
    "POST",
    "/telegram/webhook",
    (req, res) => {
      const ok = req.headers["x-telegram-bot-api-secret-token"] === "tg-secret";
      res
        .writeHead(ok ? 200 : 401, { "content-type": "application/json" })
        .end(JSON.stringify({ telegram: ok }));
    },
    { public: true },
  );
  const { url } = await server.listen();
  open.push({ server, adapter });
  return { url, adapter, received };
}

/** A raw request with any Host header (fetch sets it from the URL). */
function raw(url: string, method: string, path: string, host: string): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: Number(port), method, path, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe.each(["/", "/chat"])("routes beside the web chat at %s, with an access token", (path) => {
  const page = path === "/" ? "/" : `${path}/`;

  it("webhooks reach their handlers and keep their own checks; the token opens neither them nor the chat", async () => {
    const { url } = await start(path, { token: TOKEN });
    const slack = (signature: string) =>
      fetch(`${url}/slack/events`, {
        method: "POST",
        headers: { "x-slack-signature": signature },
        body: "{}",
      });
    expect(await (await slack(SLACK_SECRET)).json()).toEqual({ slack: "ok" });
    expect(await (await slack("forged")).json()).toEqual({ slack: "bad signature" });
    const telegram = (secret: string) =>
      fetch(`${url}/telegram/webhook`, {
        method: "POST",
        headers: { "x-telegram-bot-api-secret-token": secret },
        body: "{}",
      });
    expect((await telegram("tg-secret")).status).toBe(200);
    expect(await (await telegram("forged")).json()).toEqual({ telegram: false });
    const chat = await fetch(`${url}${page}api/conversations`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(chat.status).toBe(401);
    expect(((await chat.json()) as { message: string }).message).toMatch(/sign-in link/);
  });

  it("/healthz and /readyz answer without the token, /metrics only with it", async () => {
    const { url } = await start(path, { token: TOKEN });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, probes: [] });
    const refused = await fetch(`${url}/metrics`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { hint: string }).hint).toMatch(/Bearer/);
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# HELP /m);
  });

  it("the web chat signs in by itself: page, API and events work with its session alone", async () => {
    const { url, adapter, received } = await start(path, { token: TOKEN });
    const client = await signIn(adapter, url, page);
    const pageRes = await fetch(`${url}${path}`, { headers: { cookie: client.cookie } });
    expect(pageRes.status).toBe(200);
    expect(await pageRes.text()).toContain(`<meta name="sb-base" content="${page}">`);
    const { conversation } = await client.call<{ conversation: { id: string } }>(
      "POST",
      "api/conversations",
      {},
    );
    await client.call("POST", `api/conversations/${conversation.id}/messages`, { text: "hello" });
    expect(received.messages.map((m) => m.text)).toEqual(["hello"]);
    const stream = await openEventStream(`${url}${page}api/events`, { cookie: client.cookie });
    try {
      await stream.waitFor((e) => e.event === "snapshot");
    } finally {
      stream.close();
    }
  });
});

describe("routes without an access token (loopback)", () => {
  const cases: Array<[string, string]> = [
    ["GET", "/healthz"],
    ["GET", "/readyz"],
    ["GET", "/metrics"],
    ["POST", "/slack/events"],
    ["POST", "/telegram/webhook"],
    ["GET", "/"],
    ["GET", "/api/conversations"],
  ];

  it("answers every route only for loopback host names (DNS rebinding is refused)", async () => {
    const { url } = await start("/");
    const { port } = new URL(url);
    for (const [method, path] of cases) {
      for (const host of [
        `evil.example:${port}`,
        "evil.example",
        `127.0.0.1.evil.example:${port}`,
        `10.0.0.5:${port}`,
      ])
        expect([method, path, host, await raw(url, method, path, host)]).toEqual([method, path, host, 403]);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "localhost", `[::1]:${port}`])
        expect([method, path, host, await raw(url, method, path, host)]).not.toEqual([
          method,
          path,
          host,
          403,
        ]);
    }
    expect(await raw(url, "GET", "/metrics", `localhost:${port}`)).toBe(200);
  });

  it("also answers the host of http.publicUrl (a tunnel or proxy in front)", async () => {
    const { url } = await start("/", { publicUrl: "https://bot.example.com" });
    expect(await raw(url, "POST", "/telegram/webhook", "bot.example.com")).toBe(401);
    expect(await raw(url, "GET", "/healthz", "bot.example.com")).toBe(200);
    expect(await raw(url, "GET", "/healthz", "other.example.com")).toBe(403);
  });
});
