import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/agent/session/compaction/index.js";
import {
  ConfigError,
  DEFAULT_BASH_APPROVAL_PATTERNS,
  findConfigFile,
  formatIssue,
  loadConfig,
  loadConfigOrThrow,
  parseConfigText,
} from "../../src/gateway/config/index.js";

const root = mkdtempSync(join(tmpdir(), "sb-config-defaults-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function freshDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe("running without a config file", () => {
  it("is valid: embedded runtime, web chat on loopback, every default filled", () => {
    const cwd = freshDir("empty");
    const r = loadConfig({ env: {}, cwd });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.file).toBeUndefined();
    const c = r.config;
    expect(c.runtime).toEqual({
      keyPrefix: "sb:",
      waitReplicas: 0,
      waitReplicasTimeoutMs: 500,
      concurrency: 64,
      leaseTtlMs: 30000,
      shutdownGraceMs: 10000,
      idleEvictMs: 600000,
      dataDir: join(cwd, "data"),
    });
    expect(c.channels.web.enabled).toBe(true);
    expect([c.channels.slack.enabled, c.channels.discord.enabled, c.channels.telegram.enabled]).toEqual([
      false,
      false,
      false,
    ]);
    expect(c.http).toEqual({ host: "127.0.0.1", port: 8787 });
    expect(c.models).toEqual({
      thinkingLevel: "off",
      custom: [],
      stallTimeoutMs: 120_000,
      waitNoticeMs: 8000,
    });
    expect(c.approval).toEqual({
      bashPatterns: DEFAULT_BASH_APPROVAL_PATTERNS,
      timeoutMs: 600000,
      tools: [],
    });
    expect(c.agent.workspaceDir).toBe(join(cwd, "workspace"));
    expect(c.logging.level).toBe("info");
    expect(r.warnings).toEqual([]);
  });

  it("REDIS_URL switches to the Redis runtime and a platform token turns the web chat off", () => {
    const r = loadConfig({
      env: { REDIS_URL: "redis://127.0.0.1:6390", TELEGRAM_BOT_TOKEN: "123456:ABC-def" },
      cwd: freshDir("env-only"),
    });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.runtime.redisUrl).toBe("redis://127.0.0.1:6390");
    expect(r.config.channels.telegram.enabled).toBe(true);
    expect(r.config.channels.web.enabled).toBe(false);
  });

  it("an explicit web chat stays on beside a platform", () => {
    const cwd = freshDir("web-too");
    writeFileSync(join(cwd, "switchboard.yaml"), "channels:\n  web:\n    enabled: true\n");
    const r = loadConfig({ env: { DISCORD_BOT_TOKEN: "x".repeat(30) }, cwd });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.discord.enabled).toBe(true);
    expect(r.config.channels.web.enabled).toBe(true);
  });
});

describe("agent.compaction", () => {
  it("defaults to the engine's compaction settings, and a file can change them", () => {
    const defaults = parseConfigText("", { env: {}, baseDir: "/srv/sb" });
    if (!defaults.ok) throw new Error(defaults.issues.map(formatIssue).join("\n"));
    expect(defaults.config.agent.compaction).toEqual(DEFAULT_COMPACTION_SETTINGS);
    const set = parseConfigText("agent:\n  compaction:\n    enabled: false\n    reserveTokens: 8000\n", {
      env: {},
      baseDir: "/srv/sb",
    });
    if (!set.ok) throw new Error(set.issues.map(formatIssue).join("\n"));
    expect(set.config.agent.compaction).toEqual({
      enabled: false,
      reserveTokens: 8000,
      keepRecentTokens: 20000,
    });
  });
});

