import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpConfig } from "../../src/gateway/config/index.js";
import {
  createHttpServer,
  createMetrics,
  type GatewayEnv,
  type GatewayHttpServer,
  type ReadinessProbe,
} from "../../src/gateway/http/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";

const open: GatewayHttpServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function serve(http: Partial<HttpConfig> = {}, probes: ReadinessProbe[] = [], metrics = createMetrics()) {
  const server = createHttpServer({
    config: { host: "127.0.0.1", port: 0, ...http },
    logger: silentProcessLogger(),
    metrics,
    probes,
    probeTimeoutMs: 200,
  });
  open.push(server);
  return { server, metrics };
}

const probe = (name: string, ok: boolean, detail?: string): ReadinessProbe => ({
  name,
  check: async () => ({ ok, detail }),
});

describe("health and readiness", () => {
  it("/healthz answers while the process lives; /readyz aggregates the probes", async () => {
    const { server } = serve({}, [probe("redis", true, "PONG in 1 ms")]);
    server.addProbe(probe("slack", true, "socket connected"));
    const { url } = await server.listen();
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ok: true,
      probes: [
        { name: "redis", ok: true, detail: "PONG in 1 ms", ms: expect.any(Number) },
        { name: "slack", ok: true, detail: "socket connected", ms: expect.any(Number) },
      ],
    });
  });

  it("one failing, throwing or hanging probe makes /readyz 503 and says which", async () => {
    const { server } = serve({}, [
      probe("redis", true),
      {
        name: "telegram",
        check: async () =>
          Promise.reject(new Error("401 Unauthorized: bot123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")),
      },
      { name: "discord", check: () => new Promise(() => {}) },
    ]);
    const { url } = await server.listen();
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as {
      ok: boolean;
      probes: { name: string; ok: boolean; detail?: string }[];
    };
    expect(body.ok).toBe(false);
    expect(body.probes.map((p) => [p.name, p.ok])).toEqual([
      ["redis", true],
      ["telegram", false],
      ["discord", false],
    ]);
    expect(body.probes[1]?.detail).toBe("401 Unauthorized: bot[redacted]");
    expect(body.probes[2]?.detail).toBe("no answer within 200 ms");
  });

  it("draining at shutdown turns /readyz to 503 while /healthz stays 200", async () => {
    const { server } = serve();
    const { url } = await server.listen();
    server.setDraining();
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe("/metrics", () => {
  it("exposes the Switchboard metrics recorded through the typed helpers", async () => {
    const { server, metrics } = serve();
    metrics.inboundMessage("slack", "accepted");
    metrics.inboundMessage("slack", "accepted");
    metrics.inboundMessage("telegram", "duplicate");
    metrics.runStarted("slack");
    metrics.runFinished("slack", "completed", 2500);
    metrics.runStarted("telegram");
    metrics.llmUsage("anthropic", "claude-sonnet-4-5", {
      input: 1000,
      output: 200,
      cacheRead: 50,
      cacheWrite: 0,
      cost: { total: 0.0123 },
    });
    metrics.platformApiCall("telegram", "editMessageText", "ok");
    metrics.platformApiCall("telegram", "editMessageText", "rate_limited");
    metrics.approval("approved");
    metrics.approval("timeout");
    metrics.sampleQueueDepth(async () => 7);
    metrics.sampleActiveThreads(() => 3);
    const { url } = await server.listen();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const line of [
      'switchboard_inbound_messages_total{platform="slack",outcome="accepted"} 2',
      'switchboard_inbound_messages_total{platform="telegram",outcome="duplicate"} 1',
      'switchboard_runs_total{platform="slack",outcome="completed"} 1',
      'switchboard_runs_in_progress{platform="telegram"} 1',
      'switchboard_run_duration_seconds_count{platform="slack"} 1',
      'switchboard_queue_depth{queue="runs"} 7',
      "switchboard_active_threads 3",
      'switchboard_llm_tokens_total{provider="anthropic",model="claude-sonnet-4-5",kind="input"} 1000',
      'switchboard_llm_tokens_total{provider="anthropic",model="claude-sonnet-4-5",kind="cache_read"} 50',
      'switchboard_llm_cost_usd_total{provider="anthropic",model="claude-sonnet-4-5"} 0.0123',
      'switchboard_platform_api_calls_total{platform="telegram",method="editMessageText",outcome="rate_limited"} 1',
      'switchboard_platform_rate_limited_total{platform="telegram",method="editMessageText"} 1',
      'switchboard_approvals_total{outcome="approved"} 1',
      'switchboard_approvals_total{outcome="timeout"} 1',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).toContain("switchboard_process_resident_memory_bytes");
  });

  it("a failing sampler keeps the last value and does not break the scrape", async () => {
    const { server, metrics } = serve({}, [], createMetrics({ processMetrics: false }));
    metrics.setQueueDepth(4);
    metrics.sampleQueueDepth(() => {
      throw new Error("redis down");
    });
    const { url } = await server.listen();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('switchboard_queue_depth{queue="runs"} 4');
  });
});

describe("routes mounted by the wiring code", () => {
  it("serves Hono routes, a sub-app at the root, and plain Node handlers, also when added after listen()", async () => {
    const { server } = serve();
    const { url } = await server.listen();
    const chat = new Hono<GatewayEnv>();
    chat.get("/", (c) => c.html("<h1>Switchboard</h1>"));
    chat.get("/api/conversations", (c) => c.json([]));
    server.mount("/", chat);
    server.route("GET", "/hello/:name", (c) => c.text(`hi ${c.req.param("name")}`));
    server.mountNode("POST", "/telegram/webhook", (req, res) => {
      let size = 0;
      req.on("data", (chunk: Buffer) => {
        size += chunk.length;
      });
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(`got ${size} bytes`);
      });
    });
    expect(await (await fetch(`${url}/`)).text()).toBe("<h1>Switchboard</h1>");
    expect(await (await fetch(`${url}/api/conversations`)).json()).toEqual([]);
    expect(await (await fetch(`${url}/hello/ada`)).text()).toBe("hi ada");
    const hook = await fetch(`${url}/telegram/webhook`, {
      method: "POST",
      body: JSON.stringify({ update_id: 1 }),
    });
    expect(await hook.text()).toBe("got 15 bytes");
    // Built-in routes come first: the root sub-app does not shadow them.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/nope`)).status).toBe(404);
  });

  it("a handler that throws gives 500 without details", async () => {
    const { server } = serve();
    server.route("GET", "/boom", () => {
      throw new Error("secret internals sk-abcdefghijklmnopqrstuvwxyz");
    });
    const { url } = await server.listen();
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "internal error" });
  });

  it("close() ends open event streams instead of waiting for them", async () => {
    const { server } = serve();
    server.route("GET", "/events", () => {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("data: hello\n\n"));
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const { url } = await server.listen();
    const res = await fetch(`${url}/events`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: hello\n\n");
    await server.close();
    await expect(reader.read()).rejects.toThrow();
  });
});

