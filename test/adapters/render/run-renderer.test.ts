import { describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../../src/adapters/render/rate-limiter.js";
import { briefError, createRendererFactory, RunRenderer } from "../../../src/adapters/render/run-renderer.js";
import type { RunSinkFactory } from "../../../src/queue/types.js";
import { ManualClock } from "../../support/manual-clock.js";
import { assistant, streamedText, textUpdate, toolEnd, toolStart } from "../support/agent-events.js";
import { driveUntil, settle } from "../support/drive.js";
import { RecordingAdapter } from "../support/recording-adapter.js";

function setup() {
  const clock = new ManualClock();
  const adapter = new RecordingAdapter(clock, { markdown: "plain" });
  const renderer = new RunRenderer({
    adapter,
    threadKey: "t1",
    clock,
    limiter: new MemoryRateLimiter(clock),
  });
  return { clock, adapter, renderer };
}

const typingCalls = (a: RecordingAdapter) => a.calls.filter((c) => c.op === "typing").length;

describe("RunRenderer", () => {
  it("shows a status line per tool with state and duration, and the reply in its own message", async () => {
    const { clock, adapter, renderer } = setup();
    renderer.onEvent({ type: "agent_start" });
    renderer.onEvent(toolStart("c1", "bash", { command: "ls -la /tmp" }));
    await settle(() => renderer.busy);
    expect(adapter.messages()).toEqual(["🔧 **bash** `ls -la /tmp` ⏳"]);
    await clock.advance(400);
    renderer.onEvent(toolEnd("c1", "bash"));
    renderer.onEvent(toolStart("c2", "read", { path: "/etc/hosts" }));
    await clock.advance(1500);
    renderer.onEvent(toolEnd("c2", "read", true));
    for (const e of streamedText(["The ", "answer ", "is 42."])) renderer.onEvent(e);
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.messages()).toEqual([
      "🔧 **bash** `ls -la /tmp` ✅ 0.4 s\n🔧 **read** `/etc/hosts` ❌ 1.5 s",
      "The answer is 42.",
    ]);
  });

  it("joins the text of several assistant messages of one run", async () => {
    const { clock, adapter, renderer } = setup();
    for (const e of streamedText(["Let me check."])) renderer.onEvent(e);
    renderer.onEvent(toolStart("c1", "bash", { command: "date" }));
    renderer.onEvent(toolEnd("c1", "bash"));
    for (const e of streamedText(["It is noon."])) renderer.onEvent(e);
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.messages()).toContain("Let me check.\n\nIt is noon.");
  });

  it("posts nothing for a reply that is the quiet marker, and never shows the marker while it streams", async () => {
    const clock = new ManualClock();
    const adapter = new RecordingAdapter(clock, { markdown: "plain" });
    const quiet = () =>
      new RunRenderer({
        adapter,
        threadKey: "t1",
        clock,
        limiter: new MemoryRateLimiter(clock),
        quietMarker: "NO_REPLY",
      });
    const silent = quiet();
    for (const e of streamedText(["NO", "_RE", "PLY"])) silent.onEvent(e);
    await driveUntil(clock, silent.close(), { busy: () => silent.busy });
    expect(adapter.messages()).toEqual([]);
    // A reply that only begins like the marker is shown in full.
    const spoken = quiet();
    for (const e of streamedText(["NO", " deploy failed today."])) spoken.onEvent(e);
    await driveUntil(clock, spoken.close(), { busy: () => spoken.busy });
    expect(adapter.messages()).toEqual(["NO deploy failed today."]);
  });

  it("keeps typing while the agent works and stops when the run ends", async () => {
    const { clock, adapter, renderer } = setup();
    renderer.onEvent({ type: "agent_start" });
    await settle(() => renderer.busy);
    await clock.advance(20_000);
    const whileWorking = typingCalls(adapter);
    expect(whileWorking).toBeGreaterThanOrEqual(4);
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    await clock.advance(60_000);
    expect(typingCalls(adapter)).toBe(whileWorking);
    expect(clock.pending).toBe(0);
  });

  it("stops typing and marks running tools when a run is aborted", async () => {
    const { clock, adapter, renderer } = setup();
    renderer.onEvent({ type: "agent_start" });
    renderer.onEvent(toolStart("c1", "bash", { command: "sleep 100" }));
    await clock.advance(2000);
    renderer.onEvent({ type: "message_end", message: assistant("", "aborted", "Request was aborted") });
    await driveUntil(clock, renderer.close({ aborted: true }), { busy: () => renderer.busy });
    expect(adapter.messages()).toEqual(["🔧 **bash** `sleep 100` ⏹️ 2.0 s"]);
    const before = typingCalls(adapter);
    await clock.advance(30_000);
    expect(typingCalls(adapter)).toBe(before);
  });

  it("shows an error once, briefly, without stack traces or secrets", async () => {
    const { clock, adapter, renderer } = setup();
    renderer.onEvent({ type: "agent_start" });
    renderer.onEvent({
      type: "message_end",
      message: assistant(
        "",
        "error",
        "401 invalid key sk-abcdefghijklmnopqrstuv\n    at fetch (node:internal/deps/undici:1:1)\n    at x",
      ),
    });
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close({ error: "again" }), { busy: () => renderer.busy });
    await renderer.close({ error: "third time" });
    expect(adapter.messages()).toEqual(["⚠️ 401 invalid key [redacted]"]);
  });

  it("says it is still waiting for the model when a stream goes quiet, and takes it back when it speaks", async () => {
    const clock = new ManualClock();
    const adapter = new RecordingAdapter(clock, { markdown: "plain" });
    const renderer = new RunRenderer({
      adapter,
      threadKey: "t1",
      clock,
      limiter: new MemoryRateLimiter(clock),
      waitNoticeMs: 8000,
    });
    renderer.onEvent({ type: "agent_start" });
    renderer.onEvent({ type: "turn_start" });
    renderer.onEvent({ type: "message_start", message: assistant("") });
    renderer.onEvent(textUpdate("Half an", "Half an"));
    await settle(() => renderer.busy);
    await clock.advance(7000);
    expect(adapter.messages()).toEqual(["Half an"]);
    await clock.advance(1500);
    await settle(() => renderer.busy);
    expect(adapter.messages()).toEqual(["Half an\n\n⏳ still waiting for the model… (8 s)"]);
    await clock.advance(8000);
    await settle(() => renderer.busy);
    expect(adapter.messages()).toEqual(["Half an\n\n⏳ still waiting for the model… (16 s)"]);
    renderer.onEvent(textUpdate("Half an answer.", " answer."));
    await clock.advance(1000);
    await settle(() => renderer.busy);
    expect(adapter.messages()).toEqual(["Half an answer."]);
    // A tool that runs long is not the model's silence.
    renderer.onEvent({ type: "message_end", message: assistant("Half an answer.", "toolUse") });
    renderer.onEvent(toolStart("c1", "bash", { command: "sleep 60" }));
    await clock.advance(60_000);
    await settle(() => renderer.busy);
    expect(adapter.messages().join("\n")).not.toContain("still waiting");
    renderer.onEvent(toolEnd("c1", "bash"));
    renderer.onEvent({ type: "agent_end", messages: [] });
    await driveUntil(clock, renderer.close(), { busy: () => renderer.busy });
    expect(adapter.messages()).toEqual(["Half an answer.", "🔧 **bash** `sleep 60` ✅ 1 min 0 s"]);
    expect(clock.pending).toBe(0);
  });

  it("briefError keeps the first meaningful line under 200 characters", () => {
    expect(briefError(`Error: ${"x".repeat(500)}\n  at foo`).length).toBeLessThanOrEqual(200);
    expect(briefError("\n\n  at a\nreal problem")).toBe("real problem");
  });
});

