/**
 * One process without Redis, as on a laptop: the embedded runtime with sessions as files, and the
 * web chat over its HTTP API (signed in with a one-time link). The page's user is the admin when none
 * is configured, so a reply streams in and a tool call that needs approval runs after the ✅ button;
 * the conversation is kept under ./data/web.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { WebClient } from "../adapters/web/client.js";
import { until, World } from "./support/world.js";

let world: World;
let app: Gateway;
let client: WebClient;

beforeAll(async () => {
  world = await World.create({ redis: false });
  app = await world.start("all", { channels: [], web: true });
  const web = app.web;
  if (!web || !app.webUrl) throw new Error("the web chat did not start");
  client = await WebClient.open(await web.signInLink(app.webUrl));
});
afterAll(async () => {
  await world?.close();
});

interface WebMessage {
  id: string;
  conversationId: string;
  from: { isBot: boolean };
  text: string;
  reactions: { emoji: string }[];
}

const api = <T>(path: string, body?: unknown): Promise<T> =>
  client.call<T>(body === undefined ? "GET" : "POST", path.replace(/^\//, ""), body);

async function botMessages(conversation: string): Promise<WebMessage[]> {
  const { messages } = await api<{ messages: WebMessage[] }>(`/api/conversations/${conversation}/messages`);
  return messages.filter((m) => m.from.isBot);
}

describe("web chat on the embedded runtime", () => {
  it("answers with the model's text and keeps the session in ./data", async () => {
    expect(app.webUrl).toBe(`${app.url}/`);
    const { conversation } = await api<{ conversation: { id: string; threadKey: string } }>(
      "/api/conversations",
      {},
    );
    await api(`/api/conversations/${conversation.id}/messages`, { text: "hello web" });
    await until(
      async () => (await botMessages(conversation.id)).some((m) => m.text === "alpha answers: hello web"),
      "the reply in the web chat",
    );
    expect(existsSync(join(world.dir, "data", "sessions"))).toBe(true);
    expect(existsSync(join(world.dir, "data", "web", `${conversation.id}.jsonl`))).toBe(true);
    const meta = await app.store.getThreadMeta(conversation.threadKey);
    expect(meta?.currentSessionId).toBeDefined();
  });

  it("runs a call that needs approval after the page's ✅", async () => {
    const { conversation } = await api<{ conversation: { id: string } }>("/api/conversations", {});
    await api(`/api/conversations/${conversation.id}/messages`, { text: "[rm] tidy the workspace" });
    const request = await until(async () => {
      const m = (await botMessages(conversation.id)).find((b) => b.text.includes("Approval needed"));
      return m?.reactions.some((r) => r.emoji === "♾️") ? m : undefined;
    }, "the approval request with its buttons");

    await api(`/api/conversations/${conversation.id}/messages/${request.id}/reactions`, { emoji: "✅" });
    await until(
      async () =>
        (await botMessages(conversation.id)).some(
          (m) => m.text.includes("saw the tool result") && m.text.includes("removed"),
        ),
      "the answer after the approved call",
    );
    const edited = (await botMessages(conversation.id)).find((m) => m.id === request.id);
    expect(edited?.text).toContain("Approved by you");
  });

  it("decides nothing with a ✅ in another conversation on a message of the same number", async () => {
    const { conversation } = await api<{ conversation: { id: string } }>("/api/conversations", {});
    await api(`/api/conversations/${conversation.id}/messages`, { text: "[rm] tidy again" });
    const request = await until(async () => {
      const m = (await botMessages(conversation.id)).find((b) => b.text.includes("Approval needed"));
      return m?.reactions.some((r) => r.emoji === "♾️") ? m : undefined;
    }, "the approval request with its buttons");
    // Message numbers are per conversation: the other conversation gets a message numbered like
    // the request, and ✅ on it is a reaction in that conversation only.
    const other = await api<{ conversation: { id: string; threadKey: string } }>("/api/conversations", {});
    const web = app.web;
    if (!web) throw new Error("no web chat");
    for (let ref = ""; !ref.endsWith(`:${request.id}`); )
      ref = await web.post(other.conversation.threadKey, "a message numbered like the request");
    await api(`/api/conversations/${other.conversation.id}/messages/${request.id}/reactions`, {
      emoji: "✅",
    });
    // Had that approved the call, this ❌ would come too late and the call would have run.
    await api(`/api/conversations/${conversation.id}/messages/${request.id}/reactions`, { emoji: "❌" });
    const answer = await until(
      async () => (await botMessages(conversation.id)).find((m) => m.text.includes("saw the tool result")),
      "the answer after the denial",
    );
    expect(answer.text.toLowerCase()).toContain("denied");
    expect(answer.text).not.toContain("removed");
  });

  it("keeps a picture sent from the page under ./data/web/files, and tells the user once that a text-only model cannot see it", async () => {
    const { conversation } = await api<{ conversation: { id: string } }>("/api/conversations", {});
    const picture = Buffer.from(
      "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
        "1f15c4890000000d49444154789c6360000002000005000100db5e09460000000049454e44ae426082",
      "hex",
    );
    const file = await client.upload(conversation.id, "dot.png", picture);
    expect(file).toMatchObject({ name: "dot.png", size: picture.length, type: "image/png" });
    expect(existsSync(join(world.dir, "data", "web", "files", conversation.id, file.id))).toBe(true);
    await api(`/api/conversations/${conversation.id}/messages`, { text: "see?", files: [file] });
    const notice = await until(
      async () => (await botMessages(conversation.id)).find((m) => m.text.includes("cannot see pictures")),
      "the notice",
    );
    expect(notice.text).toContain("dot.png");
    await until(
      async () => (await botMessages(conversation.id)).some((m) => m.text.startsWith("alpha answers:")),
      "the answer",
    );
    const last = world.requests("openai-completions").at(-1);
    expect(last?.images).toEqual([]);
    expect(JSON.stringify(last?.body)).toMatch(
      /at attachments\/[^ ]+\/dot\.png; the current model cannot see pictures/,
    );
  });
});
