/**
 * The first minutes of a newcomer, as child processes from a fresh directory: `switchboard --help`,
 * then `check` on each config mistake people make (exit 2, the line of the problem and a hint) and
 * `start` on the same file, which refuses it with the same lines; Redis down gets one clear line
 * from both. Options may come before the command.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { CliProcess } from "./support/cli-process.js";
import { type CliRun, switchboard } from "./support/cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory holding `switchboard.yaml` with `yaml` (found without --config). */
function freshDir(yaml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-newcomer-"));
  dirs.push(dir);
  if (yaml !== undefined) writeFileSync(join(dir, "switchboard.yaml"), yaml);
  return dir;
}

const problems = (text: string) => text.split("\n").filter((l) => l.startsWith("  ✗ "));

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

describe("switchboard from a fresh directory", () => {
  it("--help lists the commands, and each command has its own help", async () => {
    const cwd = freshDir();
    const help = await switchboard(["--help"], { cwd });
    expect(help.code).toBe(0);
    for (const c of ["start", "check", "health", "export", "import", "register-commands"]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${c}\\b`, "m"));
    }
    const check = await switchboard(["check", "--help"], { cwd });
    expect(check.stdout).toContain("--offline");
    expect(check.stdout).toContain("--port <port>");
  });

  it("check with no config says it is valid, and that without a model key the chat answers with set-up steps", async () => {
    const cwd = freshDir();
    const bare = await switchboard(["check", "--offline"], { cwd });
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain("✓ valid");
    expect(bare.stdout).toContain(
      "! no model has credentials here: threads will answer with set-up instructions",
    );
    const keyed = await switchboard(["check", "--offline"], {
      cwd,
      env: { ANTHROPIC_API_KEY: "sk-ant-placeholder" },
    });
    expect(keyed.stdout).toMatch(/^ {2}new threads use anthropic\//m);
  });

  // Each mistake: what to write (and the environment), and what check must say about it (the line, and a hint).
  const mistakes: {
    name: string;
    yaml: string;
    env?: Record<string, string>;
    /** How start is run (default on any free port). */
    startArgs?: string[];
    expected: (string | RegExp)[];
  }[] = [
    {
      name: "a Telegram token of the wrong shape",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${VAR} reference
      yaml: "channels:\n  telegram:\n    botToken: ${TG_TOKEN}\n",
      env: { TG_TOKEN: "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw" },
      expected: [
        "✗ channels.telegram.botToken (line 3): is not a BotFather token: it has the shape <bot id>:<secret>",
      ],
    },
    {
      name: "a data directory that cannot be created",
      yaml: "runtime:\n  dataDir: ./switchboard.yaml/data\n",
      expected: [
        /✗ runtime\.dataDir \(line 2\): \/.*\/switchboard\.yaml\/data cannot be created: \/.*\/switchboard\.yaml is a file, not a directory/,
      ],
    },
    {
      name: "a workspace directory that cannot be created",
      yaml: "agent:\n  workspaceDir: ./switchboard.yaml/workspace\n",
      expected: [/✗ agent\.workspaceDir \(line 2\): .* is a file, not a directory; choose another directory/],
    },
    {
      name: "the worker role without Redis",
      yaml: "logging:\n  level: warn\n",
      env: { SWITCHBOARD_ROLE: "worker" },
      expected: [
        "✗ runtime.redisUrl: is required by role worker (--role or SWITCHBOARD_ROLE), so that gateways and workers share work",
      ],
    },
    {
      name: "an extension module that does not exist",
      yaml: "# extensions\nextensions:\n  modules: [./my-extension.js]\n",
      expected: [
        /✗ extensions\.modules\[0\] \(line 3\): cannot be loaded: no such file: \/.*\/my-extension\.js/,
      ],
    },
    {
      name: "an unknown model id under a known provider",
      yaml: "models:\n  default: fake/nope\n  custom:\n    - { provider: fake, id: fake-1, api: openai-completions, baseUrl: http://127.0.0.1:9/v1 }\n",
      expected: ['✗ models.default (line 2): "fake/nope" is not a known model; did you mean "fake/fake-1"?'],
    },
    {
      name: "a model id that does not exist",
      yaml: "models:\n  default: anthropic/claude-sonet-4-5\n",
      expected: [
        /✗ models\.default \(line 2\): "anthropic\/claude-sonet-4-5" is not a known model; the closest are "anthropic\/claude-sonnet-4-5"/,
        "docs/providers.md lists the built-in models; add your own under models.custom",
      ],
    },
    {
      name: "tool names no extension provides (the grep/find recipe)",
      yaml: "channels:\n  web:\n    tools: [read, grep, find, ls]\n",
      expected: [
        '✗ channels.web.tools[1] (line 3): "grep" is not a tool',
        '✗ channels.web.tools[2] (line 3): "find" is not a tool',
        "The tools are bash, read, write, edit, ls, send_file, spawn_sub_agent (docs/tools.md)",
      ],
    },
    {
      name: "an approval rule for a misspelled tool",
      yaml: "approval:\n  tools: [bassh]\n",
      expected: ['✗ approval.tools[0] (line 2): "bassh" is not a tool; did you mean "bash"?'],
    },
    {
      name: "an approval pattern that is not a regular expression",
      yaml: 'approval:\n  bashPatterns: ["\\\\bsudo\\\\b", "(rm -rf"]\n',
      expected: [/✗ approval\.bashPatterns\[1\] \(line 2\): is not a valid regular expression \(.*\)/],
    },
    {
      name: "a Redis address that is not a URL",
      yaml: "runtime:\n  redisUrl: redis://localhost:six\n",
      expected: ["✗ runtime.redisUrl (line 2): is not a valid URL; write redis://host:6379"],
    },
    {
      name: "a value of the wrong kind, with the line of the field",
      yaml: "# Telegram\nchannels:\n  telegram:\n    enabled: false\n    mode: poll\n",
      expected: ['✗ channels.telegram.mode (line 5): must be one of "polling", "webhook" (got "poll")'],
    },
    {
      name: "one bad indent (one problem, with the lines and a hint)",
      yaml: "channels:\n  web:\n    enabled: true\n   admins: [me]\nhttp:\n  port: 0\n",
      expected: [
        "✗ line 4, column 1: YAML syntax: All mapping items must start at the same column; indent every key",
        "      3 |     enabled: true",
        "      4 |    admins: [me]",
        "1 problem in the config.",
      ],
    },
  ];

  for (const m of mistakes) {
    it(`check and start refuse ${m.name} with the same lines (exit 2)`, async () => {
      const cwd = freshDir(m.yaml);
      const env = m.env ?? {};
      const [check, start] = await Promise.all([
        switchboard(["check", "--offline"], { cwd, env }),
        switchboard(m.startArgs ?? ["start", "--port", "0"], { cwd, env }),
      ]);
      expect(check.code, check.stdout + check.stderr).toBe(2);
      for (const e of m.expected) {
        if (typeof e === "string") expect(check.stdout).toContain(e);
        else expect(check.stdout).toMatch(e);
      }
      expect(start.code, start.stdout + start.stderr).toBe(2);
      expect(problems(start.stderr)).toEqual(problems(check.stdout));
      expect(start.stdout).toBe("");
    });
  }

  it("check and start refuse a port another process listens on, with the same line (exit 2)", async () => {
    // Another program on the port: it hangs up on whoever connects (not a Switchboard).
    const taken = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const cwd = freshDir(`http:\n  port: ${port}\n`);
      const [check, start] = await Promise.all([
        switchboard(["check", "--offline"], { cwd }),
        switchboard(["start"], { cwd }),
      ]);
      expect(check.code, check.stdout + check.stderr).toBe(2);
      expect(check.stdout).toContain(
        `✗ http.port (line 2): ${port} on 127.0.0.1 is in use by another process; stop it, or choose another port (--port, PORT or http.port)`,
      );
      expect(start.code, start.stdout + start.stderr).toBe(2);
      expect(problems(start.stderr)).toEqual(problems(check.stdout));
      expect(start.stdout).toBe("");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("check while this config's Switchboard runs warns about its port; a second start refuses it", async () => {
    const port = await closedPort();
    const cwd = freshDir(`http:\n  port: ${port}\nlogging:\n  level: warn\n`);
    const running = new CliProcess(["start"], { cwd, env: {} });
    try {
      await running.waitForLine(/^Listening on /);
      const [check, start] = await Promise.all([
        switchboard(["check", "--offline"], { cwd }),
        switchboard(["start"], { cwd }),
      ]);
      expect(check.code, check.stdout).toBe(0);
      expect(check.stdout).toContain(
        `! http.port: ${port} on 127.0.0.1 is in use by a running Switchboard; start refuses it until that one stops`,
      );
      expect(start.code).toBe(2);
      expect(problems(start.stderr)).toEqual([
        `  ✗ http.port (line 2): ${port} on 127.0.0.1 is in use by a running Switchboard; stop it, or choose another port (--port, PORT or http.port)`,
      ]);
    } finally {
      expect(await running.stop()).toBe(0);
    }
  });

  it("check reports an extension that fails while loading in a line of its own, not a log line (exit 0, as start runs)", async () => {
    const cwd = freshDir("extensions:\n  modules: [./needs-token.mjs]\n");
    writeFileSync(
      join(cwd, "needs-token.mjs"),
      'export default () => { throw new Error("NEEDS_TOKEN is not set"); };\n',
    );
    const r = await switchboard(["check", "--offline"], { cwd });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '  ! extension "needs-token" fails while loading and would be disabled: NEEDS_TOKEN is not set',
    );
    expect(r.stdout + r.stderr).not.toContain('{"level"');
  });

  it("check --role worker names what the role needs, like start --role worker", async () => {
    const cwd = freshDir();
    const [check, start] = await Promise.all([
      switchboard(["check", "--offline", "--role", "worker"], { cwd }),
      switchboard(["start", "--role", "worker", "--port", "0"], { cwd }),
    ]);
    expect(check.code).toBe(2);
    expect(start.code).toBe(2);
    expect(problems(check.stdout)).toHaveLength(1);
    expect(problems(start.stderr)).toEqual(problems(check.stdout));
  });

  it("takes --config before the command", async () => {
    const cwd = freshDir();
    writeFileSync(join(cwd, "team.yaml"), "models:\n  default: fake/nope\n");
    const r = await switchboard(["--config", "team.yaml", "check", "--offline"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`Config: ${join(cwd, "team.yaml")}`);
    expect(r.stdout).toContain('✗ models.default (line 2): "fake/nope" is not a known model');
  });

  describe("a platform that refuses the token", () => {
    let telegram: FakeTelegram;
    beforeAll(async () => {
      telegram = await new FakeTelegram().start();
    });
    afterAll(async () => {
      await telegram?.close();
    });

    it("is a config error for check (exit 2), naming the variable to fix and never the token", async () => {
      const cwd = freshDir(`channels:\n  telegram:\n    apiRoot: ${telegram.apiRoot()}\n`);
      const env = { TELEGRAM_BOT_TOKEN: "7000:WRONG-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
      const r = await switchboard(["check"], { cwd, env });
      expect(r.code).toBe(2);
      expect(r.stdout).toContain(
        "✗ telegram: HTTP 401: Unauthorized: the token was refused; set TELEGRAM_BOT_TOKEN (or channels.telegram.botTokenFile)",
      );
      expect(r.stdout + r.stderr).not.toContain("WRONG-aaaa");
      const ok = await switchboard(["check"], { cwd, env: { TELEGRAM_BOT_TOKEN: telegram.token } });
      expect(ok.stdout).toContain("✓ telegram: bot @");
      expect(ok.code).toBe(0);
    });

    it("with the right token, start --port 0 prints the address it listens on and serves /healthz", async () => {
      const cwd = freshDir(
        `channels:\n  telegram:\n    apiRoot: ${telegram.apiRoot()}\nlogging:\n  level: warn\n`,
      );
      const p = new CliProcess(["start", "--port", "0"], {
        cwd,
        env: { TELEGRAM_BOT_TOKEN: telegram.token },
      });
      try {
        const [, url] = await p.waitForLine(/^Listening on (http:\/\/127\.0\.0\.1:\d+) \(role all\)$/);
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      } finally {
        expect(await p.stop()).toBe(0);
      }
    });
  });

  describe("with Redis down", () => {
    let down: number;
    let run: (args: string[]) => Promise<CliRun>;
    beforeAll(async () => {
      down = await closedPort();
      const cwd = freshDir();
      run = (args) => switchboard(args, { cwd, env: { REDIS_URL: `redis://127.0.0.1:${down}` } });
    });

    it("start says so in one line and exits 1, without a stream of log lines first", async () => {
      const r = await run(["start", "--port", "0"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `switchboard start: Redis at 127.0.0.1:${down} is not reachable (connect ECONNREFUSED 127.0.0.1:${down}). ` +
          "Start Redis, or fix runtime.redisUrl / REDIS_URL.\n",
      );
      expect(r.stdout).not.toContain('"level":"error"');
      expect(r.stdout).not.toContain("redis connection error");
    });

    it("check names the address, the cause and the fix (exit 1)", async () => {
      const r = await run(["check"]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(
        `✗ redis: not reachable at 127.0.0.1:${down} (connect ECONNREFUSED 127.0.0.1:${down}). Start Redis, or fix runtime.redisUrl / REDIS_URL`,
      );
    });
  });
});
