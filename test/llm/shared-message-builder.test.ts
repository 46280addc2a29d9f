import { describe, expect, it } from "vitest";
import type { AssistantMessageEvent, Model } from "../../src/agent/llm/index.js";
import { ProviderError } from "../../src/agent/llm/providers/shared/http.js";
import { runProviderStream } from "../../src/agent/llm/providers/shared/message-builder.js";
import { parseStreamingJson } from "../../src/agent/llm/providers/shared/partial-json.js";

const model: Model = {
  id: "m1",
  name: "M1",
  api: "test-api",
  provider: "test",
  reasoning: true,
  input: ["text"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200_000,
  maxTokens: 8000,
};

async function collect(stream: AsyncIterable<AssistantMessageEvent>): Promise<AssistantMessageEvent[]> {
  const events: AssistantMessageEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe("parseStreamingJson", () => {
  it("returns an object for every prefix of the arguments' JSON", () => {
    const json = '{"path": "/tmp/a b", "depth": 12, "flags": ["-l", "-a"], "nested": {"ok": true}}';
    for (let i = 0; i <= json.length; i++) {
      const value = parseStreamingJson(json.slice(0, i));
      expect(typeof value).toBe("object");
      expect(Array.isArray(value)).toBe(false);
    }
    expect(parseStreamingJson('{"path": "/tm')).toEqual({ path: "/tm" });
    expect(parseStreamingJson(json)).toEqual({
      path: "/tmp/a b",
      depth: 12,
      flags: ["-l", "-a"],
      nested: { ok: true },
    });
  });

  it("gives an empty object for text that is not a JSON object", () => {
    expect(parseStreamingJson("")).toEqual({});
    expect(parseStreamingJson("[1, 2]")).toEqual({});
    expect(parseStreamingJson("not json at all")).toEqual({});
  });
});

describe("runProviderStream", () => {
  it("emits start, block events with partials, usage with cost, and done", async () => {
    const stream = runProviderStream({ model, provider: "Test" }, async (b) => {
      b.start();
      const t = b.startThinking();
      b.appendThinking(t, "hmm");
      b.appendThinkingSignature(t, "si");
      b.appendThinkingSignature(t, "g");
      const x = b.startText();
      b.appendText(x, "Hi");
      const c = b.startToolCall("call_1", "ls");
      b.appendToolCallArguments(c, '{"pa');
      b.appendToolCallArguments(c, 'th": "/tmp"}');
      b.setUsage({ input: 1_000_000, output: 1_000_000, cacheRead: 1_000_000, cacheWrite: 1_000_000 });
      b.finish("toolUse");
    });
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual([
      "start",
      "thinking_start",
      "thinking_delta",
      "text_start",
      "text_delta",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_delta",
      "thinking_end",
      "text_end",
      "toolcall_end",
      "done",
    ]);
    const message = await stream.result();
    expect(message.content).toEqual([
      { type: "thinking", thinking: "hmm", thinkingSignature: "sig" },
      { type: "text", text: "Hi" },
      { type: "toolCall", id: "call_1", name: "ls", arguments: { path: "/tmp" } },
    ]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage.totalTokens).toBe(4_000_000);
    expect(message.usage.cost).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
      total: 22.05,
    });
  });

  it("has the arguments as an object at every toolcall_delta", async () => {
    const seen: unknown[] = [];
    const stream = runProviderStream({ model, provider: "Test" }, async (b) => {
      const c = b.startToolCall("call_1", "write");
      for (const piece of ['{"fi', 'le": "a.t', 'xt", "body": "x', 'yz"}']) {
        b.appendToolCallArguments(c, piece);
        // Let the consumer see this delta before the next fragment mutates the partial.
        await new Promise((resolve) => setImmediate(resolve));
      }
      b.finish("toolUse");
    });
    for await (const e of stream) {
      if (e.type === "toolcall_delta") {
        const call = e.partial.content[e.contentIndex];
        seen.push(call?.type === "toolCall" ? structuredClone(call.arguments) : undefined);
      }
    }
    expect(seen).toEqual([{}, { file: "a.t" }, { file: "a.txt", body: "x" }, { file: "a.txt", body: "xyz" }]);
  });

  it("turns an exception into an error event that keeps the partial content and scrubs the key", async () => {
    const stream = runProviderStream(
      { model, provider: "Test", secrets: ["sk-secret-key-1234"] },
      async (b) => {
        const t = b.startText();
        b.appendText(t, "partial");
        b.setUsage({ input: 10 });
        throw new ProviderError("Test stream error: boom for sk-secret-key-1234");
      },
    );
    const events = await collect(stream);
    expect(events.at(-1)?.type).toBe("error");
    const message = await stream.result();
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("Test stream error: boom for [redacted]");
    expect(message.content).toEqual([{ type: "text", text: "partial" }]);
    expect(message.usage.input).toBe(10);
  });

  it("reports aborted when the signal was aborted, whatever the exception", async () => {
    const controller = new AbortController();
    const stream = runProviderStream({ model, provider: "Test", signal: controller.signal }, async (b) => {
      b.appendText(b.startText(), "so far");
      controller.abort();
      throw new Error("socket closed");
    });
    const message = await stream.result();
    expect(message.stopReason).toBe("aborted");
    expect(message.errorMessage).toBe("Request was aborted");
    expect(message.content).toEqual([{ type: "text", text: "so far" }]);
  });

  it("reports a stream that ended without a final event as an error", async () => {
    const stream = runProviderStream({ model, provider: "Test" }, async (b) => {
      b.appendText(b.startText(), "cut");
    });
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual(["start", "text_start", "text_delta", "error"]);
    expect((await stream.result()).errorMessage).toBe("Test stream ended before the response finished");
  });

  it("maps finish('error') to an error event with the given message", async () => {
    const stream = runProviderStream({ model, provider: "Test" }, async (b) => {
      b.finish("error", "refused");
    });
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual(["start", "error"]);
    expect(await stream.result()).toMatchObject({ stopReason: "error", errorMessage: "refused" });
  });
});
