/**
 * What each platform's files demand, against its fake: Slack serves a file only for the bot token
 * (a client without it gets a sign-in page, which must not be saved as the file) and the token goes
 * to no other host; Discord's signed links expire and are refreshed; each platform's size limits
 * come back as `too_long`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SlackAdapter } from "../../src/adapters/slack/index.js";
import { type AttachmentRef, ChannelError, type InboundMessage } from "../../src/adapters/types.js";
import type { ContractHarness } from "./contract.js";
import { createDiscordHarness, type DiscordHarness } from "./harness/discord.js";
import { createSlackHarness, type SlackHarness } from "./harness/slack.js";
import { until } from "./support/drive.js";
import { createTelegramHarness } from "./telegram/harness.js";

async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

let h: ContractHarness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function posted(harness: ContractHarness, bytes: Buffer, name = "f.bin"): Promise<InboundMessage> {
  await harness.fileMessage?.({ text: "here", name, bytes, mimeType: "application/octet-stream" });
  await until(() => harness.received.messages.length > 0, 5000, "the message with its file");
  return harness.received.messages.at(-1) as InboundMessage;
}

function fileOf(bytes: number): { path: string; name: string; sizeBytes: number } {
  const dir = mkdtempSync(join(tmpdir(), "sb-pf-"));
  dirs.push(dir);
  const path = join(dir, "out.bin");
  writeFileSync(path, Buffer.alloc(bytes, 3));
  return { path, name: "out.bin", sizeBytes: bytes };
}

describe("Slack files", () => {
  it("are served only for the bot token: without it Slack's sign-in page is refused, not saved", async () => {
    const slack = (await createSlackHarness({ mode: "socket" })) as SlackHarness;
    h = slack;
    const m = await posted(slack, Buffer.from("secret numbers"));
    const ref = m.attachments[0] as AttachmentRef;
    expect(ref.url).toMatch(/\/files-pri\//);
    const wrong = new SlackAdapter({ botToken: "xoxb-not-the-token", apiUrl: slack.fake.apiUrl });
    const refused = await wrong.download(ref).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChannelError);
    expect((refused as ChannelError).kind).toBe("forbidden");
    expect((refused as ChannelError).message).toMatch(/sign-in page .*files:read/);
    expect((await bytesOf((await slack.adapter.download(ref)).body)).toString()).toBe("secret numbers");
  });

  it("never sends the bot token to an address that is not Slack's", async () => {
    const slack = (await createSlackHarness({ mode: "socket" })) as SlackHarness;
    h = slack;
    const refused = await slack.adapter
      .download({ id: "F1", kind: "file", url: "https://files.example.com/steal" })
      .catch((e: unknown) => e);
    expect((refused as ChannelError).message).toMatch(/not Slack's; the bot token is not sent there/);
  });

  it("refuses an upload larger than Slack takes", async () => {
    const slack = (await createSlackHarness({ mode: "socket" })) as SlackHarness;
    h = slack;
    slack.fake.files.maxUploadBytes = 1000;
    await slack.groupMessage({ text: "go", mention: true });
    await until(() => slack.received.messages.length === 1, 5000, "the mention");
    const threadKey = (slack.received.messages[0] as InboundMessage).threadKey;
    const refused = await slack.adapter.uploadFile(threadKey, fileOf(2000)).catch((e: unknown) => e);
    expect((refused as ChannelError).message).toMatch(/file_too_large/);
  });
});

describe("Discord files", () => {
  it("download through a link that expired: it is signed again and fetched", async () => {
    const discord = (await createDiscordHarness()) as DiscordHarness;
    h = discord;
    const m = await posted(discord, Buffer.from("old file"));
    await discord.clock.advance(25 * 3600_000);
    const file = await discord.adapter.download(m.attachments[0] as AttachmentRef);
    expect((await bytesOf(file.body)).toString()).toBe("old file");
    expect(discord.fake.rest.calls.some((c) => c.route === "POST /attachments/refresh-urls")).toBe(true);
  });

  it("refuses an upload larger than Discord takes from a bot, before sending it", async () => {
    const discord = (await createDiscordHarness()) as DiscordHarness;
    h = discord;
    await discord.groupMessage({ text: "go", mention: true });
    await until(() => discord.received.messages.length === 1, 5000, "the mention");
    const threadKey = (discord.received.messages[0] as InboundMessage).threadKey;
    const before = discord.fake.rest.calls.length;
    const refused = await discord.adapter
      .uploadFile(threadKey, fileOf(10 * 1024 * 1024 + 1))
      .catch((e: unknown) => e);
    expect((refused as ChannelError).kind).toBe("too_long");
    expect((refused as ChannelError).message).toMatch(/at most 10 MB/);
    expect(
      discord.fake.rest.calls.slice(before).filter((c) => c.route === "POST /channels/:id/messages"),
    ).toEqual([]);
  });
});

describe("Telegram files", () => {
  it("over the Bot API's 20 MB are refused by getFile, said as too long", async () => {
    const telegram = await createTelegramHarness();
    h = telegram;
    const m = await posted(telegram, Buffer.alloc(21 * 1024 * 1024, 1));
    const refused = await telegram.adapter
      .download?.(m.attachments[0] as AttachmentRef)
      .catch((e: unknown) => e);
    expect((refused as ChannelError).kind).toBe("too_long");
    expect((refused as ChannelError).message).toMatch(/file is too big/);
    expect((refused as ChannelError).message).not.toContain(telegram.fake.token);
  });
});
