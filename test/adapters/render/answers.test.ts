/**
 * One chat message per assistant answer: a run that takes a new user message mid-way (a steer or a
 * follow-up) finishes the answer in progress and shows the next one in a message of its own, after
 * the earlier answer and as a reply to the user's message; and the typing indicator never outlives
 * what the answer shows.
 */
import { describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../../src/adapters/render/rate-limiter.js";
import { RunRenderer } from "../../../src/adapters/render/run-renderer.js";
import type { AgentMessage } from "../../../src/agent/types.js";
import { ManualClock } from "../../support/manual-clock.js";
import { streamedText, toolEnd, toolStart, userMessage, userTurn } from "../support/agent-events.js";
import { driveUntil, settle } from "../support/drive.js";
import { RecordingAdapter } from "../support/recording-adapter.js";

function setup(opts: { stopTyping?: boolean; limit?: number } = {}) {
  const clock = new ManualClock();
  const adapter = new RecordingAdapter(
    clock,
    { markdown: "plain" },
    { stopTyping: opts.stopTyping ?? false },
  );
  if (opts.limit) adapter.rule = { limit: opts.limit, windowMs: 1000 };
  const origins = new Map<AgentMessage, string>();
  const renderer = new RunRenderer({
    adapter,
    threadKey: "t1",
    clock,
    limiter: new MemoryRateLimiter(clock),
    replyTargetOf: (m) => origins.get(m),
  });
  /** A user message the run takes, coming from the chat message `ref`. */
  const steer = (text: string, ref: string) => {
    const m = userMessage(text);
    origins.set(m, ref);
    for (const e of userTurn(m)) renderer.onEvent(e);
  };
  return { clock, adapter, renderer, steer };
}

const posts = (a: RecordingAdapter) => a.calls.filter((c) => c.op === "post" && c.ok);

describe("RunRenderer: one message per answer", () => {
  it("a user message taken mid-run finishes the first answer and starts a second message replying to it", async () => {
    const { clock, adapter, renderer, steer } = setup();
    renderer.onEvent({ type: "agent_start" });
    steer("question one", "user-1");
    for (const e of streamedText(["answer ", "one"])) renderer.onEvent(e);
    steer("question two", "user-2");
    for (const e of streamedText(["answer ", "two"])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });

    expect(adapter.messages()).toEqual(["answer one", "answer two"]);
    const [first, second] = posts(adapter);
    expect(first?.replyTo).toBeUndefined();
    expect(second?.replyTo).toBe("user-2");
    // The second answer is posted only once the first one shows its final text.
    const firstDone = adapter.calls.filter((c) => c.ok && c.ref === first?.ref).at(-1);
    expect(firstDone?.text).toBe("answer one");
    expect(adapter.calls.indexOf(second as never)).toBeGreaterThan(adapter.calls.indexOf(firstDone as never));
    expect(renderer.state().map((a) => [a.text, a.replyTo, a.finished])).toEqual([
      ["answer one", undefined, true],
      ["answer two", "user-2", true],
    ]);
  });

  it("keeps tool lines with the answer that made the calls", async () => {
    const { clock, adapter, renderer, steer } = setup();
    renderer.onEvent({ type: "agent_start" });
    for (const e of streamedText(["Checking."])) renderer.onEvent(e);
    renderer.onEvent(toolStart("c1", "bash", { command: "date" }));
    await clock.advance(300);
    renderer.onEvent(toolEnd("c1", "bash"));
    steer("and the disk?", "user-2");
    renderer.onEvent(toolStart("c2", "bash", { command: "df -h" }));
    await clock.advance(500);
    renderer.onEvent(toolEnd("c2", "bash"));
    for (const e of streamedText(["Disk is fine."])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });

    expect(adapter.messages()).toEqual([
      "Checking.",
      "🔧 **bash** `date` ✅ 0.3 s",
      "🔧 **bash** `df -h` ✅ 0.5 s",
      "Disk is fine.",
    ]);
    const state = renderer.state();
    expect(state.map((a) => a.status)).toEqual([
      "🔧 **bash** `date` ✅ 0.3 s",
      "🔧 **bash** `df -h` ✅ 0.5 s",
    ]);
    expect(posts(adapter).map((p) => p.replyTo)).toEqual([undefined, undefined, "user-2", "user-2"]);
  });

  it("user messages taken before anything is shown stay in one answer, which replies to none of them", async () => {
    const { clock, adapter, renderer, steer } = setup();
    renderer.onEvent({ type: "agent_start" });
    steer("first", "user-1");
    steer("second", "user-2");
    for (const e of streamedText(["both answered"])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.messages()).toEqual(["both answered"]);
    expect(posts(adapter)[0]?.replyTo).toBeUndefined();
  });

  it("keeps the answers in order when the first one waits for the channel's budget", async () => {
    const { clock, adapter, renderer, steer } = setup({ limit: 1 });
    renderer.onEvent({ type: "agent_start" });
    for (const e of streamedText(["one"])) renderer.onEvent(e);
    steer("more", "user-2");
    for (const e of streamedText(["two"])) renderer.onEvent(e);
    steer("even more", "user-3");
    for (const e of streamedText(["three"])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.messages()).toEqual(["one", "two", "three"]);
    expect(posts(adapter).map((p) => p.replyTo)).toEqual([undefined, "user-2", "user-3"]);
  });
});

