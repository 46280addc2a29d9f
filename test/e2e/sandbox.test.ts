/**
 * Tools that cannot reach past their thread, checked the way an attacker in a chat would try it:
 * `switchboard start` as a child process with a config, the Telegram fake, and a fake model that
 * makes whatever tool calls the message asks for (`run: [{"command": …}, {"name": "read", …}]`).
 *
 * - a canary secret in the gateway's environment reaches neither the chat nor the model, however
 *   the command looks for it (`env`, `/proc/1/environ`, `/proc/$PPID/environ`);
 * - the network is unreachable from the sandbox, the gateway's own port included;
 * - a background job started by bash cannot approve anything;
 * - FIFOs, sockets and devices are refused by the file tools, eight threads doing it at once leave
 *   the others answering, and SIGTERM still stops the process within its grace period;
 * - each limit, when hit, gives the model a clear error;
 * - with `tools.sandbox.mode: none` every bash call waits for an admin, and start says so;
 * - `/model` follows the channel's settings policy; `/approve` works only in the request's thread.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT_USERNAME, type FakeChat } from "../fakes/telegram/server.js";
import { redisUrl } from "../support/redis.js";
import { bwrapUnavailable } from "../support/sandbox.js";
import { CliProcess, MAIN } from "./support/cli-process.js";
import { resultsFor as resultsIn, toolScript } from "./support/tool-script.js";
import { TG_USERS, until, World } from "./support/world.js";

const unavailable = await bwrapUnavailable();
const CANARY = "canary-7c41e9-do-not-leak";

let world: World;
const running: CliProcess[] = [];
let seq = 0;

const resultsFor = (nonce: string) => resultsIn(world, nonce);

function config(name: string, tools: string, extra = ""): string {
  const base = world.yaml({ channels: ["telegram"], logLevel: "info", concurrency: 16 });
  const path = join(world.dir, name);
  writeFileSync(path, `${base}\ntools:\n${tools}\n${extra}`);
  return path;
}

function launch(configPath: string): CliProcess {
  const p = new CliProcess(["start", "--config", configPath], {
    cwd: world.dir,
    env: { ...world.env(), SB_E2E_CANARY_TOKEN: CANARY },
  });
  running.push(p);
  return p;
}

async function stop(p: CliProcess, ms?: number): Promise<number | null> {
  running.splice(running.indexOf(p), 1);
  return p.stop(ms);
}

let chatSeq = 0;
const newChat = (): FakeChat => ({
  id: -100700000 - ++chatSeq,
  type: "supergroup",
  title: `Sandbox ${chatSeq}`,
});

/** Sends `run: calls` as a mention in `chat` (or a reply in its thread) and waits for the results. */
async function runTools(
  chat: FakeChat,
  calls: unknown[],
  o: { replyTo?: number; ms?: number } = {},
): Promise<string[]> {
  const nonce = `#n${++seq}`;
  world.telegram.userMessage({
    chat,
    from: TG_USERS.alice,
    text: `${nonce} run: ${JSON.stringify(calls)}`,
    ...(o.replyTo ? { replyTo: o.replyTo } : { mention: true }),
  });
  return until(() => resultsFor(nonce), `the tool results of ${nonce}`, o.ms ?? 20_000);
}

/** Everything the chat and the model saw, as one text. */
function everythingSeen(): string {
  const chats = [...Array(chatSeq).keys()].map((i) => world.telegram.chat(-100700000 - (i + 1)));
  return JSON.stringify(chats) + JSON.stringify(world.requests("openai-completions").map((r) => r.body));
}

/** The workspace directory of the thread that created `marker` (there is one per thread). */
function workspaceWith(marker: string): string {
  const root = join(world.dir, "workspaces");
  for (const dir of readdirSync(root)) if (existsSync(join(root, dir, marker))) return join(root, dir);
  throw new Error(`no workspace holds ${marker}`);
}

beforeAll(async () => {
  world = await World.create();
  world.llm.respondWith("openai-completions", toolScript);
  // Workspaces must be reachable for the sandbox's account (nobody, when the tests run as root).
  chmodSync(world.dir, 0o755);
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await world?.close();
});