describe("access token", () => {
  const token = "s3cret-http-token-value";

  it("binding off loopback without a token is refused", async () => {
    const { server } = serve({ host: "0.0.0.0" });
    await expect(server.listen()).rejects.toThrow(/Refusing to bind 0\.0\.0\.0:0 without an access token/);
    expect(server.address).toBeUndefined();
  });

  it("with a token, everything but health needs it: bearer, cookie, or a one-time ?token= link", async () => {
    const { server } = serve({ token }, [probe("redis", false, "connection refused")]);
    const chat = new Hono<GatewayEnv>();
    chat.get("/", (c) => c.html("chat"));
    server.mount("/", chat);
    server.route("POST", "/slack/events", (c) => c.text("signed by slack"), { public: true });
    const { url } = await server.listen();

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ok: false, probes: [{ name: "redis", ok: false }] });
    const readyAuthed = await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${token}` } });
    expect(await readyAuthed.json()).toMatchObject({
      probes: [{ name: "redis", detail: "connection refused" }],
    });

    const denied = await fetch(`${url}/metrics`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
      200,
    );
    expect((await fetch(`${url}/`)).status).toBe(401);
    expect((await fetch(`${url}/`, { headers: { cookie: `sb_token=${token}` } })).status).toBe(200);
    expect((await fetch(`${url}/slack/events`, { method: "POST", body: "{}" })).status).toBe(200);

    const link = await fetch(`${url}/?token=${token}&c=42`, { redirect: "manual" });
    expect(link.status).toBe(303);
    expect(link.headers.get("location")).toBe("/?c=42");
    const cookie = link.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^sb_token=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const after = await fetch(`${url}/?c=42`, { headers: { cookie: cookie.split(";")[0] as string } });
    expect(await after.text()).toBe("chat");
    expect((await fetch(`${url}/?token=wrong`, { redirect: "manual" })).status).toBe(401);
  });

  it("a port in use gives a message saying what to do", async () => {
    const { server } = serve();
    const { port } = await server.listen();
    const { server: second } = serve({ port });
    await expect(second.listen()).rejects.toThrow(
      `Port ${port} on 127.0.0.1 is in use; stop the other process or set http.port.`,
    );
  });
});
