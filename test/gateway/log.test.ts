import { describe, expect, it } from "vitest";
import { createLogger, REDACTED, redactSecrets, runLogger, threadLogger } from "../../src/gateway/log.js";

function capture() {
  const lines: string[] = [];
  const stream = { write: (s: string) => void lines.push(s) };
  return { stream, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const SLACK_BOT = "xoxb-2212345678-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const SLACK_APP = "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef";
const OPENAI = "sk-proj-AbCdEf0123456789AbCdEf0123456789";
const ANTHROPIC = "sk-ant-api03-AbCdEfGh0123456789-xyzXYZ_0123456789";
const TELEGRAM = "7123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
const DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789AB";
const OPAQUE = "f3a9c1e77b2d4c0e9a8b"; // signing secret: no recognisable shape

describe("log redaction", () => {
  it("a logged secret never appears in the output, whatever route it takes", () => {
    const { stream, lines } = capture();
    const log = createLogger({ destination: stream, level: "debug", secrets: [OPAQUE] });
    log.info(
      { botToken: SLACK_BOT, config: { slack: { appToken: SLACK_APP, signingSecret: OPAQUE } } },
      "config",
    );
    log.info({ headers: { Authorization: `Bearer ${OPENAI}`, "x-api-key": ANTHROPIC } }, "request");
    log.warn(`calling https://api.telegram.org/bot${TELEGRAM}/getMe failed`);
    log.error({ err: new Error(`discord login failed for token ${DISCORD}`) }, "login");
    log.debug({ url: "redis://:hunter2hunter2@redis:6379/0" }, "connecting");
    log.info({ note: `the signing secret is ${OPAQUE}` }, "exact values from the config are masked too");
    log.child({ token: SLACK_BOT, webhook: { secretToken: "opaque-webhook-secret" } }).info("child bindings");
    const out = lines.join("");
    const all = [SLACK_BOT, SLACK_APP, OPENAI, ANTHROPIC, TELEGRAM, DISCORD, OPAQUE, "hunter2hunter2"];
    for (const secret of [...all, "opaque-webhook-secret"]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain(REDACTED);
    expect(lines).toHaveLength(7);
  });

  it("an error under err keeps its message, stack and code, with the token masked everywhere", () => {
    const { stream, lines, records } = capture();
    const log = createLogger({ destination: stream, secrets: [OPAQUE] });
    const err = Object.assign(new Error(`Slack rejected ${SLACK_BOT} (signing secret ${OPAQUE})`), {
      code: "slack.invalid_auth",
      token: DISCORD,
    });
    log.error({ err, threadKey: "slack:T1:C1:1" }, "post failed");
    const out = lines.join("");
    for (const secret of [SLACK_BOT, OPAQUE, DISCORD]) expect(out).not.toContain(secret);
    const logged = records()[0]?.err as Record<string, unknown>;
    expect(logged.type).toBe("Error");
    expect(logged.code).toBe("slack.invalid_auth");
    expect(logged.message).toBe(`Slack rejected ${REDACTED} (signing secret ${REDACTED})`);
    expect(String(logged.stack)).toMatch(/^Error: Slack rejected \S+ \(signing secret \S+\)\n\s+at /);
    expect(String(logged.stack)).toContain("log.test.ts");
    expect(logged.token).toBe(REDACTED);
  });

  it("keeps what is not secret: token counts, ids, messages", () => {
    const { stream, records } = capture();
    const log = createLogger({ destination: stream });
    log.info(
      {
        usage: { input: 1200, output: 80, totalTokens: 1280 },
        maxTokens: 8192,
        threadKey: "slack:T1:C2:1712.33",
      },
      "run done",
    );
    const [line] = records();
    expect(line).toMatchObject({
      level: "info",
      msg: "run done",
      usage: { input: 1200, output: 80, totalTokens: 1280 },
      maxTokens: 8192,
      threadKey: "slack:T1:C2:1712.33",
    });
  });

  it("redactSecrets masks token shapes in any text (for chat error messages and CLI output)", () => {
    expect(redactSecrets(`401 for Bot ${DISCORD}`)).toBe(`401 for Bot ${REDACTED}`);
    expect(redactSecrets(`key ${OPENAI} rejected`)).toBe(`key ${REDACTED} rejected`);
    expect(redactSecrets("redis://user:pw1234@host")).toBe(`redis://user:${REDACTED}@host`);
    expect(redactSecrets("ordinary text 12:34 and version 1.2.3")).toBe(
      "ordinary text 12:34 and version 1.2.3",
    );
  });
});

describe("thread and run loggers", () => {
  it("every line of a run carries threadKey and runId", () => {
    const { stream, records } = capture();
    const base = createLogger({ destination: stream, base: { role: "worker" } });
    const thread = threadLogger(base, { threadKey: "telegram:-100:0:42", platform: "telegram" });
    const run = runLogger(thread, "run-7");
    run.info("llm request");
    run.info({ tool: "bash" }, "tool call");
    thread.info("lease released");
    const recs = records();
    expect(recs.slice(0, 2)).toEqual([
      expect.objectContaining({
        role: "worker",
        threadKey: "telegram:-100:0:42",
        runId: "run-7",
        msg: "llm request",
      }),
      expect.objectContaining({ threadKey: "telegram:-100:0:42", runId: "run-7", tool: "bash" }),
    ]);
    expect(recs[2]).toMatchObject({ threadKey: "telegram:-100:0:42", msg: "lease released" });
    expect(recs[2]).not.toHaveProperty("runId");
  });

  it("the level from config filters lines", () => {
    const { stream, lines } = capture();
    const log = createLogger({ destination: stream, level: "warn" });
    log.info("hidden");
    log.warn("shown");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["shown"]);
  });
});