describe.skipIf(unavailable)("with the sandbox (tools.sandbox.mode: auto)", () => {
  let p: CliProcess;
  let gatewayPort: number;
  let outside: Server;
  let outsidePort: number;

  beforeAll(async () => {
    outside = createServer((s) => s.end("reached the host\n"));
    await new Promise<void>((r) => outside.listen(0, "127.0.0.1", r));
    outsidePort = (outside.address() as { port: number }).port;
    p = launch(config("sandbox.yaml", "  sandbox:\n    mode: bwrap"));
    const started = await p.waitForLog("switchboard started", { role: "all" });
    gatewayPort = Number(new URL(String(started.url)).port);
  });
  afterAll(async () => {
    await new Promise((r) => outside.close(r));
  });

  it("logs that tools are sandboxed and /status says so", async () => {
    const ready = await p.waitForLog("tool sandbox ready");
    expect(String(ready.sandbox)).toMatch(/^sandboxed with bubblewrap \(network none/);
    expect(p.lines.some((l) => l.startsWith("Tools: not sandboxed"))).toBe(false);
    const chat = newChat();
    world.telegram.command(chat, TG_USERS.alice, "status", "", { addressed: true });
    const status = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Tools:")),
      "the /status answer",
    );
    expect(status.text).toMatch(/Tools: sandboxed with bubblewrap \(network none/);
  });

  it("a canary secret in the gateway's environment reaches neither the chat nor the model", async () => {
    const chat = newChat();
    const results = await runTools(chat, [
      { command: "env" },
      { command: "tr '\\0' '\\n' < /proc/$PPID/environ; echo; tr '\\0' '\\n' < /proc/1/environ" },
      {
        command:
          "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; grep -r canary /proc/*/cmdline 2>/dev/null; echo end",
      },
      { name: "read", args: { path: "/proc/1/environ" } },
      { name: "read", args: { path: "../../../../proc/self/environ" } },
    ]);
    expect(results).toHaveLength(5);
    expect(results[0]).toContain("HOME=/workspace");
    expect(results[2]).toContain("end");
    expect(results[3]).toContain("outside the workspace");
    await until(
      () => world.telegram.botMessages(chat.id).some((m) => m.text.startsWith("done")),
      "the answer",
    );
    const seen = everythingSeen();
    expect(seen).not.toContain(CANARY);
    expect(seen).not.toContain(world.telegram.token);
  });

  it("the network is unreachable from the sandbox, the gateway's own port included", async () => {
    const chat = newChat();
    const probe = (port: number) =>
      `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo "open ${port}" || echo "closed ${port}"`;
    const [out] = await runTools(chat, [
      {
        command: [gatewayPort, outsidePort, telegramPort(), redisPort()].map(probe).join("; "),
      },
    ]);
    for (const port of [gatewayPort, outsidePort, telegramPort(), redisPort()])
      expect(out).toContain(`closed ${port}`);
    expect(out).not.toContain("open");
  });

  it("a background job started by bash cannot approve anything", async () => {
    const chat = newChat();
    const nonce = `#n${++seq}`;
    // One assistant message, two calls: the first leaves a job behind that keeps trying the
    // gateway's port (where the web chat API lives) and the platform API; the second needs approval.
    const job = [
      "mkdir -p victim && touch victim/keep",
      `(while true; do echo try >> attempts; (exec 3<>/dev/tcp/127.0.0.1/${gatewayPort}) 2>/dev/null && echo reached >> reached; (exec 3<>/dev/tcp/127.0.0.1/${telegramPort()}) 2>/dev/null && echo reached >> reached; sleep 0.05; done) >/dev/null 2>&1 &`,
      "disown; sleep 0.3; echo started",
    ].join("\n");
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `${nonce} run: ${JSON.stringify([{ command: job }, { command: "rm -rf victim && echo removed" }])}`,
      mention: true,
    });
    const request = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Approval needed")),
      "the approval request",
    );
    const ws = workspaceWith("attempts");
    const attempts = statSync(join(ws, "attempts")).size;
    expect(attempts).toBeGreaterThan(0);
    // Held for a second: the job is gone, nothing reached out, nothing was approved or removed.
    const end = Date.now() + 1000;
    while (Date.now() < end) {
      expect(statSync(join(ws, "attempts")).size).toBe(attempts);
      expect(world.telegram.message(chat.id, request.message_id)?.text).not.toMatch(/Approved/);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(existsSync(join(ws, "reached"))).toBe(false);
    expect(existsSync(join(ws, "victim", "keep"))).toBe(true);
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/deny@${BOT_USERNAME} ${/\/deny ([a-z2-9]{6})/.exec(request.text)?.[1] ?? ""}`,
      replyTo: request.message_id,
    });
    const results = await until(() => resultsFor(nonce), "the results after the denial");
    expect(results[0]).toContain("started");
    expect(results[1]).toMatch(/denied this bash call/);
    expect(existsSync(join(ws, "victim", "keep"))).toBe(true);
  });

  it("/approve typed in another thread does not approve; typed in the thread, it does", async () => {
    const chat = newChat();
    const nonce = `#n${++seq}`;
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `${nonce} run: ${JSON.stringify([{ command: "rm -rf nothing-here && echo removed" }])}`,
      mention: true,
    });
    const request = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Approval needed")),
      "the approval request",
    );
    const id = /\/approve ([a-z2-9]{6})/.exec(request.text)?.[1] ?? "";
    const elsewhere = newChat();
    world.telegram.command(elsewhere, TG_USERS.alice, "approve", id, { addressed: true });
    const refusal = await until(
      () => world.telegram.botMessages(elsewhere.id).find((m) => m.text.includes(id)),
      "the answer in the other thread",
    );
    expect(refusal.text).toContain(`Approval request ${id} was asked in another thread; nothing changed.`);
    expect(world.telegram.message(chat.id, request.message_id)?.text).not.toMatch(/Approved/);
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/approve@${BOT_USERNAME} ${id}`,
      replyTo: request.message_id,
    });
    const results = await until(() => resultsFor(nonce), "the results after approval");
    expect(results[0]).toContain("removed");
  });

  it("FIFOs, sockets and devices are refused at once, and the thread still answers", async () => {
    const chat = newChat();
    const marker = `marker-${++seq}`;
    await runTools(chat, [{ command: `mkfifo p && touch ${marker}` }]);
    const ws = workspaceWith(marker);
    const sock = createServer();
    await new Promise<void>((r) => sock.listen(join(ws, "s"), r));
    // A device node needs root; the FIFO and socket cases hold either way.
    const root = process.getuid?.() === 0;
    if (root) execFileSync("mknod", [join(ws, "d"), "c", "1", "3"]);
    try {
      const last = world.telegram.botMessages(chat.id).at(-1)?.message_id;
      const names = root ? ["p", "s", "d"] : ["p", "s"];
      const started = Date.now();
      const results = await runTools(
        chat,
        names.flatMap((path) => [
          { name: "read", args: { path } },
          { name: "write", args: { path, content: "x" } },
          { name: "edit", args: { path, oldText: "a", newText: "b" } },
        ]),
        last ? { replyTo: last } : {},
      );
      const took = Date.now() - started;
      const kinds = { p: "a FIFO (named pipe)", s: "a socket", d: "a character device" };
      results.forEach((r, i) => {
        const name = names[Math.floor(i / 3)] as keyof typeof kinds;
        expect(r).toContain(`"${name}" is ${kinds[name]}; the file tools only open regular files`);
      });
      // Nothing waited on the FIFO: the whole run took about as long as any other.
      expect(took).toBeLessThan(15_000);
    } finally {
      await new Promise((r) => sock.close(r));
    }
  });

  it("eight threads reading FIFOs at once leave other threads answering; SIGTERM still stops the process", async () => {
    const chats = Array.from({ length: 8 }, newChat);
    const calls = [
      { command: "mkfifo p" },
      { name: "read", args: { path: "p" } },
      { name: "edit", args: { path: "p", oldText: "a", newText: "b" } },
      { name: "write", args: { path: "p", content: "x" } },
      { name: "ls", args: { path: "p" } },
    ];
    const runs = chats.map((chat) => runTools(chat, calls, { ms: 30_000 }));
    const other = newChat();
    world.telegram.userMessage({ chat: other, from: TG_USERS.alice, text: "still there?", mention: true });
    await until(
      () => world.telegram.botMessages(other.id).find((m) => m.text.includes("answers: ")),
      "the answer in an unrelated thread",
      30_000,
    );
    for (const results of await Promise.all(runs)) {
      expect(results.slice(1).every((r) => r.includes("is a FIFO (named pipe)"))).toBe(true);
    }
    // Eight more in flight, then SIGTERM: the process stops by itself within its grace period.
    const before = world.requests("openai-completions").length;
    const more = Array.from({ length: 8 }, newChat);
    for (const chat of more)
      world.telegram.userMessage({
        chat,
        from: TG_USERS.alice,
        text: `run: ${JSON.stringify(calls)}`,
        mention: true,
      });
    await until(() => world.requests("openai-completions").length > before, "the new runs to start");
    // runtime.shutdownGraceMs is 1 s; stop() SIGKILLs (exit code null) if it is not out in 10 s.
    const code = await stop(p, 10_000);
    expect(
      code,
      `exit code; the process's last lines:\n${p.lines.slice(-15).join("\n")}\n${p.stderr.slice(-15).join("\n")}`,
    ).toBe(0);
  });
});

