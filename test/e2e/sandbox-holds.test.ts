/**
 * The sandbox in every deployment, tried the way the red team did: `switchboard start` as a child
 * process with a config, the Telegram fake, and a fake model that makes whatever tool calls the
 * message asks for. Each case failed on the code before issue 26:
 *
 * - a root gateway whose workspaces sit under a 0700 directory (this world's temporary directory)
 *   runs tools as nobody: bash cannot write /proc/sys;
 * - shared and memfd mappings past `memoryMb` fail;
 * - the workspace quota refuses writes;
 * - a variable the config reads a credential from is refused in `tools.sandbox.env` by `check`
 *   (exit 2) and `start` alike, naming the field it feeds; a configured secret a tool prints is
 *   masked for the model and the chat;
 * - a non-admin's sub-agent cannot run on a model the settings policy refuses them;
 * - a U+202E in a command shows as visible text in the approval prompt, and `/approval <id>` shows
 *   a long call whole.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT_USERNAME, type FakeChat } from "../fakes/telegram/server.js";
import { bwrapUnavailable } from "../support/sandbox.js";
import { CliProcess, MAIN } from "./support/cli-process.js";
import { resultsFor as resultsIn, toolScript } from "./support/tool-script.js";
import { TG_USERS, until, World } from "./support/world.js";

const unavailable = await bwrapUnavailable();
const asRoot = process.getuid?.() === 0;
const PYTHON = "/usr/bin/python3";
const PROXY_SECRET = "prx-7c1d-9e2f-secret";

let world: World;
const resultsFor = (nonce: string) => resultsIn(world, nonce);
let p: CliProcess;
let seq = 0;

let chatSeq = 0;
const newChat = (): FakeChat => ({
  id: -100800000 - ++chatSeq,
  type: "supergroup",
  title: `Holds ${chatSeq}`,
});

/** Sends `run: calls` from `from` in `chat` and waits for the tool results. */
async function runTools(chat: FakeChat, calls: unknown[], from = TG_USERS.alice): Promise<string[]> {
  const nonce = `#h${++seq}`;
  world.telegram.userMessage({ chat, from, text: `${nonce} run: ${JSON.stringify(calls)}`, mention: true });
  return until(() => resultsFor(nonce), `the tool results of ${nonce}`, 30_000);
}

/** The config: the world's, with this file's tools section and a proxy header read from a variable. */
function config(name: string, tools: string): string {
  const base = world
    .yaml({ channels: ["telegram"], logLevel: "info" })
    .replace(
      `      baseUrl: ${world.llm.baseUrl("openai-completions")}`,
      `      baseUrl: ${world.llm.baseUrl("openai-completions")}\n      headers:\n        X-Proxy-Auth: \${PROXY_AUTH}`,
    );
  const path = join(world.dir, name);
  writeFileSync(path, `${base}\ntools:\n${tools}\n`);
  return path;
}

const env = () => ({ ...world.env(), PROXY_AUTH: PROXY_SECRET, OTHER_VAR: "fine-to-pass" });

beforeAll(async () => {
  world = await World.create();
  world.llm.respondWith("openai-completions", toolScript);
  // The world's directory is mkdtemp's: 0700, root's alone. The workspaces live under it.
  expect(statSync(world.dir).mode & 0o777).toBe(0o700);
});
afterAll(async () => {
  await p?.stop();
  await world?.close();
});

