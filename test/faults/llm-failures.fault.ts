/**
 * The LLM server failing and stalling mid-stream, through the real Anthropic provider against the
 * fake LLM server, with the embedded runtime: a stream that breaks off with an error event, an HTTP
 * 500, and a connection dropped mid-stream each end the run with a clear error message;
 * `StreamOptions.idleTimeoutMs` ends a stream that stalls, with a message saying so. After each, the
 * same thread answers the next message.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/adapters/types.js";
import { Agent } from "../../src/agent/agent.js";
import { registerBuiltInApiProviders } from "../../src/agent/llm/providers/index.js";
import type { AssistantMessage, Model } from "../../src/agent/llm/types.js";
import { convertToLlm } from "../../src/agent/session/index.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { type FakeLlmServer, type ScriptedReply, startFakeLlmServer } from "../fakes/llm-server.js";
import { report, waitFor } from "./support.js";

const IDLE_TIMEOUT_MS = 1500;

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return (last.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
}

function replyFor(text: string): ScriptedReply {
  if (text.includes("fail-midstream")) {
    return {
      text: "partial answer that breaks off",
      errorAfterTokens: { tokens: 3, message: "Overloaded", code: "overloaded_error" },
    };
  }
  if (text.includes("http-500")) return { httpError: { status: 500, message: "upstream exploded" } };
  if (text.includes("drop"))
    return { text: "this stream is cut off in the middle of a word", dropAfterBytes: 400 };
  if (text.includes("stall")) return { text: "thinking about it and then nothing more", stallAfterTokens: 3 };
  return { text: `fine, answering: ${text.slice(0, 20)}` };
}

let n = 0;
function message(threadKey: string, text: string): InboundMessage {
  n++;
  return {
    platform: "web",
    threadKey,
    eventId: `web:event:llm:${n}`,
    messageId: `web:llm:${n}`,
    channelId: "web",
    user: { id: "u1", name: "Ada", isBot: false },
    text,
    attachments: [],
    mentioned: true,
    isDirect: true,
    timestamp: Date.now(),
  };
}

describe("fault: LLM server failing and stalling mid-stream", () => {
  let llm: FakeLlmServer;
  let runtime: EmbeddedRuntime;
  let dir: string;
  const sinks = new RecordingSinks();

  beforeAll(async () => {
    registerBuiltInApiProviders();
    llm = await startFakeLlmServer();
    llm.respondWith("anthropic-messages", (req) => replyFor(lastUserText(req.body)));
    const model: Model = {
      id: "claude-fault",
      name: "Claude (fake)",
      api: "anthropic-messages",
      provider: "anthropic",
      baseUrl: llm.baseUrl("anthropic-messages"),
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 200_000,
      maxTokens: 1024,
    };
    dir = mkdtempSync(join(tmpdir(), "sbf-llm-"));
    runtime = new EmbeddedRuntime({
      dataDir: dir,
      sinks: sinks.factory,
      controlPollMs: 100,
      agentFactory: (ctx) =>
        new Agent({
          initialState: { model, thinkingLevel: "off", messages: ctx.messages, tools: [] },
          getApiKey: () => "test-key",
          convertToLlm,
          streamOptions: { idleTimeoutMs: IDLE_TIMEOUT_MS },
        }),
    });
    await runtime.start();
  });
  afterAll(async () => {
    await runtime.stop({ graceMs: 0 });
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function assistantEnds(threadKey: string): AssistantMessage[] {
    return sinks
      .runsOf(threadKey)
      .flatMap((r) => r.events)
      .flatMap((e) =>
        e.type === "message_end" && e.message.role === "assistant" ? [e.message as AssistantMessage] : [],
      );
  }

  async function ask(
    threadKey: string,
    text: string,
    timeoutMs: number,
  ): Promise<AssistantMessage | undefined> {
    const before = assistantEnds(threadKey).length;
    await runtime.deliver(message(threadKey, text));
    try {
      await waitFor(() => assistantEnds(threadKey).length > before, timeoutMs, `an answer to "${text}"`);
    } catch {
      return undefined;
    }
    return assistantEnds(threadKey).at(-1);
  }

  it.each(["fail-midstream", "http-500", "drop"])(
    "%s: the run ends with a clear error and the thread answers next",
    async (kind) => {
      const thread = `web:llm-${kind}`;
      const failed = await ask(thread, `please ${kind}`, 15_000);
      const next = await ask(thread, "are you there?", 15_000);
      report(`LLM ${kind}`, {
        stopReason: failed?.stopReason,
        errorMessage: failed?.errorMessage?.slice(0, 120),
        nextStopReason: next?.stopReason,
      });
      expect(failed?.stopReason).toBe("error");
      expect(failed?.errorMessage ?? "").not.toBe("");
      expect(next?.stopReason).toBe("stop");
    },
  );

  it("stall: the idle timeout ends the run with a clear message and the thread answers next", async () => {
    const thread = "web:llm-stall";
    const t0 = Date.now();
    const stalled = await ask(thread, "please stall", IDLE_TIMEOUT_MS + 5000);
    const endedAfterMs = Date.now() - t0;
    await waitFor(async () => !(await runtime.status(thread)).active, 5000, "the thread to go idle");
    const next = await ask(thread, "still there?", 15_000);
    report("LLM stall mid-stream", {
      idleTimeoutMs: IDLE_TIMEOUT_MS,
      endedAfterMs,
      stopReason: stalled?.stopReason,
      errorMessage: stalled?.errorMessage?.slice(0, 120),
      nextStopReason: next?.stopReason,
    });
    expect(stalled?.stopReason).toBe("error");
    expect(stalled?.errorMessage ?? "").toMatch(/stalled/);
    expect(next?.stopReason).toBe("stop");
  });
});
