/**
 * What the web chat keeps of what a person types, through its HTTP API as the page uses it: control
 * characters and NUL are made visible (the page, the agent and the title show the same symbols),
 * lone surrogates become "�", a title never holds a control character or a bidirectional override,
 * and a first message the chat refuses starts no conversation.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebChatAdapter, type WebConversation, type WebMessage } from "../../../src/adapters/web/index.js";
import { titleText, visibleText } from "../../../src/adapters/web/input.js";
import { Received } from "../contract.js";
import type { WebClient } from "./client.js";
import { serveWebChat, signIn, type WebServer } from "./harness.js";

let adapter: WebChatAdapter;
let received: Received;
let server: WebServer;
let client: WebClient;

beforeEach(async () => {
  adapter = new WebChatAdapter({ admins: ["web:local"], maxInputChars: 100 });
  received = new Received();
  await adapter.start(received);
  server = await serveWebChat(adapter);
  client = await signIn(adapter, server.url);
});
afterEach(async () => {
  await adapter.stop();
  await server.close();
});

/** A first message that starts its conversation, as the page sends it. */
const start = (text: string, extra: Record<string, unknown> = {}) =>
  client.request("POST", "api/conversations", { text, ...extra });

describe("web chat input", () => {
  it("makes control characters and NUL visible, in the message, what the agent gets, and the title", async () => {
    const res = await start("ls \u0000 -la\u001b[0m\u0007\tdone\r\nnext line");
    expect(res.status).toBe(201);
    const { conversation, message } = (await res.json()) as {
      conversation: WebConversation;
      message: WebMessage;
    };
    expect(message.text).toBe("ls ␀ -la␛[0m␇\tdone\r\nnext line");
    expect(received.messages[0]?.text).toBe("ls ␀ -la␛[0m␇\tdone\r\nnext line");
    expect(conversation.title).toBe("ls ␀ -la␛[0m␇ done next line");
    const { conversations } = await client.call<{ conversations: WebConversation[] }>(
      "GET",
      "api/conversations",
    );
    expect(conversations.map((c) => c.title)).toEqual([conversation.title]);
  });

  it("replaces lone surrogates and keeps whole emoji", async () => {
    // JSON can carry a lone surrogate (\ud83d alone), as a broken paste sends it.
    const raw = await fetch(`${server.url}/api/conversations`, {
      method: "POST",
      headers: client.headers({ "content-type": "application/json" }),
      body: '{"text":"broken \\ud83d paste, whole 👋🏽"}',
    });
    const { message } = (await raw.json()) as { message: WebMessage };
    expect(message.text).toBe("broken � paste, whole 👋🏽");
  });

  it("a title asked for loses control characters and bidirectional overrides", async () => {
    const { conversation } = await client.call<{ conversation: WebConversation }>(
      "POST",
      "api/conversations",
      {
        title: "pay\u202Egnp.exe\u0000",
      },
    );
    expect(conversation.title).toBe("paygnp.exe␀");
    expect(titleText("\u2066\u0007\u2069")).toBe("␇");
    expect(titleText("\u202a \u202c")).toBeUndefined();
    expect(visibleText("tab\tand\nnewline")).toBe("tab\tand\nnewline");
  });

  it("a refused first message starts no conversation", async () => {
    for (const text of ["   ", "x".repeat(101)]) {
      const res = await start(text);
      expect([400, 413]).toContain(res.status);
      expect(((await res.json()) as { message: string }).message).toMatch(/empty|at most 100/);
    }
    const { conversations } = await client.call<{ conversations: WebConversation[] }>(
      "GET",
      "api/conversations",
    );
    expect(conversations).toEqual([]);
    expect(received.messages).toEqual([]);
  });
});
