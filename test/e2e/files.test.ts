/**
 * Files and pictures, both ways, on every platform, end to end: the fake platforms serve the files
 * people post only with the bot's credentials, Switchboard (Redis mode, one process) fetches them
 * into the thread's workspace, the fake model records the pictures it is shown, and the agent's
 * `send_file` lands in the thread as a file people can download.
 *
 * The fake model: `[csv]` asks for `read` of the file its message names; `[send]` writes
 * report.txt, then sends it with `send_file`; anything else is echoed. `beta/two` sees pictures,
 * `alpha/one` does not.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebClient } from "../adapters/web/client.js";
import type { FakeApi, RecordedRequest, ScriptedReply } from "../fakes/llm-server.js";
import { type Conversation, conversation, type PlatformName, waitForBot } from "./support/drivers.js";
import { lastUserText, until, World } from "./support/world.js";

let world: World;
let web: WebClient;
let seq = 0;

/** The name of the tool the request's last assistant turn called, and its result's text. */
function lastTool(request: RecordedRequest): { name: string; result: string } | undefined {
  const messages =
    (request.body.messages as Array<{ role: string; content: unknown; tool_calls?: unknown }>) ?? [];
  const last = messages.at(-1);
  const assistant = messages.at(-2);
  if (last?.role === "tool") {
    const calls = assistant?.tool_calls as Array<{ function: { name: string } }> | undefined;
    return { name: calls?.[0]?.function.name ?? "", result: String(last.content) };
  }
  if (last?.role === "user" && Array.isArray(last.content)) {
    const result = (last.content as Array<{ type: string; content?: unknown }>).find(
      (c) => c.type === "tool_result",
    );
    if (!result) return undefined;
    const use = ((assistant?.content ?? []) as Array<{ type: string; name?: string }>).find(
      (c) => c.type === "tool_use",
    );
    return { name: use?.name ?? "", result: JSON.stringify(result.content) };
  }
  return undefined;
}

function model(label: string) {
  return (request: RecordedRequest): ScriptedReply => {
    const tool = lastTool(request);
    const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
      toolCalls: [{ id: `call_${++seq}`, name, args }],
    });
    if (tool?.name === "write")
      return call("send_file", { path: "report.txt", caption: "Here is the report." });
    if (tool) return { text: `${label} saw the ${tool.name} result: ${tool.result.slice(0, 300)}` };
    const text = lastUserText(request);
    const path = /at (attachments\/\S+?)[;\]]/.exec(text)?.[1];
    if (text.includes("[csv]") && path) return call("read", { path });
    if (text.includes("[send]"))
      return call("write", { path: "report.txt", content: "totals: alpha 3, beta 5\n" });
    const tail = (text.split("\n").find((l) => !l.startsWith("[")) ?? "").replace(/^[\w.-]{1,64}: /, "");
    return { text: `${label} answers: ${tail}` };
  };
}

beforeAll(async () => {
  world = await World.create();
  world.llm.respondWith("openai-completions", model("alpha"));
  world.llm.respondWith("anthropic-messages", model("beta"));
  const app = await world.start("all", { maxFileMb: 0.05, web: true });
  world.slack.eventsUrl = `${app.url}/slack/events`;
  if (!app.web || !app.webUrl) throw new Error("the web chat did not start");
  web = await WebClient.open(await app.web.signInLink(app.webUrl));
});
afterAll(async () => {
  await world?.close();
});

const requests = (api: FakeApi) => world.requests(api);

/** The file at `attachments/*\/name` in any workspace, when there is one. */
function workspaceFile(name: string): Buffer | undefined {
  const root = join(world.dir, "workspaces");
  for (const ws of readdirSync(root)) {
    const dir = join(root, ws, "attachments");
    let messages: string[] = [];
    try {
      messages = readdirSync(dir);
    } catch {
      continue;
    }
    for (const m of messages) {
      try {
        return readFileSync(join(dir, m, name));
      } catch {}
    }
  }
  return undefined;
}

