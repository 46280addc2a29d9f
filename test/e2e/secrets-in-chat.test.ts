/**
 * Secrets never reach a chat message. A tool result carries a Discord bot token and a GitHub token
 * (the agent wrote them into a file and read it back); the model repeats the result in its answer,
 * streamed a few characters at a time. On Telegram, Slack and Discord the answer arrives with the
 * tokens masked, and no request the bot made to any platform — first post, every edit, the tool
 * status lines — contains a token or even a few characters of one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi, RecordedRequest, ScriptedReply } from "../fakes/llm-server.js";
import { conversation, type PlatformName, waitForBot } from "./support/drivers.js";
import { World } from "./support/world.js";

const DISCORD_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789AB";
const GITHUB_TOKEN = "ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz";
/** The secret parts (the Discord token's first segment is the bot's public user id). */
const SECRET_PARTS = [DISCORD_TOKEN.slice(DISCORD_TOKEN.indexOf(".")), GITHUB_TOKEN.slice(4)];

/** Every 6-character piece of the tokens' secret parts: none may appear in anything sent to a platform. */
const PIECES = SECRET_PARTS.flatMap((s) => Array.from({ length: s.length - 5 }, (_, i) => s.slice(i, i + 6)));

let world: World;

/** The OpenAI chat completions messages of a request. */
function messagesOf(request: RecordedRequest): { role: string; content?: unknown; tool_calls?: unknown[] }[] {
  return (request.body.messages as { role: string; content?: unknown }[] | undefined) ?? [];
}

/**
 * The model: asked with `[creds]`, it writes the tokens into a file, reads the file back and then
 * answers with what the read returned, three characters per streamed delta.
 */
function credentialsModel(request: RecordedRequest): ScriptedReply {
  const messages = messagesOf(request);
  const toolResults = messages.filter((m) => m.role === "tool");
  if (toolResults.length === 0) {
    return {
      toolCalls: [
        {
          id: `call_w${messages.length}`,
          name: "write",
          args: {
            path: "creds.env",
            content: `DISCORD_BOT_TOKEN=${DISCORD_TOKEN}\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`,
          },
        },
      ],
    };
  }
  if (toolResults.length === 1) {
    return { toolCalls: [{ id: `call_r${messages.length}`, name: "read", args: { path: "creds.env" } }] };
  }
  const read = String(toolResults.at(-1)?.content ?? "");
  return { text: `The file holds:\n${read}\nKeep them safe.`, fragmentSize: 3 };
}

beforeAll(async () => {
  world = await World.create({ redis: false });
  world.llm.respondWith("openai-completions", credentialsModel);
  const app = await world.start("all");
  world.slack.eventsUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await world?.close();
});

/** Everything the bot sent to the three platforms, as one text. */
function everythingSent(): string {
  return JSON.stringify([world.telegram.calls, world.slack.api.calls, world.discord.rest.calls]);
}

const platforms: PlatformName[] = ["telegram", "slack", "discord"];

describe.each(platforms)("a tool result holding tokens, on %s", (platform) => {
  it("reaches the chat with the tokens masked, in every frame", async () => {
    const c = conversation(world, platform);
    await c.start(`[creds] store the credentials on ${platform}`);
    const answer = await waitForBot(
      c,
      (m) => m.text.includes("Keep them safe."),
      "the answer that repeats the tool result",
    );
    expect(answer.text).toContain("DISCORD_BOT_TOKEN=[redacted]");
    expect(answer.text).toContain("GITHUB_TOKEN=[redacted]");
    const sent = everythingSent();
    for (const piece of PIECES) expect(sent).not.toContain(piece);
    // The model did get the real values: the masking is in what is shown, not in the tools.
    const api: FakeApi = "openai-completions";
    expect(JSON.stringify(world.requests(api).at(-1)?.body)).toContain(GITHUB_TOKEN);
  });
});
