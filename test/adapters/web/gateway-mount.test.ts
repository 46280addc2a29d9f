/**
 * The web chat mounted in the gateway's HTTP server, as the wiring does it: the server's token guard
 * and the chat's own check agree on one token and one cookie, so a browser that opened the link
 * with `?token=` once can use the page, the API and the event stream.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WebChatAdapter } from "../../../src/adapters/web/index.js";
import {
  createHttpServer,
  type GatewayEnv,
  type GatewayHttpServer,
} from "../../../src/gateway/http/index.js";
import { silentLogger } from "../../../src/gateway/log.js";
import { Received } from "../contract.js";
import { openEventStream } from "./sse-client.js";

const TOKEN = "gateway-token-0123456789";
const open: Array<{ server: GatewayHttpServer; adapter: WebChatAdapter }> = [];

afterEach(async () => {
  for (const { server, adapter } of open.splice(0)) {
    await adapter.stop();
    await server.close();
  }
});

async function start(path: string, token?: string) {
  const server = createHttpServer({
    config: { host: "127.0.0.1", port: 0, ...(token ? { token } : {}) },
    logger: silentLogger(),
  });
  const adapter = new WebChatAdapter({ ...(token ? { token } : {}), admins: ["web:local"] });
  const received = new Received();
  await adapter.start(received);
  server.mount(path, adapter.app<GatewayEnv>());
  const { url } = await server.listen();
  open.push({ server, adapter });
  return { url, received };
}

describe("web chat in the gateway's HTTP server", () => {
  it("serves the page at the root next to /healthz, without a token on loopback", async () => {
    const { url, received } = await start("/");
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<meta name="sb-base" content="/">');
    const created = await fetch(`${url}/api/conversations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const { conversation } = (await created.json()) as { conversation: { id: string } };
    await fetch(`${url}/api/conversations/${conversation.id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "hello" }),
    });
    expect(received.messages.map((m) => m.text)).toEqual(["hello"]);
  });

  it("with a token: the link sets the cookie once, then page, API and events work", async () => {
    const { url } = await start("/chat", TOKEN);
    expect((await fetch(`${url}/chat/api/conversations`)).status).toBe(401);
    const link = await fetch(`${url}/chat?token=${TOKEN}`, { redirect: "manual" });
    expect(link.status).toBe(303);
    expect(link.headers.get("location")).toBe("/chat");
    const cookie = (link.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect(cookie).toMatch(/^sb_token=/);
    const page = await fetch(`${url}/chat`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<meta name="sb-base" content="/chat/">');
    const api = await fetch(`${url}/chat/api/conversations`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(api.status).toBe(200);
    const stream = await openEventStream(`${url}/chat/api/events`, { cookie });
    try {
      await stream.waitFor((e) => e.event === "snapshot");
    } finally {
      stream.close();
    }
  });
});
