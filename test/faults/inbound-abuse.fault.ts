/**
 * Hostile input at every inbound edge: forged credentials (Slack signature and stale timestamps,
 * Telegram webhook secret token, web chat sessions and CSRF tokens) are refused; fuzzed payloads for each platform
 * (Telegram webhook updates, signed Slack Events API bodies, Discord gateway dispatches) and 1 MB
 * messages never crash the process, never reach the handlers as garbage, and the adapter still
 * delivers the next well-formed message.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { TelegramAdapter } from "../../src/adapters/telegram/adapter.js";
import { WebChatAdapter } from "../../src/adapters/web/adapter.js";
import { Received } from "../adapters/contract.js";
import { createDiscordHarness } from "../adapters/harness/discord.js";
import { createSlackHarness, DM, USERS } from "../adapters/harness/slack.js";
import { GENERAL_ID, GUILD_ID } from "../fakes/discord/server.js";
import { postSigned, slackSignature } from "../fakes/slack/signing.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { report, waitFor } from "./support.js";

const MB = "x".repeat(1024 * 1024);
const RUNS = 150;
const counts = (statuses: number[]) =>
  statuses.reduce<Record<string, number>>((a, s) => {
    a[s] = (a[s] ?? 0) + 1;
    return a;
  }, {});

/** JSON-ish values shaped like the platform's payloads, with hostile leaves. */
const leaf = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant("__proto__"),
  fc.constant("<b>&amp;</b>"),
  fc.constant("\u0000\uFFFF\uD800"),
);
const junk = fc.jsonValue();