describe("createRendererFactory", () => {
  it("makes renderers the queue runtime can use as run sinks, sharing one limiter", async () => {
    const clock = new ManualClock();
    const adapter = new RecordingAdapter(clock);
    adapter.rule = { limit: 1, windowMs: 1000 };
    const factory: RunSinkFactory = createRendererFactory({
      adapter,
      clock,
      limiter: new MemoryRateLimiter(clock),
    });
    const sinks = [factory("t1", "run-1"), factory("t2", "run-2")];
    for (const [i, s] of sinks.entries()) for (const e of streamedText([`reply ${i}`])) s.onEvent(e);
    await driveUntil(clock, Promise.all(sinks.map((s) => s.close())), { stepMs: 250 });
    const posts = adapter.calls.filter((c) => c.op === "post" && c.ok);
    expect(posts.map((c) => c.text).sort()).toEqual(["reply 0", "reply 1"]);
    expect(Math.abs((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0))).toBeGreaterThanOrEqual(1000);
  });

  it("a notice-only sink posts the notice and nothing else", async () => {
    const clock = new ManualClock();
    const adapter = new RecordingAdapter(clock);
    const sink = createRendererFactory({ adapter, clock })("t1", "notice:1");
    await driveUntil(clock, Promise.resolve(sink.onNotice("Inbox full: dropped 1 message.")));
    await driveUntil(clock, sink.close());
    expect(adapter.messages()).toEqual(["Inbox full: dropped 1 message."]);
    expect(adapter.calls.filter((c) => c.op === "typing")).toEqual([]);
  });
});
