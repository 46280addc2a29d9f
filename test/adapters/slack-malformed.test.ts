/**
 * Signed but malformed Events API bodies (only Slack can sign, so these model Slack payload
 * changes): they are answered at once with 200 (acknowledged, ignored) or 400, never 500 (Slack
 * retries those) and never left hanging; forged ones still get 401; the next real message arrives.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TEAM_ID } from "../fakes/slack/server.js";
import { postSigned } from "../fakes/slack/signing.js";
import { createSlackHarness, DM, type SlackHarness, USERS } from "./harness/slack.js";
import { until } from "./support/drive.js";

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const callback = (fields: Record<string, unknown>, event: Record<string, unknown>) =>
  JSON.stringify({
    type: "event_callback",
    team_id: TEAM_ID,
    event_id: `Ev${Math.random().toString(36).slice(2)}`,
    event: {
      type: "message",
      channel: DM,
      channel_type: "im",
      user: USERS.alice,
      text: "hi",
      ts: "1.000001",
      ...event,
    },
    ...fields,
  });

describe("Slack over HTTP: malformed signed bodies", () => {
  it("answers top-level non-objects with 400 when signed and 401 when forged, without hanging", async () => {
    h = await createSlackHarness({ mode: "http" });
    const url = h.eventsUrl as string;
    const secret = h.fake.signingSecret;
    const send = (body: string, s = secret, contentType?: "application/x-www-form-urlencoded") =>
      Promise.race([
        postSigned(url, body, { secret: s, ...(contentType ? { contentType } : {}) }).then((r) => r.status),
        new Promise<string>((r) => setTimeout(() => r("unanswered"), 5000)),
      ]);
    expect(await send("null")).toBe(400);
    expect(await send("[1,2]")).toBe(400);
    expect(await send('"text"')).toBe(400);
    expect(await send("payload=null", secret, "application/x-www-form-urlencoded")).toBe(400);
    expect(await send("null", "not-the-secret")).toBe(401);
    await h.directMessage("still here");
    await until(() => h?.received.messages.length === 1, 30_000, "the next direct message");
    expect(h.received.messages[0]?.text).toBe("still here");
  });

  it("acknowledges event_callbacks with mistyped fields with 200 and delivers nothing from them", async () => {
    h = await createSlackHarness({ mode: "http" });
    const url = h.eventsUrl as string;
    const secret = h.fake.signingSecret;
    const statuses = [];
    for (const body of [
      callback({ team_id: null }, { channel: null }),
      callback({ team_id: 5 }, { channel: 5 }),
      callback({}, { channel: 5 }),
      callback({}, { channel: { id: DM } }),
      callback({ authorizations: "x", team_id: [] }, { user: 7 }),
    ])
      statuses.push((await postSigned(url, body, { secret })).status);
    expect(statuses.every((s) => s === 200 || s === 400)).toBe(true);
    expect(h.received.messages).toEqual([]);
    await h.directMessage("after the bad ones");
    await until(() => h?.received.messages.length === 1, 30_000, "the next direct message");
  });
});

describe("Slack: inbound size cap", () => {
  it("cuts text over maxInboundChars with a visible notice", async () => {
    h = await createSlackHarness({ mode: "http", adapter: { maxInboundChars: 50 } });
    await h.directMessage(`${"a".repeat(80)}`);
    await until(() => h?.received.messages.length === 1, 30_000, "the long message");
    expect(h.received.messages[0]?.text).toBe(
      `${"a".repeat(50)}\n\n[… message truncated: 30 characters over the limit]`,
    );
  });
});
