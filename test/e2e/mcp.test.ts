// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config text with ${VAR} references
/**
 * MCP servers end to end: `switchboard start` as a child process with a config naming four
 * servers (the fake team server and the reference everything server over stdio in the sandbox, a
 * server that cannot start, the team server over Streamable HTTP), the Telegram fake, and a fake
 * model that makes the tool calls a message asks for. What a chat user and an operator meet: a tool
 * call round trip, approval asked and honoured, a broken server reported once while the others
 * work, a crash contained, `/stop` cancelling a slow call (the server hears it), credentials kept
 * to their server and masked, `/tools`, the metrics, and `switchboard check` listing each server's
 * tools. And the MCP example of docs/tools.md passes `check`.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RemoteTeamServer } from "../fakes/mcp/remote.js";
import { BOT_USERNAME, type FakeChat } from "../fakes/telegram/server.js";
import { bwrapUnavailable } from "../support/sandbox.js";
import { CliProcess } from "./support/cli-process.js";
import { switchboard } from "./support/cli-run.js";
import { resultsFor, toolScript } from "./support/tool-script.js";
import { TG_USERS, until, World } from "./support/world.js";

const unavailable = await bwrapUnavailable();
const repo = join(import.meta.dirname, "..", "..");
const modules = join(repo, "node_modules");
const fakes = join(repo, "test", "fakes", "mcp");
const everything = join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js");
const TEAM_TOKEN = "team-secret-e2e-31";
const REMOTE_TOKEN = "remote-secret-e2e-42";

let world: World;
let remote: RemoteTeamServer;
let p: CliProcess;
let url = "";
let seq = 0;
let chatSeq = 0;

const newChat = (): FakeChat => ({ id: -100900000 - ++chatSeq, type: "supergroup", title: `MCP ${chatSeq}` });
const env = () => ({ ...world.env(), TEAM_TOKEN, REMOTE_TOKEN });

function configText(): string {
  const tools = [
    "tools:",
    "  sandbox:",
    "    mode: bwrap",
    `    readOnlyPaths: [${modules}, ${fakes}]`,
    "  mcp:",
    "    servers:",
    "      - name: team",
    `        command: [node, ${join(fakes, "team-server.mjs")}]`,
    "        trusted: true",
    '        env: { TEAM_TOKEN: "${TEAM_TOKEN}" }',
    "      - name: every",
    `        command: [node, ${everything}, stdio]`,
    "        toolApproval: { get-env: allow }",
    "      - name: broken",
    `        command: [node, ${join(fakes, "team-server.mjs")}, --fail-start]`,
    "      - name: remote",
    `        url: ${remote.url}`,
    '        headers: { Authorization: "Bearer ${REMOTE_TOKEN}" }',
    "        trusted: true",
    "        channels: [telegram]",
  ];
  return `${world.yaml({ channels: ["telegram"], logLevel: "info" })}\n${tools.join("\n")}\n`;
}

/** Sends `run: calls` in `chat` and waits for the tool results the model got. */
async function runTools(chat: FakeChat, calls: unknown[], replyTo?: number): Promise<string[]> {
  const nonce = `#m${++seq}`;
  world.telegram.userMessage({
    chat,
    from: TG_USERS.alice,
    text: `${nonce} run: ${JSON.stringify(calls)}`,
    mention: true,
    ...(replyTo !== undefined ? { replyTo } : {}),
  });
  return until(() => resultsFor(world, nonce), `the tool results of ${nonce}`, 60_000);
}

const botTexts = (chat: FakeChat) => world.telegram.botMessages(chat.id).map((m) => m.text);