describe("fault: hostile inbound input", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("Telegram webhook: wrong secrets refused; fuzzed updates and 1 MB bodies handled; next update delivered", async () => {
    const fake = await new FakeTelegram().start();
    const secret = "webhook-secret-0123456789";
    let server: Server | undefined;
    const adapter = new TelegramAdapter({
      token: fake.token,
      apiRoot: fake.apiRoot(),
      mode: "webhook",
      botUsername: "switchboard_bot",
      webhook: { url: "http://127.0.0.1:1/telegram", secretToken: secret },
    });
    server = createServer((req, res) => adapter.webhookCallback(req, res));
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/telegram`;
    const received = new Received();
    await adapter.start(received);
    cleanups.push(async () => {
      await adapter.stop();
      server?.closeAllConnections();
      await new Promise<void>((r) => server?.close(() => r()));
      await fake.close();
    });
    const post = async (body: string, token: string | null = secret) =>
      (
        await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(token !== null ? { "x-telegram-bot-api-secret-token": token } : {}),
          },
          body,
        })
      ).status;
    const valid = (id: number, text: string) =>
      JSON.stringify({
        update_id: id,
        message: {
          message_id: id,
          chat: { id: 42_001, type: "private" },
          from: { id: 42_001, is_bot: false, first_name: "Eve" },
          date: 1,
          text,
        },
      });

    const forged = [
      await post(valid(1, "forged"), null),
      await post(valid(2, "forged"), "wrong"),
      await post(valid(3, "forged"), `${secret}x`),
    ];
    const fuzzStatuses: number[] = [];
    const updates = fc.oneof(
      junk,
      fc.record({ update_id: fc.oneof(fc.integer(), leaf), message: junk }),
      fc.record({
        update_id: fc.integer({ min: 1000, max: 1_000_000 }),
        message: fc.record(
          {
            message_id: fc.oneof(fc.integer(), leaf),
            chat: fc.oneof(junk, fc.record({ id: fc.oneof(fc.integer(), leaf), type: leaf })),
            from: fc.oneof(junk, fc.record({ id: leaf, is_bot: leaf, first_name: leaf })),
            date: leaf,
            text: leaf,
            entities: junk,
            reply_to_message: junk,
          },
          { requiredKeys: [] },
        ),
      }),
    );
    for (const u of fc.sample(updates, { numRuns: RUNS, seed: 7 }))
      fuzzStatuses.push(await post(JSON.stringify(u)));
    fuzzStatuses.push(await post("{not json"));
    const oversized = await post(valid(9_000_000, MB + MB));
    const oneMb = await post(valid(9_000_001, MB.slice(0, 1_000_000)));
    const before = received.messages.length;
    expect(await post(valid(9_000_002, "a normal message after the storm"))).toBe(200);
    await waitFor(() => received.messages.length > before, 5000, "the normal message");
    const garbage = received.messages.filter(
      (m) => typeof m.text !== "string" || typeof m.threadKey !== "string",
    );
    report("Telegram webhook abuse", {
      forged,
      fuzz: counts(fuzzStatuses),
      oversized2MB: oversized,
      oneMB: oneMb,
      delivered: received.messages.length,
      garbage: garbage.length,
    });
    expect(forged).toEqual([401, 401, 401]);
    expect(received.messages.some((m) => m.text === "forged")).toBe(false);
    expect(fuzzStatuses.every((s) => s === 200 || s === 400)).toBe(true);
    expect(oversized).toBe(413);
    expect(garbage).toEqual([]);
    // The 1 MB message is delivered capped at 20,000 characters with a visible notice.
    const tgBig = received.messages.find((m) => m.text.startsWith("xxxx"));
    expect(tgBig?.text.length).toBeLessThan(20_100);
    expect(tgBig?.text).toContain("[… message truncated: 980000 characters over the limit]");
  });

  it("Slack Events API: forged and stale signatures refused; fuzzed signed events and 1 MB handled; next message delivered", async () => {
    const h = await createSlackHarness({ mode: "http" });
    cleanups.push(() => h.close());
    const url = h.eventsUrl as string;
    const event = (text: string) =>
      JSON.stringify({
        type: "event_callback",
        team_id: "T0TEAM",
        event_id: `Ev${Math.random().toString(36).slice(2)}`,
        event_time: Math.floor(Date.now() / 1000),
        event: {
          type: "message",
          channel: DM,
          channel_type: "im",
          user: USERS.alice,
          text,
          ts: `${Date.now() / 1000}`,
        },
      });
    const forged = [
      (await postSigned(url, event("forged"), { secret: "not-the-secret" })).status,
      (
        await postSigned(url, event("forged"), {
          secret: h.fake.signingSecret,
          timestampSec: Math.floor(Date.now() / 1000) - 600,
        })
      ).status,
    ];
    const tampered = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)),
        "x-slack-signature": "v0=deadbeef",
      },
      body: event("forged"),
    });
    forged.push(tampered.status);
    // Any JSON at the top level (Slack always sends an object, but a signed `null` once made Bolt's
    // receiver throw and never answer).
    const bodies = fc.oneof(
      junk.map((j) => JSON.stringify(j)),
      fc.constantFrom("null", "[]", "0", '"x"', "true"),
      fc
        .record({
          type: fc.constant("event_callback"),
          team_id: leaf,
          event_id: leaf,
          event: fc.oneof(
            junk,
            fc.record(
              {
                type: fc.constantFrom("message", "app_mention", "reaction_added", "member_joined_channel"),
                channel: leaf,
                user: leaf,
                text: leaf,
                ts: leaf,
                thread_ts: leaf,
                subtype: leaf,
                item: junk,
                blocks: junk,
              },
              { requiredKeys: ["type"] },
            ),
          ),
        })
        .map((j) => JSON.stringify(j)),
    );
    // Sent 50 at a time: Bolt answers a body it has no listener for with 404 only after its 3 s
    // unhandled-request timeout.
    const fuzzStatuses: number[] = [];
    const hung: string[] = [];
    const samples = fc.sample(bodies, { numRuns: RUNS, seed: 11 });
    for (let i = 0; i < samples.length; i += 50) {
      await Promise.all(
        samples.slice(i, i + 50).map(async (b) => {
          const ts = Math.floor(Date.now() / 1000);
          try {
            const res = await fetch(url, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-slack-request-timestamp": String(ts),
                "x-slack-signature": slackSignature(h.fake.signingSecret, ts, b),
              },
              body: b,
              signal: AbortSignal.timeout(8000),
            });
            fuzzStatuses.push(res.status);
            await res.text();
          } catch {
            fuzzStatuses.push(0);
            hung.push(b.slice(0, 200));
          }
        }),
      );
    }
    const oneMb = (await postSigned(url, event(MB), { secret: h.fake.signingSecret })).status;
    const before = h.received.messages.length;
    await h.directMessage("a normal message after the storm");
    await waitFor(() => h.received.messages.length > before, 5000, "the normal Slack message");
    report("Slack events abuse", {
      forged,
      fuzz: counts(fuzzStatuses),
      unanswered: hung,
      oneMB: oneMb,
      delivered: h.received.messages.length,
    });
    expect(forged.every((s) => s === 401 || s === 403)).toBe(true);
    expect(h.received.messages.some((m) => m.text === "forged")).toBe(false);
    // Every request is answered (no hang) and the process lives on; a malformed but signed body is
    // acknowledged (200), refused (400) or has no listener (404), never 500, which Slack would retry.
    expect(hung).toEqual([]);
    const slackBig = h.received.messages.find((m) => m.text.startsWith("xxxx"));
    expect(slackBig?.text).toContain("[… message truncated: 1028576 characters over the limit]");
    expect(slackBig?.text.length).toBeLessThan(20_100);
    expect(fuzzStatuses.filter((s) => s >= 500)).toEqual([]);
  });

  it("Discord gateway: fuzzed dispatches and a 1 MB message handled; next message delivered", async () => {
    const h = await createDiscordHarness();
    cleanups.push(() => h.close());
    // Discord's gateway shapes its payloads itself (an authenticated socket from Discord); what users
    // control are the values: text, ids of what they reference, names. Broken structure follows below.
    const snowflake = fc.bigInt({ min: 10n ** 17n, max: 10n ** 18n }).map(String);
    const dispatches = fc.record({
      t: fc.constantFrom("MESSAGE_CREATE", "MESSAGE_CREATE", "MESSAGE_REACTION_ADD"),
      d: fc.record({
        id: snowflake,
        channel_id: fc.oneof(snowflake, fc.constant(GENERAL_ID)),
        guild_id: fc.constant(GUILD_ID),
        author: fc.record({
          id: snowflake,
          username: fc.string(),
          bot: fc.boolean(),
          discriminator: fc.constant("0"),
        }),
        content: fc.oneof(
          fc.string(),
          fc.string({ unit: "grapheme" }),
          fc.constant("<@&1> <#2> @everyone ||x|| ```"),
        ),
        mentions: fc.constant([]),
        mention_roles: fc.constant([]),
        attachments: fc.constant([]),
        embeds: fc.constant([]),
        timestamp: fc.constant(new Date().toISOString()),
        type: fc.constantFrom(0, 19, 7, 999),
        user_id: snowflake,
        message_id: snowflake,
        emoji: fc.record({ name: fc.string(), id: fc.oneof(fc.constant(null), snowflake) }),
      }),
    });
    let sent = 0;
    for (const d of fc.sample(dispatches, { numRuns: RUNS, seed: 13 })) {
      h.fake.gateway.dispatch(d.t, d.d as Record<string, unknown>, GUILD_ID);
      sent++;
    }
    // Structurally broken dispatches: discord.js throws applying some of them; the adapter's guard
    // logs and drops them (an escaped throw would fail this run as an unhandled rejection).
    const broken = fc.record({
      t: fc.constantFrom("MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_REACTION_ADD", "THREAD_CREATE"),
      d: fc.oneof(
        fc.dictionary(fc.string(), junk),
        fc.record({
          id: leaf,
          channel_id: fc.oneof(leaf, fc.constant(GENERAL_ID)),
          mentions: leaf,
          author: junk,
        }),
      ),
    });
    for (const d of fc.sample(broken, { numRuns: 50, seed: 17 })) {
      h.fake.gateway.dispatch(d.t, { guild_id: GUILD_ID, ...d.d } as Record<string, unknown>, GUILD_ID);
      sent++;
    }
    h.fake.gateway.dispatch("MESSAGE_UPDATE", { id: "1", channel_id: GENERAL_ID, mentions: 5 }, GUILD_ID);
    sent++;
    const before = h.received.messages.length;
    await h.groupMessage({ text: `big ${MB}`, mention: true });
    await h.groupMessage({ text: "a normal message after the storm", mention: true });
    await waitFor(
      () => h.received.messages.some((m) => m.text.includes("a normal message after the storm")),
      10_000,
      "the normal Discord message",
    );
    const big = h.received.messages.slice(before).find((m) => m.text.startsWith("big"));
    report("Discord dispatch abuse", {
      fuzzedDispatches: sent,
      delivered: h.received.messages.length,
      oneMBDeliveredChars: big?.text.length ?? 0,
    });
    expect(big?.text).toContain("characters over the limit]");
    expect(big?.text.length).toBeLessThan(20_100);
  });

  it("Web chat: forged sessions, CSRF tokens and reused links refused; 1 MB message answered clearly", async () => {
    const adapter = new WebChatAdapter({});
    const received = new Received();
    await adapter.start(received);
    cleanups.push(() => adapter.stop());
    const app = adapter.app();
    const base = "http://localhost:8787";
    const link = await adapter.signInLink(`${base}/`);
    const signedIn = await app.request(link, { headers: { host: "localhost:8787" } });
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const reused = (await app.request(link, { headers: { host: "localhost:8787" } })).status;
    const session = await app.request(`${base}/api/session`, { headers: { cookie, host: "localhost:8787" } });
    const { csrf } = (await session.json()) as { csrf: string };
    const get = (headers: Record<string, string>) =>
      app.request(`${base}/api/conversations`, { headers: { host: "localhost:8787", ...headers } });
    const forged = [
      (await get({})).status,
      (await get({ authorization: "Bearer wrong" })).status,
      (await get({ cookie: "sb_web_8787=wrong" })).status,
      (await get({ cookie: `${cookie}x` })).status,
      reused,
    ];
    const ok = (await get({ cookie })).status;
    const auth = {
      cookie,
      "x-csrf-token": csrf,
      "content-type": "application/json",
      origin: base,
      host: "localhost:8787",
    };
    const forgedCsrf = [
      (
        await app.request(`${base}/api/conversations`, {
          method: "POST",
          headers: { ...auth, "x-csrf-token": "" },
          body: "{}",
        })
      ).status,
      (
        await app.request(`${base}/api/conversations`, {
          method: "POST",
          headers: { ...auth, "x-csrf-token": `${csrf}x` },
          body: "{}",
        })
      ).status,
    ];
    const created = await app.request(`${base}/api/conversations`, {
      method: "POST",
      headers: auth,
      body: "{}",
    });
    const conv = (await created.json()) as { id?: string; conversation?: { id: string } };
    const id = conv.id ?? conv.conversation?.id ?? "";
    const big = await app.request(`${base}/api/conversations/${id}/messages`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ text: MB }),
    });
    const bigBody = (await big.text()).slice(0, 160);
    const junkBody = await app.request(`${base}/api/conversations/${id}/messages`, {
      method: "POST",
      headers: auth,
      body: "{not json",
    });
    report("Web chat abuse", {
      forged,
      forgedCsrf,
      ok,
      created: created.status,
      oneMB: big.status,
      oneMBAnswer: bigBody,
      badJson: junkBody.status,
    });
    expect(forged.every((s) => s === 401 || s === 403)).toBe(true);
    expect(forgedCsrf).toEqual([403, 403]);
    expect(ok).toBe(200);
    expect(big.status).toBeLessThan(500);
    expect(junkBody.status).toBe(400);
  });
});