async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: "#36c" } })
    .png()
    .toBuffer();
}

const PLATFORMS: PlatformName[] = ["telegram", "slack", "discord"];

describe.each(PLATFORMS)("files on %s", (platform) => {
  let c: Conversation;
  const answer = (what: string, test: (t: string) => boolean) =>
    waitForBot(c, (m) => test(m.text), what, 30_000);

  it("shows a posted picture to a model that sees, and keeps it in the workspace at the path it names", async () => {
    c = conversation(world, platform);
    await c.start("hello");
    await answer("the first answer", (t) => t.includes("alpha answers: hello"));
    await c.command("model", "beta/two");
    await answer("the model switch", (t) => /beta\/two|Beta Two/.test(t));
    const picture = await png(40, 30);
    const before = requests("anthropic-messages").length;
    await c.attach(`what is in shot-${platform}.png?`, {
      name: `shot-${platform}.png`,
      bytes: picture,
      mimeType: "image/png",
    });
    await answer("the answer about the picture", (t) =>
      t.includes(`beta answers: what is in shot-${platform}.png?`),
    );
    const request = requests("anthropic-messages").slice(before).at(-1) as RecordedRequest;
    expect(request.images).toHaveLength(1);
    expect(request.images[0]?.mimeType).toBe("image/png");
    expect(request.images[0]?.bytes.equals(picture)).toBe(true);
    expect(lastUserText(request)).toMatch(
      new RegExp(`at attachments/[^/]+/shot-${platform}\\.png; shown below`),
    );
    expect(workspaceFile(`shot-${platform}.png`)?.equals(picture)).toBe(true);
  });

  it("lets a tool read a posted CSV from the path the model was given", async () => {
    await c.attach("[csv] sum this", {
      name: `data-${platform}.csv`,
      bytes: Buffer.from("name,count\nalpha,3\nbeta,5\n"),
      mimeType: "text/csv",
    });
    const shown = await answer("the read result", (t) => t.includes("beta saw the read result"));
    expect(shown.text).toContain("alpha,3");
  });

  it("says in the thread which files were too large or could not be downloaded, and why", async () => {
    c.loseFiles();
    await c.attach("two files", {
      name: `big-${platform}.bin`,
      bytes: Buffer.alloc(80_000, 7),
      mimeType: "application/octet-stream",
    });
    const notice = await answer("the notice", (t) => t.includes(`big-${platform}.bin`));
    expect(notice.text).toMatch(/larger than the 51 KB per file this channel takes/);
    await c.attach("this one vanishes", {
      name: `gone-${platform}.txt`,
      bytes: Buffer.from("soon gone"),
      mimeType: "text/plain",
    });
    c.loseFiles();
    const failed = await answer("the failed download's notice", (t) => t.includes(`gone-${platform}.txt`));
    expect(failed.text).toMatch(/the download failed/);
  });

  it("posts a file the agent made with send_file, which people can download", async () => {
    await c.attach("[send] the report please", {
      name: `note-${platform}.txt`,
      bytes: Buffer.from("x"),
      mimeType: "text/plain",
    });
    await answer("the tool result", (t) => t.includes("beta saw the send_file result"));
    const files = await until(() => {
      const f = c.botFiles().filter((x) => x.name === "report.txt");
      return f.length > 0 ? f : undefined;
    }, "the report in the thread");
    expect(files).toEqual([
      {
        name: "report.txt",
        bytes: Buffer.from("totals: alpha 3, beta 5\n"),
        caption: expect.stringContaining("Here is the report."),
      },
    ]);
  });

  it("tells the user once that a text-only model cannot see pictures, and gives the model the path", async () => {
    const t = conversation(world, platform);
    await t.start("hi again");
    await waitForBot(t, (m) => m.text.includes("alpha answers: hi again"), "the first answer");
    const before = requests("openai-completions").length;
    await t.attach("and this?", {
      name: `pic-${platform}.png`,
      bytes: await png(20, 20),
      mimeType: "image/png",
    });
    const notice = await waitForBot(t, (m) => m.text.includes("cannot see pictures"), "the notice");
    expect(notice.text).toContain(`pic-${platform}.png`);
    await waitForBot(t, (m) => m.text.includes("alpha answers: and this?"), "the answer");
    const request = requests("openai-completions").slice(before).at(-1) as RecordedRequest;
    expect(request.images).toEqual([]);
    expect(lastUserText(request)).toMatch(
      /at attachments\/\S+\/pic-\w+\.png; the current model cannot see pictures/,
    );
    await t.attach("one more", {
      name: `pic2-${platform}.png`,
      bytes: await png(20, 20),
      mimeType: "image/png",
    });
    await waitForBot(t, (m) => m.text.includes("alpha answers: one more"), "the second answer");
    expect(t.botMessages().filter((m) => m.text.includes("cannot see pictures"))).toHaveLength(1);
  });
});

