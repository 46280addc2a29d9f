/**
 * The CLI's other commands over the real wiring (in process, through `runCli` with the handlers
 * `src/main.ts` uses): `check` reaches Redis and each platform fake with the configured
 * credentials and names what fails; `import` then `export` round-trips a pi session through the
 * Redis store and the file store; `register-commands` puts the commands into Telegram's and
 * Discord's menus.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCliHandlers } from "../../src/gateway/app/index.js";
import { runCli } from "../../src/gateway/cli/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { World } from "./support/world.js";

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

let world: World;
beforeAll(async () => {
  world = await World.create();
});
afterAll(async () => {
  await world?.close();
});

async function cli(args: string[], env: Record<string, string> = world.env(), cwd = world.dir) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    handlers: createCliHandlers(),
    io: {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
    },
    env,
    cwd,
    handleSignals: false,
    createLogger: () => silentProcessLogger(),
  });
  return { code, stdout, stderr };
}

const SESSION = [
  {
    type: "session",
    version: 3,
    id: "0b6f4c1e-8a53-4d1e-9c3a-5e2b7d9f1a00",
    timestamp: "2025-05-01T09:30:00.000Z",
    cwd: "x",
  },
  {
    type: "message",
    id: "a1b2c3d4",
    parentId: null,
    timestamp: "2025-05-01T09:30:01.000Z",
    message: { role: "user", content: [{ type: "text", text: "imported hello" }], timestamp: 1 },
  },
]
  .map((l) => JSON.stringify(l))
  .join("\n");

describe("switchboard check", () => {
  it("reaches Redis and every enabled platform with the configured credentials", async () => {
    const config = world.writeConfig("check.yaml");
    const r = await cli(["check", "--config", config]);
    expect(r.stdout).toContain("✓ valid");
    expect(r.stdout).toMatch(/✓ redis: PONG/);
    expect(r.stdout).toMatch(/✓ telegram: bot @switchboard_bot/);
    expect(r.stdout).toMatch(/✓ slack: team T0FAKE/);
    expect(r.stdout).toMatch(/✓ discord: bot /);
    expect(r.code).toBe(0);
  });

  it("names the platform whose token is refused, without printing the token: a config error (exit 2)", async () => {
    const config = world.writeConfig("check-bad.yaml", { channels: ["telegram"] });
    const env = { ...world.env(), TELEGRAM_BOT_TOKEN: "7000:WRONG-TOKEN-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
    const r = await cli(["check", "--config", config], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/✗ telegram: HTTP 40[14]: .*the token was refused; set TELEGRAM_BOT_TOKEN/);
    expect(r.stdout + r.stderr).not.toContain("WRONG-TOKEN");
  });

  it("with Redis down, says where it looked and what to do (exit 1)", async () => {
    const down = await closedPort();
    const config = join(world.dir, "check-no-redis.yaml");
    const yaml = world.yaml({ channels: ["telegram"] });
    writeFileSync(config, yaml.replace(/redisUrl: .*/, `redisUrl: redis://127.0.0.1:${down}`));
    const r = await cli(["check", "--config", config]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `✗ redis: not reachable at 127.0.0.1:${down} (connect ECONNREFUSED 127.0.0.1:${down}). Start Redis, or fix runtime.redisUrl / REDIS_URL`,
    );
    expect(r.stdout).not.toContain("Connection is closed");
  });

  it("an unknown model id and an unknown tool name are config errors with the closest known names", async () => {
    const config = join(world.dir, "check-deep.yaml");
    const yaml = world.yaml({ channels: ["telegram"] });
    writeFileSync(
      config,
      `${yaml.replace("default: alpha/one", "default: anthropic/claude-sonet-4-5")}\napproval:\n  tools: [bsh]\n`,
    );
    const r = await cli(["check", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(
      /✗ models.default \(line \d+\): "anthropic\/claude-sonet-4-5" is not a known model; the closest are "anthropic\/claude-sonnet-4-5"/,
    );
    expect(r.stdout).toMatch(
      /✗ approval.tools\[0\] \(line \d+\): "bsh" is not a tool; did you mean "bash"\?/,
    );
    expect(r.stdout).not.toContain("Reachability");
  });
});

describe("switchboard import and export", () => {
  it("round-trips a session through Redis", async () => {
    const config = world.writeConfig("sessions.yaml");
    const file = join(world.dir, "session.jsonl");
    writeFileSync(file, `${SESSION}\n`);
    const imported = await cli(["import", file, "--thread", "web:crestored", "--config", config]);
    expect(imported.stderr).toBe("");
    expect(imported.stdout).toContain("into thread web:crestored");
    const exported = await cli(["export", "web:crestored", "--config", config]);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]?.type).toBe("session");
    expect(exported.stdout).toContain("imported hello");
  });

  it("round-trips a session through the file store without Redis", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "sb-files-"));
    try {
      const file = join(cwd, "session.jsonl");
      writeFileSync(file, `${SESSION}\n`);
      const imported = await cli(["import", file, "--thread", "web:clocalcopy"], {}, cwd);
      expect(imported.code).toBe(0);
      const exported = await cli(["export", "web:clocalcopy"], {}, cwd);
      expect(exported.code).toBe(0);
      expect(exported.stdout).toContain("imported hello");
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("says which thread has no session, and lists a thread's sessions for an unknown --session", async () => {
    const config = world.writeConfig("sessions.yaml");
    const r = await cli(["export", "web:nothing-here", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("switchboard export: thread web:nothing-here has no sessions in Redis.");
    const file = join(world.dir, "session-for-ids.jsonl");
    writeFileSync(file, `${SESSION}\n`);
    await cli(["import", file, "--thread", "web:clisted", "--config", config]);
    const nope = await cli(["export", "web:clisted", "--session", "nope", "--config", config]);
    expect(nope.code).toBe(2);
    expect(nope.stderr).toContain('thread web:clisted has no session "nope". Its sessions:');
    expect(nope.stderr).toContain("0b6f4c1e-8a53-4d1e-9c3a-5e2b7d9f1a00");
    expect(nope.stderr).toContain("switchboard export web:clisted --session <id>");
    expect(nope.stderr).not.toContain("listSessions");
  });
});

describe("switchboard register-commands", () => {
  it("puts the commands into Telegram's and Discord's menus", async () => {
    const config = world.writeConfig("commands.yaml", { channels: ["telegram", "discord"] });
    const r = await cli(["register-commands", "--config", config]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^telegram: \d+ commands registered$/m);
    expect(r.stdout).toMatch(/^discord: \d+ commands registered$/m);
    const names = world.telegram.commands.at(-1)?.map((c) => c.command) ?? [];
    expect(names).toEqual(
      expect.arrayContaining(["model", "thinking", "new", "stop", "status", "approve", "deny"]),
    );
    expect(world.discord.rest.commands.length).toBeGreaterThan(0);
  });

  it("registers Discord's commands in the configured guild", async () => {
    const config = world.writeConfig("guild-commands.yaml", { channels: ["discord"] });
    const yaml = readFileSync(config, "utf8").replace(
      `    apiUrl: ${world.discord.apiUrl}`,
      `    apiUrl: ${world.discord.apiUrl}\n    guildId: "424242"`,
    );
    writeFileSync(config, yaml);
    const before = world.discord.rest.commands.length;
    const r = await cli(["register-commands", "--config", config]);
    expect(r.code).toBe(0);
    expect(world.discord.rest.commands.slice(before).map((c) => c.scope)).toEqual(["guild"]);
  });
});
