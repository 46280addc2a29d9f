import { describe, expect, it } from "vitest";
import { type ConfigIssue, formatIssue, parseConfigText } from "../../src/gateway/config/index.js";

function issuesOf(yaml: string, env: Record<string, string> = {}): string[] {
  const r = parseConfigText(yaml, { env, baseDir: "/srv/sb" });
  if (r.ok) throw new Error("expected the config to be rejected");
  // The line of each field is asserted in its own test; here, what is said about it.
  return r.issues.map((i: ConfigIssue) => formatIssue({ ...i, line: undefined }));
}

describe("config validation errors name the field and what was expected", () => {
  it("an enum value gives the allowed values and what was written", () => {
    expect(issuesOf("channels:\n  telegram:\n    mode: poll\n")).toEqual([
      'channels.telegram.mode: must be one of "polling", "webhook" (got "poll")',
    ]);
  });

  it("a misspelled field is unknown, with the likely intended name", () => {
    expect(issuesOf("channels:\n  slack:\n    requireMentoin: false\n")).toEqual([
      'channels.slack.requireMentoin: unknown field; did you mean "requireMention"?',
    ]);
    expect(issuesOf("runtim:\n  concurrency: 2\n")).toEqual([
      'runtim: unknown field; did you mean "runtime"?',
    ]);
  });

  it("wrong types, ranges and patterns say what is expected", () => {
    const issues = issuesOf(
      [
        "http:",
        "  port: eighty",
        "runtime:",
        "  concurrency: 0",
        "  redisUrl: localhost:6379",
        "models:",
        "  default: claude sonnet",
        "channels:",
        "  discord:",
        "    admins: alice",
      ].join("\n"),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        'http.port: must be a whole number (got "eighty")',
        "runtime.concurrency: must be >= 1 (got 0)",
        'runtime.redisUrl: must be a redis:// or rediss:// URL (got "localhost:6379")',
        'models.default: must be a model, e.g. "anthropic/claude-sonnet-4-5" or its bare id "claude-sonnet-4-5" (got "claude sonnet")',
        'channels.discord.admins: must be a list (got "alice")',
      ]),
    );
    expect(issues).toHaveLength(5);
  });

  it("paths into lists carry the index", () => {
    const issues = issuesOf(
      [
        "models:",
        "  custom:",
        "    - provider: ollama",
        "      id: llama3",
        "      api: openai-completions",
        "    - id: qwen",
        "      api: openai",
        "      compat: { maxTokensField: max_output }",
      ].join("\n"),
    );
    expect(issues).toEqual([
      "models.custom[1].provider: is required",
      'models.custom[1].api: must be one of "anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai" (got "openai")',
      'models.custom[1].compat.maxTokensField: must be one of "max_completion_tokens", "max_tokens" (got "max_output")',
    ]);
  });

  it("reports every problem at once, including rules across fields", () => {
    const issues = issuesOf(
      [
        "http:",
        "  host: 0.0.0.0",
        "channels:",
        "  telegram:",
        "    mode: poll",
        "approval:",
        "  bashPatterns: ['(']",
      ].join("\n"),
    );
    expect(issues).toContain('channels.telegram.mode: must be one of "polling", "webhook" (got "poll")');
    expect(issues.some((i) => i.startsWith('http.token: is required when http.host is "0.0.0.0"'))).toBe(
      true,
    );
    expect(
      issues.some((i) => i.startsWith("approval.bashPatterns[0]: is not a valid regular expression")),
    ).toBe(true);
  });

  it("a channel switched on without its token names the variable to set", () => {
    expect(issuesOf("channels:\n  discord:\n    enabled: true\n")).toEqual([
      "channels.discord.botToken: is required because channels.discord.enabled is true; set DISCORD_BOT_TOKEN or botTokenFile",
    ]);
    const slack = issuesOf("channels:\n  slack:\n    enabled: true\n    mode: http\n", {
      SLACK_BOT_TOKEN: "xoxb-1-2-abc",
    });
    expect(slack).toEqual([
      "channels.slack.signingSecret: is required because channels.slack.enabled is true; set SLACK_SIGNING_SECRET or signingSecretFile",
    ]);
  });

  it("Telegram webhook mode needs the public URL and the secret", () => {
    const issues = issuesOf("channels:\n  telegram:\n    mode: webhook\n", {
      TELEGRAM_BOT_TOKEN: "123456:ABCDEF",
    });
    expect(issues.map((i) => i.split(":")[0])).toEqual([
      "channels.telegram.webhook.url",
      "channels.telegram.webhook.secretToken",
    ]);
  });

  it("the same custom model twice is refused", () => {
    const model =
      "    - { provider: local, id: m1, api: openai-completions, baseUrl: 'http://127.0.0.1:1234/v1' }";
    expect(issuesOf(["models:", "  custom:", model, model].join("\n"))).toEqual([
      'models.custom[1]: repeats the model "local/m1" of models.custom[0]',
    ]);
  });

  it("a file that is not a mapping is reported, not thrown", () => {
    expect(issuesOf("- just\n- a list\n")).toEqual([
      "the config file must be a mapping of sections (channels:, models:, …)",
    ]);
  });

  it("an HTTP token too short to resist guessing is refused, without echoing it", () => {
    const out = issuesOf("", { SWITCHBOARD_HTTP_TOKEN: "hunter2" });
    expect(out).toEqual(["http.token: must have at least 16 characters"]);
  });

  it("numeric ids are taken as strings, and x- blocks with YAML merge keys share settings", () => {
    const r = parseConfigText(
      [
        "x-team: &team",
        "  admins: [123456789]",
        "  deliveryMode: collect",
        "channels:",
        "  telegram:",
        "    <<: *team",
        "    allowedChannels: [-1001234567890]",
        "  web:",
        "    <<: *team",
      ].join("\n"),
      { env: {}, baseDir: "/srv/sb" },
    );
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    expect(r.config.channels.telegram).toMatchObject({ admins: ["123456789"], deliveryMode: "collect" });
    expect(r.config.channels.telegram.allowedChannels).toEqual(["-1001234567890"]);
    expect(r.config.channels.web).toMatchObject({ admins: ["123456789"], deliveryMode: "collect" });
    expect(r.config).not.toHaveProperty("x-team");
  });

  it("a valid file fills defaults in every section", () => {
    const r = parseConfigText(
      [
        "channels:",
        "  telegram:",
        "    deliveryMode: followUp",
        "    allowedUsers: ['42']",
        "models:",
        "  default: anthropic/claude-sonnet-4-5",
        "  custom:",
        "    - { provider: ollama, id: llama3, api: openai-completions, baseUrl: 'http://127.0.0.1:11434/v1' }",
      ].join("\n"),
      { env: { TELEGRAM_BOT_TOKEN: "123456:ABCDEF" }, baseDir: "/srv/sb" },
    );
    if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
    const { telegram } = r.config.channels;
    expect(telegram).toMatchObject({
      enabled: true,
      mode: "polling",
      deliveryMode: "followUp",
      inboxCap: 20,
    });
    expect(telegram.allowedUsers).toEqual(["42"]);
    expect(r.config.models.custom[0]).toMatchObject({
      contextWindow: 128000,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    });
    expect(r.config.channels.web.enabled).toBe(false);
    expect(r.config.runtime.dataDir).toBe("/srv/sb/data");
  });
});

