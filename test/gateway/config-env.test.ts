// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references
import { describe, expect, it } from "vitest";
import { formatIssue, parseConfigText, substituteString } from "../../src/gateway/config/index.js";

function load(yaml: string, env: Record<string, string>) {
  return parseConfigText(yaml, { env, baseDir: "/srv/sb" });
}

describe("${ENV_VAR} substitution", () => {
  it("replaces references inside values and applies defaults", () => {
    expect(substituteString("redis://${HOST}:${PORT:-6379}/0", { HOST: "cache" })).toEqual({
      ok: true,
      value: "redis://cache:6379/0",
    });
    // The default also applies to a variable set to the empty string, like the shell's ":-".
    expect(substituteString("${LEVEL:-info}", { LEVEL: "" })).toEqual({ ok: true, value: "info" });
    expect(substituteString("costs $$5 and $${NOT_A_VAR}", {})).toEqual({
      ok: true,
      value: "costs $$5 and ${NOT_A_VAR}",
    });
  });

  it("an unset variable without default is an error naming the variable and the field", () => {
    const r = load("runtime:\n  redisUrl: ${MY_REDIS}\n", {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => formatIssue({ ...i, line: undefined }))).toEqual([
      "runtime.redisUrl: environment variable MY_REDIS is not set (set it, or give a default: ${MY_REDIS:-value})",
    ]);
  });

  it("malformed references are reported", () => {
    const r = load("agent:\n  systemPrompt: 'Hello ${NAME'\nlogging:\n  level: ${1BAD}\n", {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => formatIssue({ ...i, line: undefined }))).toEqual([
      'agent.systemPrompt: has "${" without a closing "}"',
      'logging.level: has an invalid variable reference "${1BAD}" (names are letters, digits and _)',
    ]);
  });

  it("substituted text is coerced to the number or boolean the field expects", () => {
    const r = load("http:\n  port: ${PORT:-8787}\nchannels:\n  web:\n    requireMention: ${MENTION}\n", {
      PORT: "9100",
      MENTION: "false",
    });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.http.port).toBe(9100);
    expect(r.config.channels.web.requireMention).toBe(false);
  });

  it("a reference resolving to empty leaves the field unset, so its default applies", () => {
    const r = load("runtime:\n  redisUrl: ${REDIS_URL:-}\nlogging:\n  level: ${LOG_LEVEL:-}\n", {});
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.runtime.redisUrl).toBeUndefined();
    expect(r.config.logging.level).toBe("info");
  });

  it("a variable's value cannot inject YAML structure", () => {
    const r = load("agent:\n  systemPrompt: ${PROMPT}\n", {
      PROMPT: "x\nruntime:\n  redisUrl: redis://evil",
    });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.agent.systemPrompt).toBe("x\nruntime:\n  redisUrl: redis://evil");
    expect(r.config.runtime.redisUrl).toBeUndefined();
  });

  it("substitutes inside lists too", () => {
    const r = load("channels:\n  slack:\n    admins: ['${SLACK_ADMIN}', U2]\n", { SLACK_ADMIN: "U1" });
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.slack.admins).toEqual(["U1", "U2"]);
  });
});
