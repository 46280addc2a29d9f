import { afterEach, describe, expect, it } from "vitest";
import {
  type AssistantMessageEvent,
  AssistantMessageEventStream,
  complete,
  createAssistantMessage,
  EventStream,
  getApiProvider,
  type Model,
  registerApiProvider,
  streamSimple,
  unregisterApiProviders,
} from "../../src/agent/llm/index.js";

const model: Model = {
  id: "echo-1",
  name: "Echo",
  api: "test-echo",
  provider: "test",
  reasoning: false,
  input: ["text"],
  cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1000,
  maxTokens: 100,
};

function echoStream(): AssistantMessageEventStream {
  const s = new AssistantMessageEventStream();
  const message = createAssistantMessage(model);
  queueMicrotask(() => {
    s.push({ type: "start", partial: message });
    message.content.push({ type: "text", text: "hi" });
    s.push({ type: "done", reason: "stop", message });
  });
  return s;
}

afterEach(() => {
  unregisterApiProviders("protocol-test");
});

describe("EventStream", () => {
  it("buffers events pushed before iteration and ends on the completing event", async () => {
    const s = new EventStream<number, string>(
      (n) => n < 0,
      (n) => `ended with ${n}`,
    );
    s.push(1);
    s.push(2);
    s.push(-1);
    s.push(3); // after the end: ignored
    const seen: number[] = [];
    for await (const n of s) seen.push(n);
    expect(seen).toEqual([1, 2, -1]);
    expect(await s.result()).toBe("ended with -1");
  });

  it("wakes a waiting consumer and ends it when end() is called", async () => {
    const s = new EventStream<number, string>(
      () => false,
      () => "",
    );
    const consumed = (async () => {
      const seen: number[] = [];
      for await (const n of s) seen.push(n);
      return seen;
    })();
    await Promise.resolve();
    s.push(7);
    s.end("done");
    expect(await consumed).toEqual([7]);
    expect(await s.result()).toBe("done");
  });

  it("resolves an assistant stream's result with the error message on an error event", async () => {
    const s = new AssistantMessageEventStream();
    const failed = {
      ...createAssistantMessage(model),
      stopReason: "error" as const,
      errorMessage: "HTTP 500",
    };
    s.push({ type: "error", reason: "error", error: failed });
    const events: AssistantMessageEvent[] = [];
    for await (const e of s) events.push(e);
    expect(events.map((e) => e.type)).toEqual(["error"]);
    expect((await s.result()).errorMessage).toBe("HTTP 500");
  });
});

describe("provider registry", () => {
  it("dispatches streamSimple and complete on model.api", async () => {
    registerApiProvider({ api: "test-echo", stream: echoStream, streamSimple: echoStream }, "protocol-test");
    const events: string[] = [];
    for await (const e of streamSimple(model, { messages: [] })) events.push(e.type);
    expect(events).toEqual(["start", "done"]);
    const final = await complete(model, { messages: [] });
    expect(final.content).toEqual([{ type: "text", text: "hi" }]);
  });

  it("names the api and how to fix it when no provider is registered", () => {
    expect(() => streamSimple({ ...model, api: "nope-api" }, { messages: [] })).toThrow(
      /No LLM provider is registered for api "nope-api".*registerApiProvider/,
    );
  });

  it("removes everything one source registered", () => {
    registerApiProvider({ api: "test-echo", stream: echoStream, streamSimple: echoStream }, "protocol-test");
    expect(getApiProvider("test-echo")).toBeDefined();
    expect(unregisterApiProviders("protocol-test")).toBe(1);
    expect(getApiProvider("test-echo")).toBeUndefined();
  });
});

describe("built-in providers", () => {
  it("registers all four wire APIs", async () => {
    const { registerBuiltInApiProviders, listApiProviders } = await import("../../src/agent/llm/index.js");
    registerBuiltInApiProviders();
    expect(listApiProviders()).toEqual(
      expect.arrayContaining([
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
      ]),
    );
  });
});
