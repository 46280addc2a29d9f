/**
 * Who may use the web chat: only a browser that signed in with a one-time link, sending its
 * session cookie, and for writes the page's CSRF token from the page's own origin; on loopback only
 * requests that name a loopback host. Nothing else opens it: no bearer token, no guessed cookie, no
 * reused link.
 */
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { WebChatAdapter, type WebChatConfig } from "../../../src/adapters/web/index.js";
import { Received } from "../contract.js";
import { WebClient } from "./client.js";
import { serveWebChat, signIn, type WebServer } from "./harness.js";
import { openEventStream } from "./sse-client.js";

let adapter: WebChatAdapter;
let server: WebServer;
let received: Received;

async function setup(config: WebChatConfig = {}) {
  adapter = new WebChatAdapter({ admins: ["web:local"], ...config });
  received = new Received();
  await adapter.start(received);
  server = await serveWebChat(adapter);
}

afterEach(async () => {
  await adapter.stop();
  await server.close();
});

/** A raw request, so the Host header can be anything (fetch sets it from the URL). */
function rawGet(path: string, host: string, cookie = ""): Promise<number> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: Number(port), path, headers: { host, ...(cookie ? { cookie } : {}) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const post = (path: string, headers: Record<string, string>, body = "{}") =>
  fetch(`${server.url}${path}`, { method: "POST", headers, body, redirect: "manual" });

describe("web chat sign-in", () => {
  it("refuses everything without a session, and shows a sign-in form to a browser", async () => {
    await setup();
    const page = await fetch(`${server.url}/c/cabc123def`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(401);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/signin">');
    expect(html).toContain('name="next" value="/c/cabc123def"');
    expect(page.headers.get("content-security-policy")).toMatch(/form-action 'self'/);
    const api = await fetch(`${server.url}/api/conversations`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { message: string }).message).toMatch(/sign-in link/);
    expect((await post("/api/conversations", { "content-type": "application/json" })).status).toBe(401);
    const stream = await openEventStream(`${server.url}/api/events`);
    expect(stream.status).toBe(401);
    stream.close();
    expect(received.messages).toEqual([]);
  });

  it("turns a link into an HttpOnly SameSite=Strict session cookie, once", async () => {
    await setup();
    const link = await adapter.signInLink(`${server.url}/c/cabc123def`);
    expect(new URL(link).searchParams.get("token")).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const first = await fetch(link, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/c/cabc123def");
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(new RegExp(`^sb_web_${new URL(server.url).port}=`));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Path=\//);
    const jar = cookie.split(";")[0] as string;
    expect((await fetch(`${server.url}/api/conversations`, { headers: { cookie: jar } })).status).toBe(200);

    const again = await fetch(link, { redirect: "manual", headers: { accept: "text/html" } });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toMatch(/used already or has expired/);
  });

  it("signs in through the form with a pasted link or token, and goes back where the person was", async () => {
    await setup();
    const form = (token: string, next: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/signin`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ token, next }).toString(),
        redirect: "manual",
      });
    const link = await adapter.signInLink(`${server.url}/`);
    const pasted = await form(link, "/c/cabc123def");
    expect(pasted.status).toBe(303);
    expect(pasted.headers.get("location")).toBe("/c/cabc123def");
    expect(pasted.headers.get("set-cookie")).toMatch(/^sb_web_/);

    const token = new URL(await adapter.signInLink(`${server.url}/`)).searchParams.get("token") as string;
    const offsite = await form(token, "https://evil.example/", { origin: "https://evil.example" });
    expect(offsite.status).toBe(403);
    const bare = await form(token, "//evil.example/x");
    expect(bare.status).toBe(303);
    expect(bare.headers.get("location")).toBe("/");

    const wrong = await form("not-a-real-token-0000000000", "/");
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toMatch(/was used already, has expired or is wrong/);
  });

  it("accepts no bearer token, no made-up cookie and no cookie of another port", async () => {
    await setup();
    const client = await signIn(adapter, server.url);
    const value = client.cookie.split("=")[1];
    const attempts: Record<string, string>[] = [
      { authorization: "Bearer anything-at-all-0123456789" },
      { cookie: "sb_token=anything-at-all-0123456789" },
      { cookie: `sb_web_${new URL(server.url).port}=forged-session-0123456789` },
      { cookie: `sb_web_1=${value}` },
    ];
    for (const headers of attempts)
      expect([headers, (await fetch(`${server.url}/api/conversations`, { headers })).status]).toEqual([
        headers,
        401,
      ]);
  });

  it("ends a session on sign-out; a signed-in page can make a one-time link for another browser", async () => {
    await setup();
    const client = await signIn(adapter, server.url);
    const made = await client.call<{ url: string; expiresInMs: number }>("POST", "api/sign-in-links", {});
    expect(made.expiresInMs).toBe(15 * 60 * 1000);
    const other = await WebClient.open(made.url);
    expect((await other.request("GET", "api/conversations")).status).toBe(200);
    expect((await fetch(made.url, { redirect: "manual" })).status).toBe(401);
    expect((await client.request("POST", "api/sign-out", {})).status).toBe(200);
    expect((await client.request("GET", "api/conversations")).status).toBe(401);
    expect((await other.request("GET", "api/conversations")).status).toBe(200);
  });
});

describe("web chat writes", () => {
  it("need the page's CSRF token, from the page's origin, as JSON", async () => {
    await setup();
    const client = await signIn(adapter, server.url);
    const other = await signIn(adapter, server.url);
    const json = { "content-type": "application/json" };
    const cases: Array<[string, Record<string, string>, number]> = [
      ["no CSRF token", { cookie: client.cookie, ...json }, 403],
      ["a made-up token", { cookie: client.cookie, "x-csrf-token": "abc.def", ...json }, 403],
      ["another session's token", { cookie: client.cookie, "x-csrf-token": other.csrf, ...json }, 403],
      ["another site", client.headers({ ...json, origin: "https://evil.example" }), 403],
      ["an opaque origin", client.headers({ ...json, origin: "null" }), 403],
      ["a cross-site fetch", client.headers({ ...json, "sec-fetch-site": "cross-site" }), 403],
      ["a form body", client.headers({ "content-type": "application/x-www-form-urlencoded" }), 415],
      ["the page's own request", client.headers(json), 201],
    ];
    for (const [what, headers, expected] of cases)
      expect([what, (await post("/api/conversations", headers)).status]).toEqual([what, expected]);
    // Every page load gets a token of its own, and each works.
    const page = await fetch(`${server.url}/`, { headers: { cookie: client.cookie } });
    const csrf = /<meta name="sb-csrf" content="([^"]+)">/.exec(await page.text())?.[1] ?? "";
    expect(csrf).not.toBe(client.csrf);
    expect((await post("/api/conversations", { ...client.headers(json), "x-csrf-token": csrf })).status).toBe(
      201,
    );
  });
});

describe("web chat host names", () => {
  it("answers only loopback host names by default, even with a session (DNS rebinding)", async () => {
    await setup();
    const { cookie } = await signIn(adapter, server.url);
    const { port } = new URL(server.url);
    expect(await rawGet("/api/conversations", `localhost:${port}`, cookie)).toBe(200);
    expect(await rawGet("/api/conversations", `127.0.0.1:${port}`, cookie)).toBe(200);
    expect(await rawGet("/api/conversations", `[::1]:${port}`, cookie)).toBe(200);
    expect(await rawGet("/api/conversations", `attacker.example:${port}`, cookie)).toBe(403);
    expect(await rawGet("/api/conversations", `localhost.attacker.example:${port}`, cookie)).toBe(403);
    expect(await rawGet("/", `192.168.1.20:${port}`, cookie)).toBe(403);
  });

  it("answers other host names when the server is bound off loopback (then it has its token)", async () => {
    await setup({ isAllowedHost: () => true });
    expect(await rawGet("/api/conversations", "chat.internal")).toBe(401);
    const { port } = new URL(server.url);
    const { cookie } = await signIn(adapter, server.url);
    // The cookie is named after the port, whatever name the browser used for the host.
    expect(await rawGet("/api/conversations", `chat.internal:${port}`, cookie)).toBe(200);
  });
});

describe("web chat page", () => {
  it("is one self-contained document under a strict Content-Security-Policy, with its CSRF token", async () => {
    await setup();
    const client = await signIn(adapter, server.url);
    const res = await fetch(`${server.url}/`, { headers: { cookie: client.cookie } });
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/connect-src 'self'/);
    const html = await res.text();
    expect(html).toContain('<meta name="sb-base" content="/">');
    expect(html).toMatch(/<meta name="sb-csrf" content="[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+">/);
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="(?!data:)|https?:\/\/(?!127|www\.w3\.org)/);
    expect(html).toContain("function renderMarkdown");
    const conversationPage = await fetch(`${server.url}/c/cabc123def`, {
      headers: { cookie: client.cookie },
    });
    expect(conversationPage.status).toBe(200);
  });

  it("works when the gateway mounts it under a path, with the cookie limited to that path", async () => {
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
    const signed = await fetch(await adapter.signInLink(`${url}/chat`), { redirect: "manual" });
    expect(signed.headers.get("location")).toBe("/chat");
    expect(signed.headers.get("set-cookie")).toMatch(/Path=\/chat(;|$)/);
    const client = await signIn(adapter, url, "/chat/");
    for (const path of ["/chat", "/chat/"]) {
      const res = await fetch(`${url}${path}`, { headers: { cookie: client.cookie } });
      expect([path, res.status]).toEqual([path, 200]);
      expect(await res.text()).toContain('<meta name="sb-base" content="/chat/">');
    }
    expect((await client.request("POST", "api/conversations", {})).status).toBe(201);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/api/conversations`, { headers: { cookie: client.cookie } })).status).toBe(
      404,
    );
  });
});