describe("files in the web chat (Redis mode)", () => {
  interface Msg {
    id: string;
    from: { isBot: boolean };
    text: string;
    files?: Array<{ id: string; name: string; size: number; type: string }>;
  }
  let conversation: string;
  const messages = async () =>
    (await web.call<{ messages: Msg[] }>("GET", `api/conversations/${conversation}/messages`)).messages;
  const bot = (what: string, test: (m: Msg) => boolean) =>
    until(async () => (await messages()).find((m) => m.from.isBot && test(m)), what);
  const send = async (text: string, file?: { name: string; bytes: Buffer }) => {
    const files = file ? [await web.upload(conversation, file.name, file.bytes)] : [];
    await web.call("POST", `api/conversations/${conversation}/messages`, {
      text,
      ...(files.length ? { files } : {}),
    });
  };

  it("shows a picture sent from the page to a model that sees, and keeps it in the workspace", async () => {
    ({
      conversation: { id: conversation },
    } = await web.call<{ conversation: { id: string } }>("POST", "api/conversations", {}));
    await send("/model beta/two");
    await bot("the model switch", (m) => /beta\/two|Beta Two/.test(m.text));
    const picture = await png(30, 30);
    const before = requests("anthropic-messages").length;
    await send("what is this picture?", { name: "web-shot.png", bytes: picture });
    await bot("the answer", (m) => m.text.includes("beta answers: what is this picture?"));
    const request = requests("anthropic-messages").slice(before).at(-1) as RecordedRequest;
    expect(request.images.map((i) => i.bytes.equals(picture))).toEqual([true]);
    expect(workspaceFile("web-shot.png")?.equals(picture)).toBe(true);
  });

  it("lets a tool read a CSV sent from the page, and refuses an oversized upload with the reason", async () => {
    await send("[csv] add it up", { name: "web-data.csv", bytes: Buffer.from("name,count\ngamma,7\n") });
    const shown = await bot("the read result", (m) => m.text.includes("beta saw the read result"));
    expect(shown.text).toContain("gamma,7");
    await expect(web.upload(conversation, "huge.bin", Buffer.alloc(80_000, 1))).rejects.toThrow(
      /413.*larger than the 0\.1 MB the web chat takes|413.*larger than/,
    );
  });

  it("posts a file the agent sends, which the page downloads", async () => {
    await send("[send] the report");
    const m = await bot("the file", (x) => (x.files ?? []).some((f) => f.name === "report.txt"));
    expect(m.text).toContain("Here is the report.");
    const f = m.files?.[0] as { id: string };
    const res = await web.request("GET", `api/conversations/${conversation}/files/${f.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename\*=UTF-8''report\.txt$/);
    expect(await res.text()).toBe("totals: alpha 3, beta 5\n");
  });
});
