/** Who may use the web chat: the access token, the loopback rule without one, same-origin writes, mounting. */
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { WebChatAdapter, type WebChatConfig } from "../../../src/adapters/web/index.js";
import { Received } from "../contract.js";
import { serveWebChat, type WebServer } from "./harness.js";
import { openEventStream } from "./sse-client.js";

const TOKEN = "s3cret-token-for-tests";

let adapter: WebChatAdapter;
let server: WebServer;
let received: Received;

async function setup(config: WebChatConfig) {
  adapter = new WebChatAdapter(config);
  received = new Received();
  await adapter.start(received);
  server = await serveWebChat(adapter);
}

afterEach(async () => {
  await adapter.stop();
  await server.close();
});

/** A raw request, so the Host header can be anything (fetch would set it from the URL). */
function rawGet(path: string, host: string): Promise<number> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: Number(port), path, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("web chat with an access token", () => {
  it("refuses requests without the token", async () => {
    await setup({ token: TOKEN });
    const api = await fetch(`${server.url}/api/conversations`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { message: string }).message).toMatch(/token/);
    const page = await fetch(`${server.url}/`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(401);
    expect(await page.text()).toMatch(/\?token=/);
    expect((await fetch(`${server.url}/?token=wrong`, { redirect: "manual" })).status).toBe(401);
    expect(
      (await fetch(`${server.url}/api/conversations`, { headers: { authorization: "Bearer wrong" } })).status,
    ).toBe(401);
  });

  it("accepts a Bearer header", async () => {
    await setup({ token: TOKEN });
    const res = await fetch(`${server.url}/api/conversations`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(201);
  });

  it("turns ?token= into a cookie, redirects without it, and then serves page, API and events", async () => {
    await setup({ token: TOKEN });
    const first = await fetch(`${server.url}/?token=${TOKEN}#c1`, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/");
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^sb_token=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const jar = cookie.split(";")[0] as string;
    const page = await fetch(`${server.url}/`, { headers: { cookie: jar } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>Switchboard</title>");
    const stream = await openEventStream(`${server.url}/api/events`, { cookie: jar });
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor((e) => e.event === "snapshot");
    } finally {
      stream.close();
    }
  });

  it("serves any host name when the token is required", async () => {
    await setup({ token: TOKEN });
    expect(await rawGet("/api/conversations", "chat.example.com")).toBe(401);
  });

  it("can use the gateway's own check instead", async () => {
    await setup({ isAuthorized: (req) => req.headers.get("x-gateway-ok") === "yes" });
    expect((await fetch(`${server.url}/api/conversations`)).status).toBe(401);
    expect(
      (await fetch(`${server.url}/api/conversations`, { headers: { "x-gateway-ok": "yes" } })).status,
    ).toBe(200);
  });
});

describe("web chat without an access token", () => {
  it("answers only requests addressed to this machine", async () => {
    await setup({});
    expect(await rawGet("/api/conversations", "localhost:8080")).toBe(200);
    expect(await rawGet("/api/conversations", "127.0.0.1")).toBe(200);
    expect(await rawGet("/api/conversations", "[::1]:8080")).toBe(200);
    expect(await rawGet("/api/conversations", "attacker.example")).toBe(403);
    expect(await rawGet("/", "192.168.1.20:8080")).toBe(403);
  });

  it("serves other host names when told to (behind an authenticating proxy)", async () => {
    await setup({ allowAnyHost: true });
    expect(await rawGet("/api/conversations", "chat.internal")).toBe(200);
  });

  it("refuses writes from another web site", async () => {
    await setup({});
    const post = (origin: string) =>
      fetch(`${server.url}/api/conversations`, {
        method: "POST",
        headers: { origin, "content-type": "application/json" },
        body: "{}",
      });
    expect((await post("https://evil.example")).status).toBe(403);
    expect((await post("null")).status).toBe(403);
    expect((await post(server.url)).status).toBe(201);
  });
});

describe("web chat page", () => {
  it("is one self-contained document under a strict Content-Security-Policy", async () => {
    await setup({});
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/connect-src 'self'/);
    const html = await res.text();
    expect(html).toContain('<meta name="sb-base" content="/">');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="(?!data:)|https?:\/\/(?!127|www\.w3\.org)/);
    expect(html).toContain("function renderMarkdown");
  });

  it("works when the gateway mounts it under a path", async () => {
    adapter = new WebChatAdapter({});
    await adapter.start(new Received());
    const root = new Hono();
    root.get("/healthz", (c) => c.json({ ok: true }));
    root.route("/chat", adapter.app());
    const s = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const srv = serve({ fetch: root.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(srv));
    });
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    server = { url, close: () => new Promise((r) => s.close(() => r())) };
    for (const path of ["/chat", "/chat/"]) {
      const res = await fetch(`${url}${path}`);
      expect([path, res.status]).toEqual([path, 200]);
      expect(await res.text()).toContain('<meta name="sb-base" content="/chat/">');
    }
    const created = await fetch(`${url}/chat/api/conversations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(created.status).toBe(201);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/api/conversations`)).status).toBe(404);
  });
});
