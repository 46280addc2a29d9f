/**
 * The attachment ingest on its own, with an adapter whose `download` serves bytes from memory: what
 * lands in the workspace, what the model is shown, and what the thread is told when a file cannot
 * be taken. The platforms' own downloads are checked by the adapter contract and the e2e tests.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type AttachmentRef,
  type ChannelAdapter,
  ChannelError,
  type DownloadedFile,
  type InboundMessage,
} from "../../src/adapters/types.js";
import { registerBuiltInApiProviders } from "../../src/agent/llm/providers/index.js";
import type { Model } from "../../src/agent/llm/types.js";
import { MemoryNoticeMemory } from "../../src/extensions/access/notices.js";
import { WorkspaceQuota } from "../../src/extensions/tools/quota.js";
import { ensureWorkspace } from "../../src/extensions/tools/workspace.js";
import { AttachmentIngester } from "../../src/queue/attachments/ingest.js";
import { DEFAULT_FILE_POLICY } from "../../src/queue/attachments/limits.js";
import type { IngestedMessage } from "../../src/queue/attachments/types.js";
import { plainInboundFormatter } from "../../src/queue/worker/item-messages.js";
import { startFakeLlmServer } from "../fakes/llm-server.js";

const model = (input: Model["input"]): Model => ({
  id: "m",
  name: "m",
  api: "openai-completions",
  provider: "test",
  baseUrl: "http://127.0.0.1:1",
  reasoning: false,
  input,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100_000,
  maxTokens: 1000,
});

async function* chunks(data: Buffer, size = 1000): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

/** An adapter whose files are buffers by id; `fail` makes a download of that id fail. */
function fileAdapter(files: Map<string, Buffer>, fail = new Map<string, Error>()): ChannelAdapter {
  return {
    platform: "web",
    capabilities: {
      maxMessageLength: 1000,
      editIntervalMs: 1000,
      markdown: "plain",
      nativeCommands: false,
      reactions: false,
      edits: false,
      typingDurationMs: 0,
      history: false,
      files: { maxDownloadBytes: 50_000_000, maxUploadBytes: 50_000_000 },
    },
    async download(ref: AttachmentRef): Promise<DownloadedFile> {
      const err = fail.get(ref.id);
      if (err) throw err;
      const data = files.get(ref.id);
      if (!data) throw new ChannelError("not_found", "no such file", "web");
      return { body: chunks(data) };
    },
  } as unknown as ChannelAdapter;
}

function message(attachments: AttachmentRef[], id = "web:c1:m7"): InboundMessage {
  return {
    platform: "web",
    threadKey: "web:c1",
    eventId: `e-${id}`,
    messageId: id,
    channelId: "c1",
    user: { id: "u", isBot: false },
    text: "look at this",
    attachments,
    mentioned: true,
    isDirect: true,
    timestamp: 1,
  };
}