function telegramPort(): number {
  return Number(new URL(world.telegram.apiRoot()).port);
}

function redisPort(): number {
  return Number(new URL(redisUrl()).port || 6379);
}

describe.skipIf(unavailable)("limits", () => {
  it("each limit, when hit, gives the model a clear tool error", async () => {
    const p = launch(
      config(
        "limits.yaml",
        "  sandbox:\n    mode: bwrap\n    limits:\n      cpuSeconds: 1\n      memoryMb: 64\n      fileSizeMb: 1\n      processes: 16",
      ),
    );
    await p.waitForLog("switchboard started", { role: "all" });
    const results = await runTools(
      newChat(),
      [
        { command: "while :; do :; done" },
        { command: "head -c 3000000 /dev/zero > big.bin" },
        { command: "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo done" },
        { command: "sh -c 'for i in $(seq 40); do sleep 2 & done; wait'" },
      ],
      { ms: 40_000 },
    );
    expect(results[0]).toContain(
      "A process used up its CPU time limit (1 s per process, tools.sandbox.limits.cpuSeconds) and was stopped.",
    );
    expect(results[1]).toContain(
      "A process tried to write a file larger than the limit of 1 MB (tools.sandbox.limits.fileSizeMb) and was stopped.",
    );
    expect(results[2]).toContain(
      "A process could not get more memory: the limit is 64 MB of address space per process (tools.sandbox.limits.memoryMb).",
    );
    expect(results[3]).toContain(
      "A process could not be started: the limit is 16 processes per command (tools.sandbox.limits.processes).",
    );
    expect(await stop(p)).toBe(0);
  });
});