/** Every file name under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" });
}

beforeAll(async () => {
  world = await World.create();
  world.llm.respondWith("openai-completions", toolScript);
  remote = await RemoteTeamServer.start();
});
afterAll(async () => {
  await p?.stop();
  await remote?.close();
  await world?.close();
});

describe.skipIf(unavailable)("MCP servers through a chat", () => {
  let path: string;
  beforeAll(async () => {
    path = join(world.dir, "mcp.yaml");
    writeFileSync(path, configText());
    p = new CliProcess(["start", "--config", path], { cwd: world.dir, env: env() });
    const started = await p.waitForLog("switchboard started", { role: "all" });
    url = String(started.url);
  });

  it("a tool call round trip; the server that cannot start is reported once and the others work", async () => {
    const chat = newChat();
    const results = await runTools(chat, [{ name: "team_echo", args: { text: "hello team" } }]);
    expect(results).toEqual(["team echo: hello team"]);
    const done = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text === "done"),
      "the final answer",
    );
    const notices = () => botTexts(chat).filter((t) => t.includes('MCP server "broken" is unavailable'));
    expect(notices()).toHaveLength(1);
    expect(notices()[0]).toContain("TEAM_LICENSE is not set");
    // The same thread again (a reply to the answer): not told twice.
    expect(await runTools(chat, [{ name: "remote_echo", args: { text: "again" } }], done.message_id)).toEqual(
      ["team echo: again"],
    );
    expect(notices()).toHaveLength(1);
  });

  it("an untrusted server's tool waits for an admin; the admin's ✅ runs it", async () => {
    const chat = newChat();
    const nonce = `#m${++seq}`;
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `${nonce} run: ${JSON.stringify([{ name: "every_echo", args: { message: "approved echo" } }])}`,
      mention: true,
    });
    const request = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Approval needed")),
      "the approval request",
    );
    expect(request.text).toContain("every_echo");
    // Ready for a decision once the bot offered its reactions (the request is then tied to the message).
    await until(
      () => (world.telegram.message(chat.id, request.message_id)?.botReactions.length ?? 0) > 0,
      "the bot's reactions on the request",
    );
    expect(resultsFor(world, nonce)).toBeUndefined();
    world.telegram.reaction({ chat, from: TG_USERS.alice, messageId: request.message_id, emoji: "✅" });
    const results = await until(() => resultsFor(world, nonce), "the result after approval");
    expect(results).toEqual(["Echo: approved echo"]);
  });

  it("credentials reach their own server only, and are masked for the model and the chat", async () => {
    const chat = newChat();
    const results = await runTools(chat, [
      { name: "every_get-env", args: {} },
      { name: "team_env", args: {} },
      { name: "remote_whoami", args: {} },
    ]);
    const [everyEnv, teamEnv, whoami] = results;
    expect(everyEnv).not.toContain("TEAM_TOKEN");
    expect(everyEnv).not.toContain("REMOTE_TOKEN");
    expect(teamEnv).toMatch(/TEAM_TOKEN=\S/);
    expect(whoami).toMatch(/^authorization: \S/);
    const all = JSON.stringify(world.requests("openai-completions")) + JSON.stringify(botTexts(chat));
    expect(all).not.toContain(TEAM_TOKEN);
    expect(all).not.toContain(REMOTE_TOKEN);
    expect(remote.authorizations).toContain(`Bearer ${REMOTE_TOKEN}`);
  });

  it("/stop cancels a slow call at once and the server hears of it", async () => {
    const chat = newChat();
    const tag = `s${Date.now()}`;
    const asked = world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `#m${++seq} run: ${JSON.stringify([{ name: "team_slow", args: { tag } }])}`,
      mention: true,
    });
    const workspaces = join(world.dir, "workspaces");
    await until(
      () => filesUnder(workspaces).some((f) => f.endsWith(`slow-${tag}.started`)),
      "the slow call",
      60_000,
    );
    // In the run's thread: a reply to the message that started it.
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/stop@${BOT_USERNAME}`,
      replyTo: asked.message_id,
    });
    await until(
      () => filesUnder(workspaces).some((f) => f.endsWith(`slow-${tag}.cancelled`)),
      "the server's cancellation",
    );
  });

  it("/tools lists the thread's tools by server, and how each server stands", async () => {
    const chat = newChat();
    await runTools(chat, [{ name: "team_echo", args: { text: "warm up" } }]);
    world.telegram.command(chat, TG_USERS.alice, "tools", "", { addressed: true });
    const list = await until(
      () => botTexts(chat).find((t) => t.startsWith("Tools here:")),
      "the /tools reply",
    );
    expect(list).toContain("Built-in and extensions: bash");
    expect(list).toMatch(/MCP "team" \(local, in the thread's sandbox\): .*team_echo/);
    expect(list).toMatch(/MCP "every" .*every_echo \(asks\)/);
    expect(list).toMatch(/MCP "broken" .*unavailable/);
    expect(list).toMatch(/MCP "remote" \(remote\): .*remote_whoami/);
  });

  it("the metrics count MCP calls and server failures per server", async () => {
    const body = await (await fetch(`${url}/metrics`)).text();
    expect(body).toMatch(/switchboard_mcp_calls_total\{[^}]*server="team"[^}]*outcome="ok"[^}]*\} [1-9]/);
    expect(body).toMatch(/switchboard_mcp_server_failures_total\{[^}]*server="broken"[^}]*\} [1-9]/);
  });

  it("a crash is an error result the model reads; the other servers answer in the same turn", async () => {
    const chat = newChat();
    const results = await runTools(chat, [
      { name: "team_crash", args: {} },
      { name: "remote_echo", args: { text: "still here" } },
    ]);
    expect(results[0]).toMatch(/MCP server "team" stopped during the call \(exited with code 3/);
    expect(results[1]).toBe("team echo: still here");
  });

  it("switchboard check starts each server and lists its tools; the broken one fails the check", async () => {
    const r = await switchboard(["check", "--config", path], { cwd: world.dir, env: env() });
    expect(r.stdout).toMatch(/mcp team.*\d+ tools: team_echo/);
    expect(r.stdout).toMatch(/mcp remote: 9 tools: remote_echo/);
    expect(r.stdout).toMatch(/mcp broken.*TEAM_LICENSE is not set/);
    expect(r.code).toBe(1);
  });
});

describe("the MCP example in docs/tools.md", () => {
  it("passes switchboard check", async () => {
    const doc = readFileSync(join(repo, "docs", "tools.md"), "utf8");
    const section = doc.slice(doc.indexOf("## MCP servers"));
    const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const file = join(world.dir, "docs-mcp.yaml");
    writeFileSync(file, `${world.yaml({ channels: ["telegram"] })}\n${example}`);
    const r = await switchboard(["check", "--offline", "--config", file], {
      cwd: world.dir,
      env: { ...world.env(), LINEAR_API_KEY: "lin-key-for-the-docs", GITHUB_TOKEN: "gh-token-for-the-docs" },
    });
    expect(r.stderr + r.stdout).not.toMatch(/tools\.mcp/);
    expect(r.code).toBe(0);
  });
});
