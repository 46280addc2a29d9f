// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collectSecretValues, formatIssue, parseConfigText } from "../../src/gateway/config/index.js";

const dir = mkdtempSync(join(tmpdir(), "sb-config-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(yaml: string, env: Record<string, string> = {}) {
  return parseConfigText(yaml, { env, baseDir: dir });
}

function issues(yaml: string, env: Record<string, string> = {}): string[] {
  const r = load(yaml, env);
  if (r.ok) throw new Error("expected the config to be rejected");
  // The line of each field is asserted in config-validation.test.ts; here, what is said about it.
  return r.issues.map((i) => formatIssue({ ...i, line: undefined }));
}

describe("secrets come only from the environment or files", () => {
  it("a literal token is refused with the variable to use instead, and is not echoed", () => {
    const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
    const out = issues(`channels:\n  telegram:\n    botToken: "${token}"\n`);
    expect(out).toEqual([
      "channels.telegram.botToken: secrets are not accepted as literal values in the config file; use an " +
        "environment variable (botToken: ${TELEGRAM_BOT_TOKEN}) or a file (botTokenFile: /path/to/secret)",
    ]);
    expect(out.join("\n")).not.toContain(token);
  });

  it("any secret-named field is covered: signing secrets, HTTP token, API-key headers", () => {
    const out = issues(
      [
        "channels:",
        "  slack:",
        "    signingSecret: abc123",
        "http:",
        "  token: letmein",
        "models:",
        "  custom:",
        "    - provider: proxy",
        "      id: m",
        "      api: openai-completions",
        "      headers: { X-Api-Key: sk-live-123, X-Team: blue }",
      ].join("\n"),
    );
    expect(out.map((l) => l.split(":")[0])).toEqual([
      "channels.slack.signingSecret",
      "http.token",
      "models.custom[0].headers.X-Api-Key",
    ]);
    expect(out.join("\n")).not.toMatch(/abc123|letmein|sk-live-123/);
  });

  it("a secret reference with a literal default is refused; an empty default is fine", () => {
    expect(issues("channels:\n  discord:\n    botToken: ${DISCORD_TOKEN:-MTIzNDU2}\n")[0]).toMatch(
      /^channels\.discord\.botToken: secrets are not accepted as literal values/,
    );
    const r = load("channels:\n  discord:\n    botToken: ${DISCORD_TOKEN:-}\n");
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.config.channels.discord.enabled).toBe(false);
  });

  it("a password inside a literal URL is refused", () => {
    expect(issues("runtime:\n  redisUrl: redis://:hunter2secret@db:6379\n")).toEqual([
      "runtime.redisUrl: contains a password written in the file; put the whole URL in an environment variable and write ${REDIS_URL}",
    ]);
  });

  it("references resolve from the environment, and well-known variables fill absent tokens", () => {
    const r = load("channels:\n  slack:\n    botToken: ${MY_SLACK_BOT}\n", {
      MY_SLACK_BOT: "xoxb-1-2-mine",
      SLACK_APP_TOKEN: "xapp-1-A1-xyz",
      TELEGRAM_BOT_TOKEN: "123456:ABC-DEF",
    });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.slack).toMatchObject({
      enabled: true,
      botToken: "xoxb-1-2-mine",
      appToken: "xapp-1-A1-xyz",
    });
    expect(r.config.channels.telegram).toMatchObject({ enabled: true, botToken: "123456:ABC-DEF" });
    expect(r.config.channels.web.enabled).toBe(false);
    expect(r.warnings).toEqual([]);
  });

  it("a token without its partner leaves the platform off and says so", () => {
    const r = load("", { SLACK_BOT_TOKEN: "xoxb-1-2-abc" });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.slack.enabled).toBe(false);
    expect(r.config.channels.web.enabled).toBe(true);
    expect(r.warnings).toEqual([
      "channels.slack: botToken set but appToken (SLACK_APP_TOKEN) missing, so slack stays off",
    ]);
  });

  it("…File fields are read relative to the config file, trailing newline trimmed", () => {
    writeFileSync(join(dir, "tg.token"), "654321:XYZ_secret\n");
    writeFileSync(join(dir, "prompt.md"), "You are helpful.\n");
    const r = load(
      "channels:\n  telegram:\n    botTokenFile: ./tg.token\nagent:\n  systemPromptFile: prompt.md\n",
    );
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.telegram.botToken).toBe("654321:XYZ_secret");
    expect(r.config.channels.telegram.enabled).toBe(true);
    expect(r.config.agent.systemPrompt).toBe("You are helpful.");
  });

  it("a missing file, or a value and a file together, are issues", () => {
    writeFileSync(join(dir, "http.token"), "t0ken-from-file");
    const out = issues(
      "channels:\n  discord:\n    botTokenFile: /nonexistent/discord\nhttp:\n  token: ${HTTP_TOKEN}\n  tokenFile: http.token\n",
      { HTTP_TOKEN: "from-env-token-0123" },
    );
    expect(out).toEqual([
      'channels.discord.botTokenFile: cannot read file "/nonexistent/discord" (ENOENT)',
      "http.tokenFile: set either token or tokenFile, not both",
    ]);
  });

  it("refuses in tools.sandbox.env every variable a credential or header is read from, naming the field", () => {
    const yaml = [
      "channels:",
      "  telegram:",
      "    botToken: ${MY_TG}",
      "runtime:",
      "  redisUrl: ${CACHE_URL:-}",
      "models:",
      "  custom:",
      "    - provider: local",
      "      id: m1",
      "      api: openai-completions",
      "      baseUrl: http://127.0.0.1:9/v1",
      "      apiKeyEnv: LOCAL_KEY",
      "      headers:",
      "        X-Org: ${ORG_HEADER}",
      "tools:",
      "  sandbox:",
      "    env: [MY_TG, CACHE_URL, LOCAL_KEY, ORG_HEADER, ANTHROPIC_API_KEY, SLACK_BOT_TOKEN, HARMLESS]",
      "",
    ].join("\n");
    const out = issues(yaml, { MY_TG: "1:x", ORG_HEADER: "acme", HARMLESS: "ok" });
    const fed = (i: number, name: string, field: string) =>
      `tools.sandbox.env[${i}]: is ${name}, which holds one of Switchboard's own credentials (it feeds ${field}); tool processes must not see it, since every chat user can read what they get. Remove it from tools.sandbox.env`;
    expect(out).toEqual([
      fed(0, "MY_TG", "channels.telegram.botToken"),
      fed(1, "CACHE_URL", "runtime.redisUrl"),
      fed(2, "LOCAL_KEY", "models.custom[0].apiKeyEnv"),
      fed(3, "ORG_HEADER", "models.custom[0].headers.X-Org"),
      fed(4, "ANTHROPIC_API_KEY", "the provider's API key"),
      fed(5, "SLACK_BOT_TOKEN", "channels.slack.botToken"),
    ]);
  });

  it("collectSecretValues finds every secret of a resolved config for the log redactor", () => {
    const env = {
      REDIS: "redis://:p%40ssw0rd@db:6379",
      DISCORD_BOT_TOKEN: "discord-token-value",
      SWITCHBOARD_HTTP_TOKEN: "http-token-value",
    };
    const r = load("runtime:\n  redisUrl: ${REDIS}\n", env);
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(collectSecretValues(r.config, env).sort()).toEqual([
      "discord-token-value",
      "http-token-value",
      "p%40ssw0rd",
      "p@ssw0rd",
      "redis://:p%40ssw0rd@db:6379",
    ]);
  });

  it("collectSecretValues also finds values read for headers, custom model keys and short secrets", () => {
    const env = { PROXY_AUTH: "prx-7", LOCAL_KEY: "lk-1", MY_TG: "123:short", OPENAI_API_KEY: "oa" };
    const r = load(
      [
        "channels:",
        "  telegram:",
        "    enabled: false",
        "    botToken: ${MY_TG}",
        "models:",
        "  custom:",
        "    - provider: local",
        "      id: m1",
        "      api: openai-completions",
        "      baseUrl: http://127.0.0.1:9/v1",
        "      apiKeyEnv: LOCAL_KEY",
        "      headers:",
        "        X-Proxy: ${PROXY_AUTH}",
        "",
      ].join("\n"),
      env,
    );
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(collectSecretValues(r.config, env).sort()).toEqual(["123:short", "lk-1", "oa", "prx-7"]);
  });
});