describe("RunRenderer: typing", () => {
  const typingAt = (a: RecordingAdapter) => a.calls.filter((c) => c.op === "typing").map((c) => c.at);

  it("types until the answer's first message appears, and never after it", async () => {
    const { clock, adapter, renderer } = setup();
    renderer.onEvent({ type: "agent_start" });
    await settle(() => renderer.busy);
    await clock.advance(9000);
    const before = typingAt(adapter).length;
    expect(before).toBeGreaterThanOrEqual(3);
    for (const e of streamedText(["The answer"])) renderer.onEvent(e);
    await settle(() => renderer.busy);
    const firstPost = posts(adapter)[0]?.at ?? 0;
    // A tool runs for a long time after the text appeared: the status message shows it, no typing.
    renderer.onEvent(toolStart("c1", "bash", { command: "make" }));
    await clock.advance(20_000);
    renderer.onEvent(toolEnd("c1", "bash"));
    for (const e of streamedText([" is 42."])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(typingAt(adapter).length).toBe(before);
    expect(Math.max(...typingAt(adapter))).toBeLessThanOrEqual(firstPost);
    // No typing call was in flight when the post went out: the post is recorded after it.
    const lastTyping = adapter.calls.map((c) => c.op).lastIndexOf("typing");
    expect(lastTyping).toBeLessThan(adapter.calls.findIndex((c) => c.op === "post"));
  });

  it("types again for the next answer after a new user message, until that answer appears", async () => {
    const { clock, adapter, renderer, steer } = setup();
    renderer.onEvent({ type: "agent_start" });
    for (const e of streamedText(["one"])) renderer.onEvent(e);
    await settle(() => renderer.busy);
    const afterFirst = typingAt(adapter).length;
    steer("two?", "user-2");
    await settle(() => renderer.busy);
    await clock.advance(5000);
    expect(typingAt(adapter).length).toBeGreaterThan(afterFirst);
    for (const e of streamedText(["two"])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    const secondPost = posts(adapter)[1]?.at ?? 0;
    expect(Math.max(...typingAt(adapter))).toBeLessThanOrEqual(secondPost);
    await clock.advance(30_000);
    expect(clock.pending).toBe(0);
  });

  it("ends the indicator explicitly where the platform can, before the answer appears", async () => {
    const { clock, adapter, renderer } = setup({ stopTyping: true });
    renderer.onEvent({ type: "agent_start" });
    await settle(() => renderer.busy);
    for (const e of streamedText(["hi"])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    const ops = adapter.calls.map((c) => c.op);
    expect(ops.filter((o) => o === "stop_typing")).toHaveLength(1);
    expect(ops.indexOf("stop_typing")).toBeLessThan(ops.indexOf("post"));
  });

  it("does not hold the answer back for a typing call that hangs", async () => {
    const { clock, adapter, renderer } = setup();
    let release: (() => void) | undefined;
    adapter.typing = () => new Promise<void>((r) => (release = r));
    renderer.onEvent({ type: "agent_start" });
    for (const e of streamedText(["answer"])) renderer.onEvent(e);
    await settle(() => renderer.busy);
    expect(posts(adapter)).toEqual([]);
    const start = clock.now();
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.messages()).toEqual(["answer"]);
    expect((posts(adapter)[0]?.at ?? 0) - start).toBeLessThanOrEqual(2000);
    release?.();
  });

  it("ends the indicator when a run shows nothing at all", async () => {
    const { clock, adapter, renderer } = setup({ stopTyping: true });
    renderer.onEvent({ type: "agent_start" });
    await settle(() => renderer.busy);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.calls.map((c) => c.op)).toEqual(["typing", "stop_typing"]);
  });
});
