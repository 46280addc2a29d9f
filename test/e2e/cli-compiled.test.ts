/**
 * The compiled program as a user gets it: built first (scripts/build.js, what `npm install` runs)
 * into a package directory of its own (so the repository's dist/ is never touched while tests run),
 * installed globally into a prefix of its own (`npm install -g <dir>`, which links it), then run as
 * `npx switchboard` from a fresh directory. The other CLI tests run the TypeScript sources through
 * tsx, so an edited source is never tested through a stale build; this one proves the build: the
 * bin entry, the copied assets, the precompiled config validator (it must report exactly what the
 * sources report) and a start that serves.
 */
import { spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess, switchboard } from "./support/cli-run.js";
import { until } from "./support/world.js";

const repo = join(import.meta.dirname, "..", "..");
const root = mkdtempSync(join(tmpdir(), "sb-compiled-"));
const pkg = join(root, "switchboard");
const globalPrefix = join(root, "global");
const user = join(root, "home");
// The user's own npm settings and cache: nothing leaks into (or out of) the real home directory.
const npmEnv = { HOME: user, npm_config_prefix: globalPrefix, npm_config_cache: join(user, ".npm") };

/** `npx switchboard …` from the user's directory, finding the globally installed command. */
const npx = (args: string[], env: Record<string, string> = {}) =>
  runProcess("npx", ["--offline", "switchboard", ...args], { cwd: user, env: { ...npmEnv, ...env } });

/** What the build printed (it says what it does, also when npx hides it from the terminal). */
let built: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  mkdirSync(pkg);
  mkdirSync(user);
  // The build imports what it compiled (to precompile the config validator): packages must resolve.
  symlinkSync(join(repo, "node_modules"), join(pkg, "node_modules"));
  // A checkout as `npm install` leaves it: its files first, then the build (whose stamp is newer).
  cpSync(join(repo, "package.json"), join(pkg, "package.json"));
  cpSync(join(repo, "bin"), join(pkg, "bin"), { recursive: true });
  cpSync(join(repo, "scripts", "build.js"), join(pkg, "scripts", "build.js"));
  built = await runProcess(
    process.execPath,
    [join(repo, "scripts", "build.js"), "--out-dir", join(pkg, "dist")],
    {
      cwd: repo,
    },
  );
  if (built.code !== 0) throw new Error(`the build failed:\n${built.stdout}${built.stderr}`);
  // Built already, so no `prepare` (npm does not run it for a linked folder either).
  const installed = await runProcess(
    "npm",
    ["install", "--global", pkg, "--offline", "--ignore-scripts", "--no-audit", "--no-fund"],
    { cwd: user, env: npmEnv },
  );
  if (installed.code !== 0) throw new Error(`npm install -g failed:\n${installed.stdout}${installed.stderr}`);
}, 240_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the compiled switchboard", () => {
  it("answers npx switchboard --help from a fresh directory, with no TypeScript at run time", async () => {
    const r = await npx(["--help"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: switchboard [command] [options]");
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as {
      bin: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(manifest.bin.switchboard).toBe("bin/switchboard.js");
    expect(Object.keys(manifest.dependencies)).not.toContain("tsx");
    expect(Object.keys(manifest.dependencies)).not.toContain("typescript");
  });

  it("reports a broken config exactly as the sources do (the precompiled validator)", async () => {
    writeFileSync(
      join(user, "switchboard.yaml"),
      [
        "channels:",
        "  telegram:",
        "    mode: poll",
        "    requireMentoin: false",
        "  slack: { admins: [U1], inboxCap: 0 }",
        "models:",
        "  custom:",
        "    - { provider: local, id: m1, api: openai, contextWindow: -1 }",
        "runtime:",
        "  concurrency: lots",
        "http:",
        "  port: 70000",
        "",
      ].join("\n"),
    );
    const [compiled, sources] = await Promise.all([
      npx(["check", "--offline"]),
      switchboard(["check", "--offline"], { cwd: user }),
    ]);
    expect(compiled.code).toBe(2);
    expect(compiled.stdout).toContain(
      '✗ channels.telegram.mode (line 3): must be one of "polling", "webhook"',
    );
    expect(compiled.stdout).toBe(sources.stdout);
    rmSync(join(user, "switchboard.yaml"));
  });

  it("a first npx switchboard in a built checkout answers without building it again", async () => {
    // npx installs the checkout it runs in into its own cache and runs `prepare` there: with a
    // complete build that is up to date, prepare builds nothing (it was half a minute of tsc).
    expect(built.stderr).toContain(
      "build: compiling src/ into dist/ (about half a minute; once after each change)",
    );
    const before = statSync(join(pkg, "dist", "main.js")).mtimeMs;
    const r = await runProcess("npx", ["--offline", "switchboard", "--version"], {
      cwd: pkg,
      env: { HOME: user, npm_config_cache: join(root, "fresh-npm-cache") },
    });
    expect(r.stdout, r.stderr).toMatch(/^switchboard \d+\.\d+\.\d+\n$/);
    expect(r.code).toBe(0);
    expect(statSync(join(pkg, "dist", "main.js")).mtimeMs).toBe(before);
  });

  it("start --port 0 prints its address, serves it, answers `health`, and stops on SIGTERM", async () => {
    const child = spawn(join(globalPrefix, "bin", "switchboard"), ["start", "--port", "0"], {
      cwd: user,
      env: { PATH: process.env.PATH ?? "", HOME: user },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      const url = await until(
        () => /^Listening on (http:\/\/127\.0\.0\.1:\d+) \(role all\)$/m.exec(out)?.[1],
        "the address it listens on",
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(out).toMatch(new RegExp(`^Web chat: ${url}/\\?token=[A-Za-z0-9_-]{40,}$`, "m"));
      const port = new URL(url).port;
      const health = await npx(["health", "--port", port]);
      expect(health.stdout).toBe(`healthy: http://127.0.0.1:${port}/healthz answered 200\n`);
      expect(health.code).toBe(0);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
