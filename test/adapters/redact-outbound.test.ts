/**
 * The gateway's last gate before a platform: whatever posts or edits a chat message (an approval
 * request showing a tool's arguments, an extension's notice), credentials and the config's own
 * secret values are masked, and the adapter otherwise behaves as itself.
 */
import { describe, expect, it } from "vitest";
import { redactOutbound } from "../../src/adapters/redact-outbound.js";
import { isChannelError } from "../../src/adapters/types.js";
import { ManualClock } from "../support/manual-clock.js";
import { RecordingAdapter } from "./support/recording-adapter.js";

const GITHUB = "ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz";
const SIGNING_SECRET = "f3a9c1e77b2d4c0e9a8b";

describe("redactOutbound", () => {
  it("masks credential shapes and the given secret values in posts and edits", async () => {
    const inner = new RecordingAdapter(new ManualClock());
    const adapter = redactOutbound(inner, [SIGNING_SECRET]);
    const ref = await adapter.post(
      "web:c1",
      `Approval needed: bash \`curl -H "Authorization: token ${GITHUB}"\``,
    );
    await adapter.edit(ref, `Denied. (secret ${SIGNING_SECRET} was in the command)`);
    expect(inner.calls.map((c) => c.text)).toEqual([
      'Approval needed: bash `curl -H "Authorization: token [redacted]"`',
      "Denied. (secret [redacted] was in the command)",
    ]);
  });

  it("keeps the adapter's own capabilities, optional methods and errors", async () => {
    const inner = new RecordingAdapter(new ManualClock(), { maxMessageLength: 10 }, { stopTyping: true });
    const adapter = redactOutbound(inner);
    expect(adapter.capabilities.maxMessageLength).toBe(10);
    expect(adapter.platform).toBe("web");
    expect(adapter.channelOf("web:c1")).toBe("web:channel");
    expect(typeof adapter.stopTyping).toBe("function");
    expect(redactOutbound(new RecordingAdapter(new ManualClock())).stopTyping).toBeUndefined();
    const failure = await adapter.post("web:c1", "far too long for ten").catch((e: unknown) => e);
    expect(isChannelError(failure, "too_long")).toBe(true);
  });
});