describe("finding the config file", () => {
  it("--config wins, then $SWITCHBOARD_CONFIG, then ./switchboard.yaml, then ./config/switchboard.yaml", () => {
    const cwd = freshDir("find");
    mkdirSync(join(cwd, "config"));
    writeFileSync(join(cwd, "config", "switchboard.yaml"), "logging: { level: warn }\n");
    expect(findConfigFile({ env: {}, cwd })).toBe(join(cwd, "config", "switchboard.yaml"));
    writeFileSync(join(cwd, "switchboard.yaml"), "logging: { level: debug }\n");
    expect(findConfigFile({ env: {}, cwd })).toBe(join(cwd, "switchboard.yaml"));
    expect(findConfigFile({ env: { SWITCHBOARD_CONFIG: "other.yaml" }, cwd })).toBe(join(cwd, "other.yaml"));
    expect(findConfigFile({ path: "/etc/sb.yaml", env: { SWITCHBOARD_CONFIG: "other.yaml" }, cwd })).toBe(
      "/etc/sb.yaml",
    );
    const r = loadConfig({ env: {}, cwd });
    expect(r.ok && r.config.logging.level).toBe("debug");
  });

  it("a named file that does not exist is an issue, and loadConfigOrThrow lists it", () => {
    const cwd = freshDir("missing");
    const r = loadConfig({ path: "nope.yaml", env: {}, cwd });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]?.message).toMatch(/nope\.yaml does not exist/);
    expect(() => loadConfigOrThrow({ path: "nope.yaml", env: {}, cwd })).toThrow(ConfigError);
  });
});

describe("config/switchboard.example.yaml", () => {
  const example = join(import.meta.dirname, "..", "..", "config", "switchboard.example.yaml");

  it("is valid as shipped and equals the defaults", () => {
    const fromExample = loadConfig({ path: example, env: {} });
    if (!fromExample.ok) throw new Error(fromExample.issues.map(formatIssue).join("\n"));
    const cwd = join(import.meta.dirname, "..", "..", "config");
    const defaults = loadConfig({ env: {}, cwd: freshDir("compare") });
    if (!defaults.ok) throw new Error("defaults invalid");
    const strip = (c: typeof fromExample.config) => ({
      ...c,
      agent: { ...c.agent, workspaceDir: "" },
      runtime: { ...c.runtime, dataDir: "" },
    });
    expect(strip(fromExample.config)).toEqual(strip(defaults.config));
    expect(fromExample.config.runtime.dataDir).toBe(join(cwd, "data"));
  });

  it("turns on what the environment provides", () => {
    const r = loadConfig({
      path: example,
      env: {
        SLACK_BOT_TOKEN: "xoxb-1-2-abc",
        SLACK_APP_TOKEN: "xapp-1-A-1-abc",
        SWITCHBOARD_HTTP_TOKEN: "s3cret-value-0123456",
      },
    });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.slack).toMatchObject({ enabled: true, mode: "socket" });
    expect(r.config.http.token).toBe("s3cret-value-0123456");
  });

  it("documents every line: each setting has a comment above it or beside it", () => {
    const lines = readFileSync(example, "utf8").split("\n");
    const settings = lines
      .map((line, i) => ({ line, i }))
      .filter(
        ({ line }) =>
          /^\s*[a-zA-Z]+:/.test(line) &&
          !/^\s*(channels|models|agent|runtime|approval|extensions|http|logging):$/.test(line),
      );
    const undocumented = settings.filter(({ line, i }) => {
      if (line.includes(" # ")) return false;
      const indent = line.search(/\S/);
      // Walk up over the block of sibling settings that share one comment (e.g. repeated channel fields).
      for (let j = i - 1; j >= 0; j--) {
        const prev = lines[j] as string;
        if (prev.trim().startsWith("#")) return false;
        if (prev.search(/\S/) < indent || prev.trim() === "") break;
      }
      return !/^\s*(admins|allowedUsers|allowedChannels|requireMention|dmPolicy|deliveryMode|collectWindowMs|inboxCap|ackReaction|historyLimit|webhook|path):/.test(
        line,
      );
    });
    expect(undocumented.map((u) => u.line.trim())).toEqual([]);
  });
});
