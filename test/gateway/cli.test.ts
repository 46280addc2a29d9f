import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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
import { ConfigError } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";

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
    createLogger: () => silentProcessLogger(),
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
      role: "all",
    });
    // check takes the role start would run as, to check what it needs.
    expect(parseCommandLine(["check"], { SWITCHBOARD_ROLE: "gateway" })).toMatchObject({ role: "gateway" });
    expect(parseCommandLine(["check", "-r", "worker"])).toMatchObject({ role: "worker" });
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

  it("takes options before or after the command", () => {
    expect(parseCommandLine(["--config", "x.yaml", "check", "--offline"])).toEqual({
      kind: "check",
      config: "x.yaml",
      offline: true,
      role: "all",
    });
    expect(parseCommandLine(["-r", "worker", "--port=9001", "start"])).toEqual({
      kind: "start",
      role: "worker",
      http: { port: 9001 },
    });
    expect(parseCommandLine(["-c", "x.yaml", "export", "web:abc", "-s", "s1"])).toMatchObject({
      kind: "export",
      config: "x.yaml",
      threadKey: "web:abc",
      sessionId: "s1",
    });
    expect(parseCommandLine(["--config", "x.yaml", "--help"])).toEqual({ kind: "help" });
    expect(parseCommandLine(["-c", "x.yaml", "check", "--help"])).toEqual({ kind: "help", topic: "check" });
    expect(parseCommandLine(["health", "--host", "::1", "--port", "8788"])).toEqual({
      kind: "health",
      http: { host: "::1", port: 8788 },
    });
  });

  it("refuses what it cannot run, saying why", () => {
    expect(usageError(["start", "--port", "80a"])).toBe(
      '--port must be a port number from 0 to 65535 (got "80a")',
    );
    expect(usageError(["--offline", "start"])).toMatch(/Unknown option '--offline'/);
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
    expect(out.stdout).toContain('✗ runtime.concurrency (line 2): must be a whole number (got "lots")');
    expect(out.stdout).toContain(
      '✗ logging.level (line 4): must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent" (got "loud")',
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
    expect(offline.out.stdout).toContain("Reachability: not checked (--offline).");
  });

  it("a platform that refuses its credentials is a config error (exit 2); unreachable is 1", async () => {
    const refused = harness({
      checkProbes: () => [
        {
          name: "telegram",
          check: async () => ({ ok: false, refused: true, detail: "HTTP 401: Unauthorized" }),
        },
        { name: "redis", check: async () => ({ ok: false, detail: "not reachable" }) },
      ],
    });
    expect(await refused.run("check")).toBe(2);
    expect(refused.out.stdout).toContain(
      "2 of 2 checks failed: credentials or model ids in the config were refused.",
    );
  });

  it("what the wiring refuses beyond the schema is reported like a schema problem, with its line", async () => {
    writeFileSync(join(dir, "deep.yaml"), "# models\nmodels:\n  default: fake/nope\n");
    let probed = false;
    const { out, run } = harness({
      validateConfig: async (ctx) => [
        { path: "models.default", message: `"${ctx.config.models.default}" is not a known model` },
      ],
      checkProbes: () => {
        probed = true;
        return [];
      },
    });
    expect(await run("check", "--config", "deep.yaml", "--offline")).toBe(2);
    expect(out.stdout).toContain('✗ models.default (line 3): "fake/nope" is not a known model');
    expect(out.stdout).toContain("1 problem in the config.");
    expect(probed).toBe(false);
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

  it("a missing handler or a failing start exit 1", async () => {
    // What a role needs (Redis) is the wiring's preflight, shared with check: test/e2e/cli-user.test.ts.
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
    expect(out.stderr).toContain('✗ http.token (line 1): is required when http.host is "0.0.0.0"');
  });

  it("a config problem the handler finds (ConfigError) is printed like check prints it, exit 2", async () => {
    writeFileSync(join(dir, "deep-start.yaml"), "channels:\n  web:\n    tools: [read, grep]\n");
    const { out, run } = harness({
      start: async () => {
        throw new ConfigError(
          [{ path: "channels.web.tools[1]", message: '"grep" is not a tool' }],
          undefined,
        );
      },
    });
    expect(await run("start", "-c", "deep-start.yaml")).toBe(2);
    expect(out.stderr).toContain(`Config: ${join(dir, "deep-start.yaml")}`);
    expect(out.stderr).toContain('✗ channels.web.tools[1] (line 3): "grep" is not a tool');
  });

  it("--port and --host (before or after the command) and PORT decide where it listens", async () => {
    writeFileSync(join(dir, "port.yaml"), "http:\n  port: 9000\n");
    const ports: number[] = [];
    const hosts: string[] = [];
    const start = async (ctx: StartContext) => {
      ports.push(ctx.config.http.port);
      hosts.push(ctx.config.http.host);
    };
    const shutdown = { shutdown: AbortSignal.abort() };
    expect(await harness({ start }, {}, shutdown).run("-c", "port.yaml", "start")).toBe(0);
    expect(await harness({ start }, { PORT: "9100" }, shutdown).run("start", "-c", "port.yaml")).toBe(0);
    expect(
      await harness({ start }, { PORT: "9100" }, shutdown).run(
        "--port",
        "0",
        "start",
        "-c",
        "port.yaml",
        "--host",
        "::1",
      ),
    ).toBe(0);
    expect(ports).toEqual([9000, 9100, 0]);
    expect(hosts).toEqual(["127.0.0.1", "127.0.0.1", "::1"]);

    const badEnv = harness({ start }, { PORT: "http" });
    expect(await badEnv.run("start")).toBe(2);
    expect(badEnv.out.stderr).toContain(
      'the PORT environment variable is "http", which is not a port number',
    );
    const open = harness({ start });
    expect(await open.run("start", "--host", "0.0.0.0")).toBe(2);
    expect(open.out.stderr).toContain('http.token: is required when http.host is "0.0.0.0"');
  });
});

describe("health", () => {
  it("asks /healthz where start would listen: 0 when it answers, 1 when nothing does, 2 for port 0", async () => {
    const server = createServer((req, res) => {
      res.writeHead(req.url === "/healthz" ? 200 : 404).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const up = harness({}, { PORT: String(port) });
      expect(await up.run("health")).toBe(0);
      expect(up.out.stdout).toBe(`healthy: http://127.0.0.1:${port}/healthz answered 200\n`);
      const wildcard = harness({}, { PORT: String(port), SWITCHBOARD_HTTP_TOKEN: "t".repeat(20) });
      expect(await wildcard.run("health", "--host", "0.0.0.0")).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const down = harness({}, { PORT: String(port) });
    expect(await down.run("health")).toBe(1);
    expect(down.out.stderr).toContain(`not healthy: nothing answered at http://127.0.0.1:${port}/healthz`);
    const anyPort = harness();
    expect(await anyPort.run("health", "--port", "0")).toBe(2);
    expect(anyPort.out.stderr).toContain("no fixed address to ask");
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