describe("where in the file a problem is", () => {
  const located = (yaml: string, env: Record<string, string> = {}) => {
    const r = parseConfigText(yaml, { env, baseDir: "/srv/sb", fileName: "/srv/sb/switchboard.yaml" });
    if (r.ok) throw new Error("expected the config to be rejected");
    return r.issues.map(formatIssue);
  };

  it("a schema problem names the line of its field: nested, in a list, an unknown key, a missing one", () => {
    const yaml = [
      "channels:", // 1
      "  telegram:", // 2
      "    mode: poll", // 3
      "  slack:", // 4
      "    requireMentoin: true", // 5
      "models:", // 6
      "  custom:", // 7
      "    - provider: local", // 8
      "      id: m1", // 9
      "      api: openai", // 10
      "  discord:", // 11 (a typo: belongs under channels)
      "    enabled: true", // 12
      "",
    ].join("\n");
    expect(located(yaml, { TELEGRAM_BOT_TOKEN: "123456:ABCDEF" })).toEqual([
      'channels.telegram.mode (line 3): must be one of "polling", "webhook" (got "poll")',
      'channels.slack.requireMentoin (line 5): unknown field; did you mean "requireMention"?',
      'models.custom[0].api (line 10): must be one of "anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai" (got "openai")',
      "models.discord (line 11): unknown field; known fields: default, thinkingLevel, vision, custom, stallTimeoutMs, waitNoticeMs",
    ]);
    // A required field that is missing points at the mapping that lacks it.
    expect(located("channels:\n  discord:\n    enabled: true\n")).toEqual([
      "channels.discord.botToken (line 2): is required because channels.discord.enabled is true; set DISCORD_BOT_TOKEN or botTokenFile",
    ]);
  });

  it("a YAML syntax error gives line, column, the lines around it and a hint, as one problem", () => {
    const badIndent = located(
      "channels:\n  telegram:\n    mode: polling\n   admins: [1]\nhttp:\n  port: 1\n",
    );
    expect(badIndent).toEqual([
      [
        "line 4, column 1: YAML syntax: All mapping items must start at the same column; indent every key " +
          "of one mapping (and every `-` item of one list) by the same number of spaces",
        "  3 |     mode: polling",
        "  4 |    admins: [1]",
        "    | ^",
      ].join("\n"),
    ]);
    const [unclosed] = located("channels:\n  slack: { admins: [a, b }\n");
    expect(unclosed).toMatch(
      /^line 2, column 26: YAML syntax: .*; a \[ or \{ opened here or above is not closed \(1 more YAML error follows from here; fix this one first\)/,
    );
    const [tab] = located("channels:\n\ttelegram: {}\n");
    expect(tab).toContain(
      "line 2, column 1: YAML syntax: Tabs are not allowed as indentation; indent with spaces",
    );
    const colon = located("agent:\n  systemPrompt: Answer: briefly\n")[0] ?? "";
    expect(colon).toContain('must be quoted, e.g. key: "a: b"');
    // The message itself ends in words, not in a dangling colon.
    expect(colon.split("\n")[0]).not.toMatch(/:\s*$/);
  });
});
