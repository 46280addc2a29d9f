/**
 * Warnings and errors carry what failed: the error object under `err` (type, message, stack, code),
 * and a thrown value that is not an `Error` is written as its message or JSON, never
 * "[object Object]".
 */
import { describe, expect, it } from "vitest";
import { toChannelError as discordError } from "../../src/adapters/discord/errors.js";
import { BoltLogger } from "../../src/adapters/slack/bolt-logger.js";
import { toChannelError as slackError } from "../../src/adapters/slack/errors.js";
import { toChannelError as telegramError } from "../../src/adapters/telegram/errors.js";
import { errorMessage, errorText } from "../../src/agent/errors.js";
import { parseSessionJsonl } from "../../src/agent/session/jsonl.js";
import { ExtensionRunner } from "../../src/extensions/runner.js";
import { createLogger } from "../../src/gateway/log.js";

function capture() {
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (s: string) => void lines.push(s) }, level: "debug" });
  return { logger, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("errors as text", () => {
  it("a thrown object that is not an Error says what it holds", () => {
    expect(errorMessage({ code: 50035, errors: { name: "too long" } })).toBe(
      '{"code":50035,"errors":{"name":"too long"}}',
    );
    expect(errorMessage({ message: "the platform said no" })).toBe("the platform said no");
    expect(errorText({ description: "Bad Request" })).toBe('{"description":"Bad Request"}');
    expect(errorMessage(undefined)).toBe("undefined");
  });

  it("each platform's error text never reads [object Object]", () => {
    const odd = { status: 400, code: 0, message: { detail: "bad body" } };
    for (const e of [
      discordError(odd, "register commands"),
      slackError({ code: "weird", message: { x: 1 } }, "chat.postMessage"),
      telegramError({ reason: "unknown" }, "setMyCommands"),
    ]) {
      expect(e.message).not.toContain("[object Object]");
    }
    expect(discordError(odd, "register commands").message).toContain('{"detail":"bad body"}');
  });
});

describe("warn and error lines carry the error object", () => {
  it("a failed extension is logged with err (its stack says where)", async () => {
    const { logger, records } = capture();
    const runner = new ExtensionRunner({ logger });
    await runner.load([
      {
        name: "broken",
        factory: () => {
          throw new TypeError("cannot read the settings");
        },
      },
    ]);
    const line = records().find((r) => r.msg === 'extension "broken" failed and was disabled');
    expect(line).toMatchObject({
      level: "error",
      extension: "broken",
      phase: "load",
      err: { type: "TypeError", message: "cannot read the settings" },
    });
    expect(String((line?.err as { stack?: string } | undefined)?.stack)).toContain("log-errors.test.ts");
  });

  it("Bolt's own errors keep their object under err", () => {
    const { logger, records } = capture();
    const bolt = new BoltLogger(logger);
    bolt.error("An unhandled error occurred while Bolt processed an event", new Error("socket closed"));
    bolt.warn("odd payload", { type: "x" });
    expect(records()[0]).toMatchObject({
      level: "error",
      err: { message: "socket closed" },
      msg: "An unhandled error occurred while Bolt processed an event socket closed",
    });
    expect(records()[1]).toMatchObject({ level: "warn", msg: 'odd payload {"type":"x"}' });
    expect(records()[1]?.err).toBeUndefined();
  });

  it("a session line that is not JSON is skipped with the parse error under err", () => {
    const { logger, records } = capture();
    const header = JSON.stringify({
      type: "session",
      version: 3,
      id: "s1",
      timestamp: new Date(0).toISOString(),
      cwd: "/",
    });
    parseSessionJsonl(`${header}\n{"type":"mess\n`, { logger, source: "s1.jsonl" });
    const line = records().find((r) => r.msg === "Skipping a truncated last line of a session");
    expect(line).toMatchObject({ level: "warn", source: "s1.jsonl", err: { type: "SyntaxError" } });
  });
});
