/**
 * What the bubblewrap sandbox keeps a command from: the gateway's environment (its own and its
 * parent's /proc entries), the host's files and processes, the network (the gateway's own port
 * included), writable system directories, capabilities, a /tmp shared between calls, and processes
 * that outlive the call by leaving its process group. And the start probe's decisions.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { chown, mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CommandRunner,
  createBuiltinTools,
  DEFAULT_LIMITS,
  probeSandbox,
  SandboxUnavailableError,
} from "../../src/extensions/tools/index.js";
import { bwrapRunner, bwrapUnavailable } from "../support/sandbox.js";

const unavailable = await bwrapUnavailable();
const CANARY = "canary-secret-5d1e";

let root: string;
let ws: string;
let other: string;
let server: Server;
let port: number;

beforeAll(async () => {
  process.env.SB_SANDBOX_CANARY_TOKEN = CANARY;
  root = mkdtempSync(join(tmpdir(), "sb-sandbox-"));
  chmodSync(root, 0o755);
  ws = join(root, "ws");
  other = join(root, "other-thread");
  await mkdir(ws);
  await mkdir(other);
  writeFileSync(join(other, "private.txt"), "other thread's file\n");
  server = createServer((s) => s.end("hello from the host\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  delete process.env.SB_SANDBOX_CANARY_TOKEN;
  rmSync(root, { recursive: true, force: true });
  await new Promise((r) => server.close(r));
});

async function prepared(o: Parameters<typeof bwrapRunner>[0] = {}): Promise<CommandRunner> {
  const runner = await bwrapRunner(o);
  if (runner.owner) await chown(ws, runner.owner.uid, runner.owner.gid);
  return runner;
}

async function run(runner: CommandRunner, command: string, timeoutMs = 20_000) {
  let output = "";
  const r = await runner.run(command, {
    workspace: ws,
    timeoutMs,
    onOutput: (c) => {
      output += c.toString("utf8");
    },
  });
  return { ...r, output };
}

describe.skipIf(unavailable)("the bubblewrap sandbox", () => {
  it("shows none of the gateway's environment: not in env, /proc/1/environ or the parent's environ", async () => {
    const runner = await prepared();
    const r = await run(
      runner,
      "env; for p in 1 $PPID; do tr '\\0' '\\n' < /proc/$p/environ; done; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'",
    );
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain("HOME=/workspace");
    expect(r.output).not.toContain(CANARY);
  });

  it("sees only its own processes in a fresh /proc", async () => {
    const runner = await prepared();
    const r = await run(
      runner,
      "ls /proc | grep -cE '^[0-9]+$'; cat /proc/1/cmdline | tr '\\0' ' ' | cut -c1-40",
    );
    const [count, pid1] = r.output.trim().split("\n");
    expect(Number(count)).toBeLessThan(10);
    expect(pid1).toMatch(/bwrap/);
    expect(r.output).not.toContain(String(process.pid));
  });

  it("sees its workspace at /workspace and nothing of the host: no other thread, no config, no /etc secrets", async () => {
    const runner = await prepared();
    const r = await run(
      runner,
      [
        "pwd",
        `ls ${other} 2>&1 | head -1`,
        `ls ${root} 2>&1 | head -1`,
        "cat /etc/shadow 2>&1 | head -1",
        "ls /root /home /work /app 2>&1 | head -4",
        "test -r /etc/passwd && echo passwd-readable",
      ].join("; "),
    );
    expect(r.output.split("\n")[0]).toBe("/workspace");
    expect(r.output).not.toContain("private.txt");
    expect(r.output).not.toContain("other thread's file");
    expect(r.output).toMatch(/shadow: No such file or directory/);
    expect(r.output).toContain("passwd-readable");
  });

  it("cannot write outside the workspace, /tmp and /dev/shm; /tmp is private to the call", async () => {
    const runner = await prepared();
    const r = await run(
      runner,
      "touch /usr/x /etc/x /x /dev/x 2>&1 | grep -c 'Read-only file system'; echo kept > /tmp/t && cat /tmp/t; echo ok > in-ws && cat in-ws",
    );
    expect(r.output).toBe("4\nkept\nok\n");
    const again = await run(runner, "cat /tmp/t 2>&1");
    expect(again.output).toMatch(/No such file/);
    expect(existsSync(join(ws, "in-ws"))).toBe(true);
  });

  it("has no capabilities and cannot create user namespaces of its own", async () => {
    const runner = await prepared();
    const r = await run(runner, "grep CapEff /proc/self/status; unshare -U true 2>&1 | head -1");
    expect(r.output).toContain("CapEff:\t0000000000000000");
    expect(r.output).toMatch(/unshare failed|Operation not permitted|No space left/);
  });

  it("has no network by default: the host's loopback port is unreachable", async () => {
    const runner = await prepared();
    const r = await run(runner, `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected || echo refused`);
    expect(r.output).toContain("refused");
    expect(r.output).not.toContain("connected");
  });

  it("with network: host it reaches the host's network", async () => {
    const runner = await prepared({ network: "host" });
    const r = await run(runner, `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`);
    expect(r.output).toContain("hello from the host");
  });

  it("readOnlyPaths show read-only, also under /tmp and below directories only root may enter", async () => {
    // mkdtemp's directory is 0700 and root's; the toolchain below it is open to all.
    const hidden = mkdtempSync(join(tmpdir(), "sb-ro-"));
    const toolchain = join(hidden, "toolchain");
    await mkdir(toolchain, { mode: 0o755 });
    writeFileSync(join(toolchain, "tool.txt"), "from the toolchain\n", { mode: 0o644 });
    try {
      const runner = await prepared({ readOnlyPaths: [toolchain] });
      const r = await run(runner, `cat ${toolchain}/tool.txt; touch ${toolchain}/new 2>&1 | head -1`);
      expect(r.output).toMatch(/^from the toolchain\n/);
      expect(r.output).toMatch(/Read-only file system|Permission denied/);
    } finally {
      rmSync(hidden, { recursive: true, force: true });
    }
  });

  it("a workspace that cannot be mounted is a setup error, not the command's failure", async () => {
    const runner = await prepared();
    let output = "";
    const r = await runner.run("echo never", {
      workspace: join(root, "missing"),
      timeoutMs: 10_000,
      onOutput: (c) => {
        output += c.toString("utf8");
      },
    });
    expect(r.setupError).toMatch(/^bwrap: /);
    expect(output).not.toContain("never");
  });

  it("the file tools give new files to the sandbox's account, so commands can change them", async () => {
    const runner = await prepared();
    const tools = createBuiltinTools(ws, { bash: { runner } });
    await tools.write.execute("w", { path: "/workspace/notes/today.txt", content: "one\n" });
    const r = await run(runner, "echo two >> notes/today.txt && cat notes/today.txt");
    expect(r.output).toBe("one\ntwo\n");
    const read = await tools.read.execute("r", { path: "/workspace/notes/today.txt" });
    expect(read.content[0]).toMatchObject({ text: "one\ntwo" });
  });
});

describe("the start probe", () => {
  const limits = DEFAULT_LIMITS;
  const base = { network: "none" as const, env: [], readOnlyPaths: [], limits };

  it("mode none: no sandbox, every bash call asks", async () => {
    const status = await probeSandbox({ sandbox: { ...base, mode: "none" }, workspaceRoot: root });
    expect(status.sandboxed).toBe(false);
    expect(status.runner.kind).toBe("none");
    const asRoot = process.getuid?.() === 0;
    expect(status.summary).toBe(
      `not sandboxed (tools.sandbox.mode is none): every bash call waits for an admin's approval${asRoot ? " and runs as nobody" : ""}`,
    );
    // A root gateway never runs a command as root, sandbox or not.
    expect(status.runner.owner).toEqual(asRoot ? { uid: 65534, gid: 65534 } : undefined);
  });

  it("auto without bwrap on PATH: no sandbox, saying why", async () => {
    const status = await probeSandbox({
      sandbox: { ...base, mode: "auto" },
      workspaceRoot: root,
      source: { PATH: "/nonexistent" },
    });
    expect(status.sandboxed).toBe(false);
    expect(status.reason).toBe("bwrap is not installed");
  });

  it("bwrap without bwrap refuses to start, saying what to do", async () => {
    await expect(
      probeSandbox({
        sandbox: { ...base, mode: "bwrap" },
        workspaceRoot: root,
        source: { PATH: "/nonexistent" },
      }),
    ).rejects.toThrow(SandboxUnavailableError);
    await expect(
      probeSandbox({
        sandbox: { ...base, mode: "bwrap" },
        workspaceRoot: root,
        source: { PATH: "/nonexistent" },
      }),
    ).rejects.toThrow(/apt-get install bubblewrap.*tools\.sandbox\.mode to auto or none/);
  });

  it.skipIf(unavailable)("auto where bwrap works: sandboxed, as nobody under root", async () => {
    const status = await probeSandbox({ sandbox: { ...base, mode: "auto" }, workspaceRoot: root });
    try {
      expect(status.sandboxed).toBe(true);
      expect(status.runner.kind).toBe("bwrap");
      if (process.getuid?.() === 0) {
        expect(status.runner.owner).toEqual({ uid: 65534, gid: 65534 });
        expect(status.summary).toBe("sandboxed with bubblewrap (network none, as nobody)");
      } else expect(status.summary).toBe("sandboxed with bubblewrap (network none)");
    } finally {
      status.runner.close?.();
    }
  });

  // Only root can make a directory the sandbox's account cannot enter and still run it there.
  it.skipIf(unavailable || process.getuid?.() !== 0)(
    "a root gateway whose workspaces sit under a directory only root may enter: sandboxed as nobody, never root",
    async () => {
      const privateDir = mkdtempSync(join(tmpdir(), "sb-private-"));
      try {
        expect(statSync(privateDir).mode & 0o777).toBe(0o700);
        const wsRoot = join(privateDir, "workspaces");
        const status = await probeSandbox({ sandbox: { ...base, mode: "auto" }, workspaceRoot: wsRoot });
        try {
          expect(status.sandboxed).toBe(true);
          expect(status.summary).toBe("sandboxed with bubblewrap (network none, as nobody)");
          const tools = createBuiltinTools(join(wsRoot, "t1"), { bash: { runner: status.runner } });
          await mkdir(join(wsRoot, "t1"));
          await chown(join(wsRoot, "t1"), 65534, 65534);
          const r = await tools.bash.execute("b", {
            command:
              "id -u; echo 1 > /proc/sys/kernel/core_uses_pid && echo wrote-proc-sys; touch mine && stat -c %u mine",
          });
          const text = (r.content[0] as { text: string }).text;
          expect(text.split("\n")[0]).toBe("65534");
          expect(text).not.toContain("wrote-proc-sys");
          expect(text).toMatch(/Permission denied/);
          expect(statSync(join(wsRoot, "t1", "mine")).uid).toBe(65534);
        } finally {
          status.runner.close?.();
        }
      } finally {
        rmSync(privateDir, { recursive: true, force: true });
      }
    },
  );

  it("check's probe leaves no workspace directory behind", async () => {
    const missing = join(root, "not-yet");
    const status = await probeSandbox({
      sandbox: { ...base, mode: "auto" },
      workspaceRoot: missing,
      createRoot: false,
    });
    status.runner.close?.();
    expect(existsSync(missing)).toBe(false);
  });
});
