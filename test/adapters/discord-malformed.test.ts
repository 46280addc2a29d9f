/**
 * Structurally broken gateway dispatches (Discord shapes these itself, so they model payload
 * changes): discord.js throws while applying them; the adapter logs and drops each one, the
 * process lives on, and the next message is still delivered.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { StructuredLogger } from "../../src/agent/logger.js";
import { GENERAL_ID, GUILD_ID } from "../fakes/discord/server.js";
import { createDiscordHarness, type DiscordHarness } from "./harness/discord.js";
import { until } from "./support/drive.js";

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("Discord: malformed gateway dispatches", () => {
  it("logs and drops dispatches discord.js cannot apply, then delivers the next message", async () => {
    const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
    const logger: StructuredLogger = {
      debug() {},
      info() {},
      warn: (fields: Record<string, unknown>, msg?: string) => void warnings.push({ fields, msg: msg ?? "" }),
      error() {},
    };
    h = await createDiscordHarness({ adapter: { logger } });
    const first = await h.groupMessage({ text: "first", mention: true });
    await until(() => h?.received.messages.length === 1, 30_000, "the first mention");
    const { messageId } = h.locate(first);
    // `mentions` not an array: discord.js's Message#_patch throws "… is not iterable".
    h.fake.gateway.dispatch(
      "MESSAGE_UPDATE",
      { id: messageId, channel_id: GENERAL_ID, guild_id: GUILD_ID, content: "edited", mentions: 5 },
      GUILD_ID,
    );
    h.fake.gateway.dispatch(
      "MESSAGE_CREATE",
      { id: "1", channel_id: GENERAL_ID, guild_id: GUILD_ID, author: null, mentions: "x" },
      GUILD_ID,
    );
    await h.groupMessage({ text: "after the broken ones", mention: true });
    await until(() => h?.received.messages.length === 2, 30_000, "the next mention");
    expect(h.received.messages.map((m) => m.text)).toEqual(["first", "after the broken ones"]);
    const dropped = warnings.filter((w) => w.msg === "discord: malformed gateway dispatch ignored");
    expect(dropped.map((w) => w.fields.dispatch)).toContain("MESSAGE_UPDATE");
  });
});

describe("Discord: inbound size cap", () => {
  it("cuts text over maxInboundChars with a visible notice", async () => {
    h = await createDiscordHarness({ adapter: { maxInboundChars: 40 } });
    await h.groupMessage({ text: "b".repeat(100), mention: true });
    await until(() => h?.received.messages.length === 1, 30_000, "the long mention");
    const text = h.received.messages[0]?.text ?? "";
    expect(text.startsWith("b".repeat(40))).toBe(true);
    expect(text).toMatch(/\n\n\[… message truncated: \d+ characters over the limit\]$/);
  });
});