describe("without a sandbox (tools.sandbox.mode: none)", () => {
  it("start says so in one line, /status shows it, and every bash call waits for an admin", async () => {
    const p = launch(config("none.yaml", "  sandbox:\n    mode: none"));
    // A root gateway runs even unsandboxed commands as nobody, and says so.
    await p.waitForLine(
      /^Tools: not sandboxed \(tools\.sandbox\.mode is none\): every bash call waits for an admin's approval( and runs as nobody)?\.$/,
    );
    const chat = newChat();
    const nonce = `#n${++seq}`;
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `${nonce} run: ${JSON.stringify([{ command: "echo harmless" }])}`,
      mention: true,
    });
    const request = await until(
      () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Approval needed")),
      "the approval request for a harmless command",
    );
    expect(request.text).toContain("echo harmless");
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/status@${BOT_USERNAME}`,
      replyTo: request.message_id,
    });
    await until(
      () =>
        world.telegram
          .botMessages(chat.id)
          .find((m) =>
            m.text.includes(
              "Tools: not sandboxed (tools.sandbox.mode is none): every bash call waits for an admin's approval",
            ),
          ),
      "the /status line",
    );
    const id = /\/approve ([a-z2-9]{6})/.exec(request.text)?.[1] ?? "";
    world.telegram.userMessage({
      chat,
      from: TG_USERS.alice,
      text: `/approve@${BOT_USERNAME} ${id}`,
      replyTo: request.message_id,
    });
    const results = await until(() => resultsFor(nonce), "the results after approval");
    expect(results[0]).toContain("harmless");
    expect(await stop(p)).toBe(0);
  });
});

describe("who may change a thread's model", () => {
  it("in a group only admins may; in a direct message everyone allowed may", async () => {
    const p = launch(config("settings.yaml", "  sandbox:\n    mode: none"));
    await p.waitForLog("switchboard started", { role: "all" });
    const group = newChat();
    world.telegram.command(group, TG_USERS.bob, "model", "beta/two", { addressed: true });
    await until(
      () =>
        world.telegram
          .botMessages(group.id)
          .find((m) => m.text.includes("Only admins can change the model in this channel; nothing changed.")),
      "the refusal for a non-admin",
    );
    world.telegram.command(group, TG_USERS.alice, "model", "beta/two", { addressed: true });
    await until(
      () => world.telegram.botMessages(group.id).find((m) => m.text.includes("Model set to beta/two")),
      "the admin's change",
    );
    const dm: FakeChat = { id: TG_USERS.bob.id, type: "private" };
    world.telegram.command(dm, TG_USERS.bob, "model", "beta/two");
    await until(
      () => world.telegram.botMessages(dm.id).find((m) => m.text.includes("Model set to beta/two")),
      "the change in a direct message",
    );
    expect(await stop(p)).toBe(0);
  });
});

describe.skipIf(unavailable)("switchboard check", () => {
  it("shows how tools will run", async () => {
    const path = config("check.yaml", "  sandbox:\n    mode: auto");
    const child = spawn(
      join(import.meta.dirname, "..", "..", "node_modules", ".bin", "tsx"),
      [MAIN, "check", "--config", path],
      {
        cwd: world.dir,
        env: { PATH: process.env.PATH ?? "", HOME: world.dir, ...world.env() },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((r) => child.on("close", r));
    expect(out).toMatch(/✓ sandbox: sandboxed with bubblewrap \(network none(, as nobody)?\)/);
    expect(code).toBe(0);
  });
});