describe("the attachment ingest", () => {
  let root: string;
  let notices: string[];
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "sb-ingest-"));
    notices = [];
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const ingester = (
    adapter: ChannelAdapter,
    extra: Partial<ConstructorParameters<typeof AttachmentIngester>[0]> = {},
  ) =>
    new AttachmentIngester({
      adapterOf: () => adapter,
      policyOf: () => ({ ...DEFAULT_FILE_POLICY, maxFileBytes: 100_000, maxMessageBytes: 150_000 }),
      workspaceOf: (t) => ensureWorkspace(root, t),
      notices: new MemoryNoticeMemory(),
      ...extra,
    });
  const run = (i: AttachmentIngester, m: InboundMessage, input: Model["input"] = ["text", "image"]) =>
    i.ingest({
      threadKey: m.threadKey,
      messages: [m],
      model: model(input),
      notify: async (t) => {
        notices.push(t);
      },
      signal: new AbortController().signal,
    });

  it("saves files under attachments/<message>/ with their type from the bytes, and shows pictures to a model that sees", async () => {
    const png = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: "#c00" } })
      .png()
      .toBuffer();
    const csv = Buffer.from("name,count\nalpha,3\nbeta,5\n");
    // The platform calls the picture a PDF and the CSV an image: the bytes decide.
    const i = ingester(
      fileAdapter(
        new Map([
          ["p", png],
          ["c", csv],
        ]),
      ),
    );
    const [m] = (await run(
      i,
      message([
        { id: "p", kind: "file", name: "../../etc/passwd shot.pdf", mimeType: "application/pdf" },
        { id: "c", kind: "image", name: "data.csv", mimeType: "image/png" },
      ]),
    )) as IngestedMessage[];
    const ws = await ensureWorkspace(root, "web:c1");
    expect(m?.files?.map((f) => [f.path, f.mimeType])).toEqual([
      ["attachments/c1_m7/passwd_shot.pdf", "image/png"],
      ["attachments/c1_m7/data.csv", "text/csv"],
    ]);
    expect(readFileSync(join(ws, "attachments/c1_m7/data.csv"), "utf8")).toBe(csv.toString());
    const image = m?.files?.[0]?.image;
    expect(image?.mimeType).toBe("image/png");
    const meta = await sharp(Buffer.from(image?.data ?? "", "base64")).metadata();
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(1568);
    expect((meta.width ?? 0) * (meta.height ?? 0)).toBeLessThanOrEqual(1_150_000);
    const user = plainInboundFormatter([m as InboundMessage]);
    expect(user.content).toEqual([
      {
        type: "text",
        text: expect.stringContaining("[picture: ../../etc/passwd shot.pdf (image/png, "),
      },
      image,
    ]);
    expect(JSON.stringify(user.content)).toContain("at attachments/c1_m7/data.csv]");
    expect(notices).toEqual([]);
  });

  it("refuses files over the limits and failed downloads, saying why in one notice and to the model", async () => {
    const big = Buffer.alloc(120_000, 1);
    const i = ingester(
      fileAdapter(
        new Map([
          ["big", big],
          ["liar", big],
          ["ok", Buffer.from("hello")],
        ]),
        new Map([["gone", new ChannelError("forbidden", "Slack answered 403", "slack")]]),
      ),
    );
    const [m] = (await run(
      i,
      message([
        { id: "big", kind: "file", name: "big.bin", sizeBytes: 120_000 },
        { id: "liar", kind: "file", name: "liar.bin", sizeBytes: 10 },
        { id: "gone", kind: "file", name: "gone.txt" },
        { id: "ok", kind: "file", name: "ok.txt" },
      ]),
    )) as IngestedMessage[];
    expect(m?.files?.map((f) => f.path ?? f.refused)).toEqual([
      expect.stringContaining("larger than the 98 KB per file"),
      expect.stringContaining("larger than the 98 KB per file"),
      expect.stringContaining("the download failed: web refused it"),
      "attachments/c1_m7/ok.txt",
    ]);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/could not take 3 of the 4 files/);
    expect(notices[0]).toContain("big.bin (117 KB)");
    const ws = await ensureWorkspace(root, "web:c1");
    // Nothing of the refused files stays behind, not even a partial download.
    expect(() => statSync(join(ws, "attachments/c1_m7/liar.bin"))).toThrow();
    const text = JSON.stringify(plainInboundFormatter([m as InboundMessage]).content);
    expect(text).toContain("[file not taken: gone.txt: the download failed");
  });

  it("takes no file the workspace quota has no room for, saying so", async () => {
    const i = ingester(
      fileAdapter(
        new Map([
          ["fits", Buffer.alloc(20_000, 1)],
          ["stated", Buffer.alloc(90_000, 1)],
          ["unstated", Buffer.alloc(90_000, 1)],
        ]),
      ),
      // 64 KB: du counts whole blocks, so a fresh workspace already uses a few of them.
      { quota: new WorkspaceQuota(64 / 1024) },
    );
    const [m] = (await run(
      i,
      message([
        { id: "fits", kind: "file", name: "fits.bin", sizeBytes: 20_000 },
        { id: "stated", kind: "file", name: "stated.bin", sizeBytes: 90_000 },
        { id: "unstated", kind: "file", name: "unstated.bin" },
      ]),
    )) as IngestedMessage[];
    expect(m?.files?.map((f) => f.path ?? f.refused)).toEqual([
      "attachments/c1_m7/fits.bin",
      expect.stringMatching(
        /the thread's workspace has .* left of its 0\.0625 MB quota \(tools\.sandbox\.limits\.workspaceMb\)/,
      ),
      expect.stringMatching(/the thread's workspace has .* left of its 0\.0625 MB quota/),
    ]);
    expect(notices).toHaveLength(1);
  });

  it("tells a thread once that its model cannot see pictures, and gives the model the path", async () => {
    const png = await sharp({ create: { width: 10, height: 10, channels: 4, background: "#0c0" } })
      .png()
      .toBuffer();
    const i = ingester(fileAdapter(new Map([["p", png]])));
    const [a] = (await run(i, message([{ id: "p", kind: "image", name: "shot.png" }]), [
      "text",
    ])) as IngestedMessage[];
    await run(i, message([{ id: "p", kind: "image", name: "again.png" }], "web:c1:m8"), ["text"]);
    expect(notices).toEqual([expect.stringContaining("The model test/m cannot see pictures")]);
    expect(a?.files?.[0]).toMatchObject({ path: "attachments/c1_m7/shot.png", mimeType: "image/png" });
    expect(a?.files?.[0]?.image).toBeUndefined();
    expect(JSON.stringify(plainInboundFormatter([a as InboundMessage]).content)).toContain(
      "the current model cannot see pictures",
    );
  });

  it("never writes through a symlink that leads out of the workspace", async () => {
    const ws = await ensureWorkspace(root, "web:c1");
    const outside = join(root, "outside");
    await mkdir(outside);
    symlinkSync(outside, join(ws, "attachments"));
    const i = ingester(fileAdapter(new Map([["ok", Buffer.from("x")]])));
    const [m] = (await run(i, message([{ id: "ok", kind: "file", name: "ok.txt" }]))) as IngestedMessage[];
    expect(m?.files?.[0]?.refused).toMatch(/could not be saved .*symlink/);
    expect(notices).toHaveLength(1);
  });

  it("has models.vision describe a picture for a model that cannot see, and tells the thread once", async () => {
    registerBuiltInApiProviders();
    const llm = await startFakeLlmServer();
    try {
      llm.enqueue("openai-completions", { text: "A red square with the word STOP in white." });
      const vision: Model = {
        ...model(["text", "image"]),
        provider: "eye",
        id: "v1",
        baseUrl: llm.baseUrl("openai-completions"),
      };
      const png = await sharp({ create: { width: 12, height: 12, channels: 3, background: "#c00" } })
        .png()
        .toBuffer();
      const i = ingester(fileAdapter(new Map([["p", png]])), { vision });
      const [m] = (await run(i, message([{ id: "p", kind: "image", name: "sign.png" }]), [
        "text",
      ])) as IngestedMessage[];
      expect(m?.files?.[0]?.description).toBe("A red square with the word STOP in white.");
      expect(m?.files?.[0]?.image).toBeUndefined();
      // The vision model was shown the picture; the thread's model gets the description and the path.
      expect(llm.requests[0]?.images.map((x) => x.mimeType)).toEqual(["image/png"]);
      const text = JSON.stringify(plainInboundFormatter([m as InboundMessage]).content);
      expect(text).toContain(
        "at attachments/c1_m7/sign.png; you cannot see pictures, so here is a description of it:",
      );
      expect(text).toContain("STOP in white");
      expect(notices).toEqual([expect.stringContaining("eye/v1 describes sign.png for it")]);
    } finally {
      await llm.close();
    }
  });
});
