/**
 * Telegram details: failures that say what happened (HTTP status and body when Telegram's
 * `description` is missing, never the token), a poll loop that does not hammer a Bot API answering
 * `getUpdates` at once and empty, and a connection that counts as up as soon as the poll runs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readBotApiAnswer } from "../../../src/adapters/telegram/http.js";
import { TelegramAdapter, type TelegramAdapterConfig } from "../../../src/adapters/telegram/index.js";
import { MAX_EMPTY_WAIT_MS } from "../../../src/adapters/telegram/polling.js";
import { ChannelError } from "../../../src/adapters/types.js";
import type { StructuredLogger } from "../../../src/agent/logger.js";
import { FakeTelegram, type FakeTelegramOptions } from "../../fakes/telegram/server.js";
import { ManualClock } from "../../support/manual-clock.js";
import { Received } from "../contract.js";
import { settle, until } from "../support/drive.js";
import { dmWith, USERS } from "./harness.js";

const alice = USERS.alice as NonNullable<(typeof USERS)["alice"]>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function recordingLog() {
  const lines: Array<{ level: string; obj: object; msg?: string }> = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj, ...(msg ? { msg } : {}) });
    };
  const log: StructuredLogger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  return { log, lines };
}

async function setup(fakeOpts: FakeTelegramOptions = {}, extra: Partial<TelegramAdapterConfig> = {}) {
  const fake = await new FakeTelegram(fakeOpts).start();
  cleanups.push(() => fake.close());
  const adapter = new TelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot(), ...extra });
  cleanups.push(() => adapter.stop());
  return { fake, adapter };
}

async function failure(p: Promise<unknown>): Promise<ChannelError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ChannelError) return err;
    throw err;
  }
  throw new Error("expected a failure");
}

describe("Telegram failures say what happened", () => {
  const chat = dmWith(alice);

  it("keeps the HTTP status and body when the error has no description", async () => {
    const { fake, adapter } = await setup();
    fake.addChat(chat);
    fake.answerNextRaw("sendMessage", 500, JSON.stringify({ ok: false, error_code: 500 }));
    const err = await failure(adapter.post(`telegram:${chat.id}:0:0`, "hello"));
    expect(err.message).toBe(
      'Telegram sendMessage failed: HTTP 500 Internal Server Error: {"ok":false,"error_code":500}',
    );
    expect(err.message).not.toContain("undefined");
  });

  it("reports a proxy's error page with its status and a piece of the page, without the token", async () => {
    const { fake, adapter } = await setup();
    fake.addChat(chat);
    fake.answerNextRaw(
      "sendMessage",
      502,
      `<html><body><h1>502 Bad Gateway</h1>upstream /bot${fake.token}/sendMessage failed</body></html>`,
      "text/html",
    );
    const err = await failure(adapter.post(`telegram:${chat.id}:0:0`, "hello"));
    expect(err.kind).toBe("network");
    expect(err.message).toContain(
      "Telegram sendMessage failed: HTTP 502 Bad Gateway: <html><body><h1>502 Bad Gateway",
    );
    expect(err.message).toContain("upstream /bot<token>/sendMessage");
    expect(err.message).not.toContain(fake.token);
    expect(err.message).not.toContain(fake.token.split(":")[1]);
  });

  it("still reads Telegram's own descriptions as before", async () => {
    const { adapter } = await setup();
    const err = await failure(adapter.post("telegram:424242:0:0", "hello"));
    expect(err.message).toBe("Telegram sendMessage failed: Bad Request: chat not found");
  });

  it("readBotApiAnswer passes good answers through and describes the rest", () => {
    const t = "123456:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ";
    expect(readBotApiAnswer(200, "OK", '{"ok":true,"result":1}', t)).toEqual({ ok: true, result: 1 });
    expect(
      readBotApiAnswer(400, "Bad Request", '{"ok":false,"error_code":400,"description":"Bad"}', t),
    ).toEqual({ ok: false, error_code: 400, description: "Bad" });
    expect(readBotApiAnswer(503, "", '{"ok":false}', t)).toEqual({
      ok: false,
      error_code: 503,
      description: 'HTTP 503: {"ok":false}',
    });
    expect(() => readBotApiAnswer(200, "OK", "", t)).toThrow("HTTP 200 OK: (empty body)");
    expect(() => readBotApiAnswer(200, "OK", `{"result":1,"url":"/bot${t}/getMe"}`, t)).toThrow(
      'HTTP 200 OK: {"result":1,"url":"/bot<token>/getMe"}',
    );
  });
});

describe("Telegram polling against a Bot API that answers at once", () => {
  it("spaces out polls that come back empty at once, and still delivers what arrives", async () => {
    const clock = new ManualClock();
    const { log, lines } = recordingLog();
    const { fake, adapter } = await setup(
      { ignorePollTimeout: true, now: () => clock.now() },
      { clock, logger: log, pollTimeoutSeconds: 25 },
    );
    const received = new Received();
    await adapter.start(received);
    const polls = () => fake.calls.filter((c) => c.method === "getUpdates").length;
    // A few immediate polls, then the loop waits on its clock instead of asking again.
    await until(() => clock.pending > 0, 30_000, "the poll loop to wait");
    const early = polls();
    expect(early).toBeGreaterThanOrEqual(4);
    expect(early).toBeLessThanOrEqual(5);
    await settle(() => false);
    expect(polls()).toBe(early);
    expect(lines.filter((l) => l.msg?.includes("getUpdates at once"))).toHaveLength(1);

    // Over a minute of clock, waits grow to the cap: about 30 more polls, not thousands.
    for (let i = 0; i < 600; i++) {
      await clock.advance(100);
      await settle(() => false, 50);
    }
    const perMinute = polls() - early;
    expect(perMinute).toBeGreaterThan(60_000 / MAX_EMPTY_WAIT_MS / 2);
    expect(perMinute).toBeLessThanOrEqual(60_000 / MAX_EMPTY_WAIT_MS + 10);

    // A message still arrives within one wait.
    fake.userMessage({ chat: dmWith(alice), from: alice, text: "still there?" });
    for (let i = 0; i < MAX_EMPTY_WAIT_MS / 100 + 2 && received.messages.length === 0; i++) {
      await clock.advance(100);
      await settle(() => false, 50);
    }
    await until(() => received.messages.length === 1, 30_000, "the message");
    expect(received.messages[0]?.text).toBe("still there?");
  });

  it("counts as connected once the poll runs, before the first long poll returns", async () => {
    const { fake, adapter } = await setup({}, { pollTimeoutSeconds: 25 });
    await adapter.start(new Received());
    await until(() => fake.calls.some((c) => c.method === "getUpdates"), 30_000, "the first poll");
    expect(adapter.connections()).toEqual([
      expect.objectContaining({ name: "telegram:polling", state: "connected" }),
    ]);
  });
});