describe.skipIf(unavailable)("a sandboxed gateway (tools.sandbox.mode: bwrap)", () => {
  beforeAll(async () => {
    p = new CliProcess(
      [
        "start",
        "--config",
        config(
          "holds.yaml",
          [
            "  sandbox:",
            "    mode: bwrap",
            "    env: [OTHER_VAR]",
            "    limits:",
            "      memoryMb: 256",
            "      workspaceMb: 8",
          ].join("\n"),
        ),
      ],
      { cwd: world.dir, env: env() },
    );
    await p.waitForLog("switchboard started", { role: "all" });
  });

  it.skipIf(!asRoot)(
    "as root, with workspaces under a 0700 directory, tools run as nobody: bash cannot write /proc/sys",
    async () => {
      const ready = await p.waitForLog("tool sandbox ready");
      expect(String(ready.sandbox)).toBe("sandboxed with bubblewrap (network none, as nobody)");
      const [out] = await runTools(newChat(), [
        {
          command:
            "id -u; echo 1 > /proc/sys/kernel/core_uses_pid && echo WROTE-PROC-SYS; cat /proc/self/uid_map | wc -l; touch owned && stat -c %u owned",
        },
      ]);
      const lines = (out ?? "").split("\n");
      expect(lines[0]).toBe("65534");
      expect(out).not.toContain("WROTE-PROC-SYS");
      expect(out).toContain("Permission denied");
      expect(lines).toContain("65534"); // the file it made belongs to nobody
    },
  );

  it.skipIf(!existsSync(PYTHON))("shared and memfd mappings past the memory limit fail", async () => {
    const map = (how: string) =>
      `${PYTHON} -c "import mmap, os; ${how}; m[::4096] = b'x' * ((600 << 20) // 4096); print('MAPPED')"`;
    const [shared, memfd] = await runTools(newChat(), [
      { command: map("m = mmap.mmap(-1, 600 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)") },
      {
        command: map("fd = os.memfd_create('x'); os.ftruncate(fd, 600 << 20); m = mmap.mmap(fd, 600 << 20)"),
      },
    ]);
    expect(shared).not.toContain("MAPPED");
    expect(shared).toContain(
      "A process could not get more memory: the limit is 256 MB of address space per process",
    );
    expect(memfd).not.toContain("MAPPED");
    expect(memfd).toMatch(/Operation not permitted|Cannot allocate memory/);
  });

  it("the workspace quota refuses writes, and deleting makes room again", async () => {
    const chat = newChat();
    const [bash, write, full, rm, again] = await runTools(chat, [
      { command: "head -c 12000000 /dev/zero > big.bin" },
      { name: "write", args: { path: "more.txt", content: "x".repeat(100) } },
      { command: "echo more >> notes.txt" },
      { command: "rm big.bin && echo REMOVED" },
      { command: "head -c 1000 /dev/zero > small.bin && echo ROOM-AGAIN" },
    ]);
    expect(bash).toContain(
      "The workspace uses 8.0 MB of its 8 MB quota (tools.sandbox.limits.workspaceMb), so writes are refused",
    );
    expect(write).toContain("past its 8 MB quota (tools.sandbox.limits.workspaceMb)");
    expect(full).toContain("so writes are refused");
    expect(rm).toContain("REMOVED");
    expect(again).toContain("ROOM-AGAIN");
  });

  it("a configured secret a tool prints reaches neither the model nor the chat", async () => {
    const chat = newChat();
    const [out] = await runTools(chat, [
      { command: `echo "$OTHER_VAR"; echo "${PROXY_SECRET}" | rev | rev; echo "$PROXY_AUTH"-unset` },
    ]);
    expect(out).toContain("fine-to-pass");
    expect(out).toContain("[redacted]");
    expect(out).not.toContain(PROXY_SECRET);
    expect(out).toContain("\n-unset");
    await until(() => world.telegram.botMessages(chat.id).some((m) => m.text === "done"), "the answer");
    // The tool line shows the command, which holds the secret: masked too.
    expect(JSON.stringify(world.telegram.botMessages(chat.id))).toContain("[redacted]");
    expect(JSON.stringify(world.telegram.botMessages(chat.id))).not.toContain(PROXY_SECRET);
  });

  it("a non-admin's sub-agent cannot run on a model the settings policy refuses; an admin's can", async () => {
    const chat = newChat();
    const call = { name: "spawn_sub_agent", args: { task: "say hi", model: "beta/two" } };
    const [refused] = await runTools(chat, [call], TG_USERS.bob);
    expect(refused).toContain(
      "beta/two was not used: the channel's settings policy does not let bob choose models here (only admins may)",
    );
    const before = world.requests("anthropic-messages").length;
    const [allowed] = await runTools(newChat(), [call], TG_USERS.alice);
    expect(allowed).toContain("beta answers");
    expect(world.requests("anthropic-messages").length).toBeGreaterThan(before);
  });

  it("a U+202E in a command shows as visible text in the approval prompt; /approval shows a long call whole", async () => {
    const chat = newChat();
    const nonce = `#h${++seq}`;
    const tail = "; echo THE-DANGEROUS-TAIL";
    const command = `rm -rf ./cache\u202E#txt.exe ${"x".repeat(3000)}${tail}`;
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `${nonce} run: ${JSON.stringify([{ command }])}`,
      mention: true,
    });
    const request = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Approval needed")),
      "the approval request",
    );
    expect(request.text).toContain("rm -rf ./cache⟨U+202E⟩#txt.exe");
    expect(request.text).not.toContain("\u202E");
    expect(request.text).toContain("THE-DANGEROUS-TAIL");
    const id = /\/approve ([a-z2-9]{6})/.exec(request.text)?.[1] ?? "";
    expect(request.text).toMatch(
      new RegExp(`characters not shown \\(\\d+ in all; /approval ${id} shows the whole call\\)`),
    );
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/approval@${BOT_USERNAME} ${id}`,
      replyTo: request.message_id,
    });
    const whole = await until(() => {
      const text = world.telegram
        .botMessages(chat.id)
        .filter((m) => m.message_id > request.message_id)
        .map((m) => m.text)
        .join("");
      return text.includes("THE-DANGEROUS-TAIL") && text;
    }, "the whole call");
    expect(whole).toContain("x".repeat(2000));
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/deny@${BOT_USERNAME} ${id}`,
      replyTo: request.message_id,
    });
    const results = await until(() => resultsFor(nonce), "the results after the denial");
    expect(results[0]).toMatch(/denied this bash call/);
  });
});

describe("a credential's variable in tools.sandbox.env", () => {
  it("is refused by check (exit 2) and start alike, naming the field it feeds", async () => {
    const path = config("leaky.yaml", "  sandbox:\n    mode: none\n    env: [OTHER_VAR, PROXY_AUTH]");
    const expected =
      "is PROXY_AUTH, which holds one of Switchboard's own credentials (it feeds models.custom[0].headers.X-Proxy-Auth)";
    const check = spawn(
      join(import.meta.dirname, "..", "..", "node_modules", ".bin", "tsx"),
      [MAIN, "check", "--offline", "--config", path],
      {
        cwd: world.dir,
        env: { PATH: process.env.PATH ?? "", HOME: world.dir, ...env() },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    check.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((r) => check.on("close", r));
    expect(code).toBe(2);
    expect(out).toContain("tools.sandbox.env[1]");
    expect(out).toContain(expected);
    const start = new CliProcess(["start", "--config", path], { cwd: world.dir, env: env() });
    const exit = await start.exited;
    expect(exit).toBe(2);
    expect(start.stderr.join("\n")).toContain(expected);
  });
});
