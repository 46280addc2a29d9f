import { describe, expect, it } from "vitest";
import { LiveMessage } from "../../../src/adapters/render/live-message.js";
import { MemoryRateLimiter } from "../../../src/adapters/render/rate-limiter.js";
import { ManualClock } from "../../support/manual-clock.js";
import { driveUntil, settle } from "../support/drive.js";
import { RecordingAdapter } from "../support/recording-adapter.js";

function setup(caps = {}) {
  const clock = new ManualClock();
  const adapter = new RecordingAdapter(clock, caps);
  const limiter = new MemoryRateLimiter(clock);
  const live = new LiveMessage({ adapter, threadKey: "t1", clock, limiter });
  return { clock, adapter, limiter, live };
}

describe("LiveMessage", () => {
  it("streams 500 deltas with at most one edit per interval and ends with exactly the final text", async () => {
    const { clock, adapter, live } = setup();
    let text = "";
    for (let i = 0; i < 500; i++) {
      text += `w${i} `;
      live.set(text);
      await settle(() => live.busy);
      await clock.advance(20);
    }
    const final = `${text}done.`;
    const outcome = await driveUntil(clock, live.finish(final), { busy: () => live.busy });
    expect(outcome).toBe("delivered");
    expect(adapter.messages()).toEqual([final]);
    const [ref] = live.refs;
    const edits = adapter.edits(ref as string);
    // 500 deltas over 10 s of clock: about 10 edits, never two within a second.
    expect(edits.length).toBeGreaterThan(3);
    expect(edits.length).toBeLessThanOrEqual(12);
    for (let i = 1; i < edits.length; i++) {
      expect((edits[i]?.at ?? 0) - (edits[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    }
    // Each frame extends the previous one.
    for (let i = 1; i < edits.length; i++)
      expect(edits[i]?.text?.startsWith(edits[i - 1]?.text ?? "")).toBe(true);
    expect(adapter.maxInFlight).toBe(1);
  });

  it("sends only the newest text after a wait, skipping superseded frames", async () => {
    const { clock, adapter, live } = setup();
    live.set("a");
    await settle(() => live.busy);
    live.set("ab");
    live.set("abc");
    live.set("abcd");
    await settle(() => live.busy);
    await clock.advance(1000);
    await settle(() => live.busy);
    expect(adapter.calls.filter((c) => c.op === "edit").map((c) => c.text)).toEqual(["abcd"]);
  });

  it("delays through a storm of 429s and loses nothing", async () => {
    const { clock, adapter, live } = setup({ maxMessageLength: 100 });
    adapter.failNext(6, "rate_limited", ["post", "edit"], 3000);
    const final = Array.from({ length: 8 }, (_, i) => `paragraph ${i} ${"z".repeat(30)}`).join("\n\n");
    const started = clock.now();
    const outcome = await driveUntil(clock, live.finish(final), { busy: () => live.busy, stepMs: 250 });
    expect(outcome).toBe("delivered");
    expect(adapter.messages().join("\n\n")).toBe(final);
    for (const m of adapter.messages()) expect(m.length).toBeLessThanOrEqual(100);
    // Every failed attempt was followed by a wait of at least its retry-after.
    const failed = adapter.calls.filter((c) => !c.ok);
    expect(failed).toHaveLength(6);
    for (const f of failed) {
      const next = adapter.calls.find((c) => c.at > f.at && c.ok);
      expect(next && next.at - f.at).toBeGreaterThanOrEqual(3000);
    }
    expect(clock.now() - started).toBeGreaterThanOrEqual(6 * 3000);
  });

  it("treats 'message is not modified' as sent", async () => {
    const { clock, adapter, live } = setup();
    live.set("same");
    await settle(() => live.busy);
    adapter.failNext(1, "not_modified", ["edit"]);
    const outcome = await driveUntil(clock, live.finish("same!"), { busy: () => live.busy });
    expect(outcome).toBe("delivered");
    // The edit "failed" as not modified and was not retried.
    expect(adapter.calls.filter((c) => c.op === "edit")).toHaveLength(1);
  });

  it("posts again when the message was deleted by someone", async () => {
    const { clock, adapter, live } = setup();
    live.set("first");
    await settle(() => live.busy);
    const [ref] = live.refs;
    await adapter.delete(ref as string);
    const outcome = await driveUntil(clock, live.finish("first and more"), { busy: () => live.busy });
    expect(outcome).toBe("delivered");
    expect(adapter.messages()).toEqual(["first and more"]);
  });

  it("gives up on the final text after repeated failures instead of retrying forever", async () => {
    const { clock, adapter, live } = setup();
    adapter.failNext(10, "other", ["post"]);
    const outcome = await driveUntil(clock, live.finish("hello"), { busy: () => live.busy, stepMs: 1000 });
    expect(outcome).toBe("failed");
    expect(adapter.calls.filter((c) => c.op === "post")).toHaveLength(5);
  });

  it("shares a channel budget: messages of two threads in one channel together respect the rule", async () => {
    const clock = new ManualClock();
    const adapter = new RecordingAdapter(clock);
    adapter.rule = { limit: 1, windowMs: 1000 };
    const limiter = new MemoryRateLimiter(clock);
    const lives = [1, 2, 3, 4].map((i) => new LiveMessage({ adapter, threadKey: `t${i}`, clock, limiter }));
    const all = Promise.all(lives.map((l, i) => l.finish(`reply ${i}`)));
    await driveUntil(clock, all, { busy: () => lives.some((l) => l.busy) });
    const posts = adapter.calls.filter((c) => c.op === "post" && c.ok).map((c) => c.at);
    expect(posts).toHaveLength(4);
    for (let i = 1; i < posts.length; i++)
      expect((posts[i] ?? 0) - (posts[i - 1] ?? 0)).toBeGreaterThanOrEqual(1000);
  });
});
