import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { redisUrl } from "../support/redis.js";

const repo = join(import.meta.dirname, "..", "..");
const tsx = join(repo, "node_modules", ".bin", "tsx");
const entry = join(import.meta.dirname, "fixtures", "cli-entry.ts");
const dir = mkdtempSync(join(tmpdir(), "sb-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A clean environment: no REDIS_URL or platform tokens leaking in from the test runner.
const baseEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir };

function launch(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(tsx, [entry, ...args], {
    cwd: dir,
    env: { ...baseEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function run(args: string[], env: Record<string, string> = {}) {
  const child = launch(args, env);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("switchboard CLI as a process", () => {
  it("check reports a broken config with the path of each error and exits 2", async () => {
    const broken = file(
      "broken.yaml",
      "channels:\n  telegram:\n    mode: poll\n    botToken: 123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\nhttp:\n  port: -1\n",
    );
    const r = await run(["check", "--config", broken]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`Config: ${broken}`);
    expect(r.stdout).toContain(
      '✗ channels.telegram.mode (line 3): must be one of "polling", "webhook" (got "poll")',
    );
    expect(r.stdout).toContain(
      "✗ channels.telegram.botToken (line 4): secrets are not accepted as literal values",
    );
    expect(r.stdout).toContain("✗ http.port (line 6): must be >= 0 (got -1)");
    expect(r.stdout).toContain("3 problems in the config.");
    expect(r.stdout + r.stderr).not.toContain("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
  });

  it("check with a valid config summarises it and probes Redis", async () => {
    const r = await run(["check"], { REDIS_URL: redisUrl(), TELEGRAM_BOT_TOKEN: "123456:ABC-token" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✓ valid");
    expect(r.stdout).toContain("channels: telegram (polling)");
    expect(r.stdout).toContain("✓ redis: PONG");
  });

  it("start serves until SIGTERM, then shuts down and exits 0", async () => {
    const config = file("serve.yaml", "http:\n  port: 0\nlogging:\n  level: warn\n");
    const child = launch(["start", "--config", config]);
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      child.on("close", (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
    });
    expect(out).toContain("role all, web chat on");
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
