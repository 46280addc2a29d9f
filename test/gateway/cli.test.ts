import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type CliDeps,
  type CliHandlers,
  COMMANDS,
  helpText,
  parseCommandLine,
  runCli,
  type StartContext,
  UsageError,
} from "../../src/gateway/cli/index.js";
import { silentLogger } from "../../src/gateway/log.js";

const dir = mkdtempSync(join(tmpdir(), "sb-cli-inproc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function harness(handlers: CliHandlers = {}, env: Record<string, string> = {}, extra: Partial<CliDeps> = {}) {
  const out = { stdout: "", stderr: "" };
  const deps: CliDeps = {
    ...extra,
    handlers,
    env,
    cwd: dir,
    version: "9.9.9",
    handleSignals: false,
    io: {
      stdout: (t) => {
        out.stdout += t;
      },
      stderr: (t) => {
        out.stderr += t;
      },
    },
    createLogger: () => silentLogger(),
  };
  return { out, run: (...argv: string[]) => runCli(argv, deps) };
}

function usageError(argv: string[], env: Record<string, string> = {}): string {
  try {
    parseCommandLine(argv, env);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error(`parsed: ${argv.join(" ")}`);
}

describe("argument parsing", () => {
  it("defaults to start with role all; the role comes from --role or $SWITCHBOARD_ROLE", () => {
    expect(parseCommandLine([])).toEqual({ kind: "start", config: undefined, role: "all" });
    expect(parseCommandLine(["--config", "sb.yaml"])).toEqual({
      kind: "start",
      config: "sb.yaml",
      role: "all",
    });
    expect(parseCommandLine(["start", "-r", "worker"])).toMatchObject({ role: "worker" });
    expect(parseCommandLine(["start"], { SWITCHBOARD_ROLE: "gateway" })).toMatchObject({ role: "gateway" });
    expect(parseCommandLine(["start", "--role=worker"], { SWITCHBOARD_ROLE: "gateway" })).toMatchObject({
      role: "worker",
    });
  });

  it("parses each command's arguments", () => {
    expect(parseCommandLine(["check", "--offline", "-c", "x.yaml"])).toEqual({
      kind: "check",
      config: "x.yaml",
      offline: true,
    });
    expect(parseCommandLine(["export", "slack:T1:C2:1712.33", "--session", "s1", "-o", "out.jsonl"])).toEqual(
      {
        kind: "export",
        config: undefined,
        threadKey: "slack:T1:C2:1712.33",
        sessionId: "s1",
        output: "out.jsonl",
      },
    );
    expect(parseCommandLine(["import", "s.jsonl", "--thread", "web:abc"])).toMatchObject({
      kind: "import",
      file: "s.jsonl",
      threadKey: "web:abc",
    });
    expect(parseCommandLine(["register-commands", "-p", "telegram", "--platform", "discord"])).toMatchObject({
      platforms: ["telegram", "discord"],
    });
    expect(parseCommandLine(["help", "check"])).toEqual({ kind: "help", topic: "check" });
    expect(parseCommandLine(["import", "--help"])).toEqual({ kind: "help", topic: "import" });
    expect(parseCommandLine(["--version"])).toEqual({ kind: "version" });
  });

  it("refuses what it cannot run, saying why", () => {
    expect(usageError(["strat"])).toBe('unknown command "strat"; did you mean "start"?');
    expect(usageError(["start", "--rol", "worker"])).toMatch(/Unknown option '--rol'/);
    expect(usageError(["start", "--role", "boss"])).toBe(
      '--role must be one of all, gateway, worker (got "boss")',
    );
    expect(usageError(["export"])).toBe("missing <thread>");
    expect(usageError(["import", "a.jsonl", "b.jsonl"])).toBe('unexpected argument "b.jsonl"');
    expect(usageError(["register-commands", "-p", "irc"])).toBe(
      '--platform must be one of slack, discord, telegram (got "irc")',
    );
  });
});

describe("help", () => {
  it("every command has usage text, and the overview lists them all with the exit codes", async () => {
    const { out, run } = harness();
    expect(await run("--help")).toBe(0);
    for (const c of COMMANDS) expect(out.stdout).toContain(`  ${c}`);
    expect(out.stdout).toContain("Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.");
    for (const c of COMMANDS) {
      expect(helpText(c)).toMatch(new RegExp(`^Usage: switchboard ${c}`));
      expect(helpText(c)).toContain("--config <path>");
    }
    expect(helpText("start")).toContain("-r, --role <role>");
    expect(helpText("export")).toContain("-s, --session <id>");
  });

  it("usage errors exit 2 and point at the command's help; --version prints the version", async () => {
    const h = harness();
    expect(await h.run("start", "--role", "boss")).toBe(2);
    expect(h.out.stderr).toBe(
      'switchboard: --role must be one of all, gateway, worker (got "boss")\nRun "switchboard start --help" for usage.\n',
    );
    const v = harness();
    expect(await v.run("-v")).toBe(0);
    expect(v.out.stdout).toBe("switchboard 9.9.9\n");
  });
});

describe("check", () => {
  it("an invalid config exits 2 listing every problem with its path", async () => {
    writeFileSync(join(dir, "bad.yaml"), "runtime:\n  concurrency: lots\nlogging:\n  level: loud\n");
    const { out, run } = harness();
    expect(await run("check", "--config", "bad.yaml")).toBe(2);
    expect(out.stdout).toContain('✗ runtime.concurrency: must be a whole number (got "lots")');
    expect(out.stdout).toContain(
      '✗ logging.level: must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent" (got "loud")',
    );
    expect(out.stdout).toContain("2 problems in the config.");
  });

  it("runs the injected probes: 0 when all answer, 1 when one does not; --offline skips them", async () => {
    const probes = [
      { name: "redis", check: async () => ({ ok: true, detail: "PONG in 1 ms" }) },
      { name: "telegram", check: async () => ({ ok: false, detail: "401 Unauthorized" }) },
    ];
    const failing = harness({ checkProbes: () => probes }, { REDIS_URL: "redis://127.0.0.1:6399" });
    expect(await failing.run("check")).toBe(1);
    expect(failing.out.stdout).toContain("runtime: Redis redis://127.0.0.1:6399 (key prefix sb:)");
    expect(failing.out.stdout).toContain("  ✓ redis: PONG in 1 ms\n  ✗ telegram: 401 Unauthorized\n");
    expect(failing.out.stdout).toContain("1 of 2 checks failed.");

    const passing = harness({ checkProbes: () => probes.slice(0, 1) });
    expect(await passing.run("check")).toBe(0);

    const offline = harness({ checkProbes: () => probes });
    expect(await offline.run("check", "--offline")).toBe(0);
    expect(offline.out.stdout).toContain("Reachability: not checked.");
  });

  it("warnings are shown: a token without its partner", async () => {
    const { out, run } = harness({}, { SLACK_APP_TOKEN: "xapp-1-A1-abc" });
    expect(await run("check")).toBe(0);
    expect(out.stdout).toContain(
      "! channels.slack: appToken set but botToken (SLACK_BOT_TOKEN) missing, so slack stays off",
    );
  });
});

describe("start", () => {
  it("hands the handler its role, the resolved config and the shutdown signal, and exits 0 after it", async () => {
    const shutdown = new AbortController();
    let seen: StartContext | undefined;
    const { out, run } = harness(
      {
        async start(ctx) {
          seen = ctx;
          shutdown.abort(); // what SIGTERM does when the CLI handles signals
          await new Promise<void>((resolve) => {
            if (ctx.signal.aborted) resolve();
            else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
          });
        },
      },
      { REDIS_URL: "redis://127.0.0.1:6399" },
      { shutdown: shutdown.signal },
    );
    expect(await run("start", "--role", "worker")).toBe(0);
    expect(seen?.role).toBe("worker");
    expect(seen?.config.runtime.redisUrl).toBe("redis://127.0.0.1:6399");
    expect(seen?.config.channels.web.enabled).toBe(true);
    expect(seen?.signal.aborted).toBe(true);
    expect(out.stderr).toBe("");
  });

  it("gateway and worker roles need Redis (exit 2); a missing handler or a failing start exit 1", async () => {
    const noRedis = harness({ start: async () => {} });
    expect(await noRedis.run("start", "--role", "gateway")).toBe(2);
    expect(noRedis.out.stderr).toContain("--role gateway needs Redis");

    const missing = harness();
    expect(await missing.run("start")).toBe(1);
    expect(missing.out.stderr).toContain("switchboard start: not available in this build");

    const failing = harness({
      start: async () => {
        throw new Error("Telegram said 401 for bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw");
      },
    });
    expect(await failing.run("start")).toBe(1);
    expect(failing.out.stderr).toBe("switchboard start: Telegram said 401 for bot[redacted]\n");
  });

  it("an invalid config never reaches the handler", async () => {
    writeFileSync(join(dir, "bad-start.yaml"), "http:\n  host: 0.0.0.0\n");
    let called = false;
    const { out, run } = harness({
      start: async () => {
        called = true;
      },
    });
    expect(await run("start", "-c", "bad-start.yaml")).toBe(2);
    expect(called).toBe(false);
    expect(out.stderr).toContain('✗ http.token: is required when http.host is "0.0.0.0"');
  });
});

describe("export, import, register-commands", () => {
  const header = JSON.stringify({
    type: "session",
    version: 3,
    id: "s1",
    timestamp: "2025-01-01T00:00:00Z",
    cwd: "/",
  });
  const entry = JSON.stringify({
    type: "message",
    id: "e1",
    parentId: null,
    message: { role: "user", content: "hi" },
  });

  it("export writes the handler's lines to stdout or to --output", async () => {
    const handlers: CliHandlers = {
      exportThread: async (ctx) => {
        expect(ctx.threadKey).toBe("web:abc");
        return (async function* () {
          yield header;
          yield entry;
        })();
      },
    };
    const toStdout = harness(handlers);
    expect(await toStdout.run("export", "web:abc")).toBe(0);
    expect(toStdout.out.stdout).toBe(`${header}\n${entry}\n`);
    const toFile = harness(handlers);
    expect(await toFile.run("export", "web:abc", "-o", "out.jsonl")).toBe(0);
    expect(readFileSync(join(dir, "out.jsonl"), "utf8")).toBe(`${header}\n${entry}\n`);
    expect(toFile.out.stderr).toContain("wrote 2 lines to");
  });

  it("import passes the parsed entries; a file that is not a session is refused with line numbers", async () => {
    writeFileSync(join(dir, "good.jsonl"), `${header}\n${entry}\n`);
    writeFileSync(join(dir, "bad.jsonl"), `${header}\nnot json\n[1,2]\n`);
    let entries: readonly Record<string, unknown>[] = [];
    const h = harness({
      importSession: async (ctx) => {
        entries = ctx.entries;
        return { threadKey: ctx.threadKey ?? "web:new", sessionId: "s1" };
      },
    });
    expect(await h.run("import", "good.jsonl")).toBe(0);
    expect(entries.map((e) => e.type)).toEqual(["session", "message"]);
    expect(h.out.stdout).toBe("imported 2 lines into thread web:new (session s1)\n");
    expect(await h.run("import", "bad.jsonl")).toBe(2);
    expect(h.out.stderr).toContain("line 2: not valid JSON");
    expect(h.out.stderr).toContain("line 3: not a JSON object");
    expect(await h.run("import", "missing.jsonl")).toBe(2);
    expect(h.out.stderr).toContain("cannot read");
  });

  it("register-commands targets the enabled platforms, and refuses disabled ones", async () => {
    let asked: readonly string[] = [];
    const handlers: CliHandlers = {
      registerCommands: async (ctx) => {
        asked = ctx.platforms;
        return ctx.platforms.map((p) => `${p}: 9 commands set`);
      },
    };
    const env = { TELEGRAM_BOT_TOKEN: "123456:ABC", DISCORD_BOT_TOKEN: "d".repeat(40) };
    const all = harness(handlers, env);
    expect(await all.run("register-commands")).toBe(0);
    expect(asked).toEqual(["discord", "telegram"]);
    expect(all.out.stdout).toBe("discord: 9 commands set\ntelegram: 9 commands set\n");
    const off = harness(handlers, env);
    expect(await off.run("register-commands", "-p", "slack")).toBe(2);
    expect(off.out.stderr).toContain("slack is not enabled in the config");
  });
});
