/**
 * The provider contract, run by every wire API (test/llm/providers.test.ts) against the fake LLM
 * server: what the engine may rely on whichever provider a thread uses. A provider
 *
 * - streams text, thinking and tool calls as the one event protocol (`start`, per block
 *   `<kind>_start` / `_delta`… / `_end`, then exactly one `done` or `error`; `result()` is the final
 *   message), tool-call arguments an object at every delta;
 * - reports usage and its cost from the model's prices, and maps the API's stop reasons;
 * - treats every failure as data: it retries 429 and 5xx before the first token (honouring
 *   `retry-after`), never after; a dropped connection, an in-stream error, a stalled stream, an abort
 *   (before the request or mid-stream, also during a retry wait), a missing key and a context overflow
 *   each end the stream with `stopReason` `error` or `aborted`, the partial content kept, and an
 *   `errorMessage` that names the provider, has no stack trace and never holds the key.
 *
 * What is specific to one wire (request bodies, thinking budgets, history conversion) stays in that
 * provider's own test file.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { isContextOverflow } from "../../src/agent/llm/overflow.js";
import type {
  ApiProvider,
  AssistantMessage,
  AssistantMessageEvent,
  Context,
  Model,
  SimpleStreamOptions,
  StreamOptions,
} from "../../src/agent/llm/types.js";
import {
  type FakeApi,
  type FakeLlmServer,
  type ScriptedHttpError,
  startFakeLlmServer,
} from "../fakes/llm-server.js";

export interface ProviderProfile {
  api: FakeApi;
  provider: ApiProvider<FakeApi, StreamOptions>;
  /** The name its error messages start with ("Anthropic", "OpenAI", "Google"). */
  name: string;
  /** A reasoning model with prices, served from `baseUrl`. */
  model(baseUrl: string): Model;
  /** Where the real API lives (a remote URL needs a key). */
  remoteBaseUrl: string;
  /** The environment variables a key comes from; the missing-key message names the first. */
  keyEnv: string[];
  /** The `errorMessage` of a reply the API stopped for safety (a refusal, a content filter). */
  refusal: RegExp;
  /** The API's own answer to a prompt longer than the context window. */
  overflow: ScriptedHttpError;
  /** The output limit in a request body, where the API puts it (`max_tokens`, `maxOutputTokens`…). */
  outputLimitOf(body: Record<string, unknown>): unknown;
}

/** A key with no recognisable shape: only the provider's own scrubbing can keep it out of messages. */
const KEY = "zq-contract-key-7f3a9c1e77b2d4c0";

const hello: Context = {
  systemPrompt: "You are terse.",
  messages: [{ role: "user", content: "Say hello", timestamp: 1 }],
};

interface Collected {
  events: AssistantMessageEvent[];
  message: AssistantMessage;
}

/**
 * Reads the whole stream and checks the event protocol: `start` first; per content block its
 * `_start`, then deltas, then at most one `_end`, in order; exactly one terminal event, last, whose
 * message is what `result()` resolves with and whose reason is the message's `stopReason`; a failure
 * has an `errorMessage` without stack trace or key.
 */
async function collect(
  source: AsyncIterable<AssistantMessageEvent> & { result(): Promise<AssistantMessage> },
) {
  const events: AssistantMessageEvent[] = [];
  for await (const e of source) events.push(e);
  const message = await source.result();
  expect(events[0]?.type).toBe("start");
  const terminal = events.filter((e) => e.type === "done" || e.type === "error");
  expect(terminal).toHaveLength(1);
  const last = events.at(-1);
  expect(last).toBe(terminal[0]);
  if (last?.type === "done") {
    expect(last.message).toEqual(message);
    expect(message.stopReason).toBe(last.reason);
  } else if (last?.type === "error") {
    expect(last.error).toEqual(message);
    expect(message.stopReason).toBe(last.reason);
    expect(message.errorMessage).toBeTruthy();
    expect(message.errorMessage).not.toMatch(/\n\s+at /);
    expect(message.errorMessage).not.toContain(KEY);
  }
  const phase = new Map<number, "open" | "ended">();
  for (const e of events) {
    if (!("contentIndex" in e)) continue;
    const state = phase.get(e.contentIndex);
    if (e.type.endsWith("_start")) {
      expect(state, `${e.type} of block ${e.contentIndex} opened twice`).toBeUndefined();
      phase.set(e.contentIndex, "open");
    } else {
      expect(state, `${e.type} of block ${e.contentIndex} outside start…end`).toBe("open");
      if (e.type.endsWith("_end")) phase.set(e.contentIndex, "ended");
    }
  }
  if (last?.type === "done") for (const state of phase.values()) expect(state).toBe("ended");
  return { events, message } satisfies Collected;
}

/** The start and end events, in order (deltas left out). */
function blocks(events: AssistantMessageEvent[]): string[] {
  return events.map((e) => e.type).filter((t) => t.endsWith("_start") || t.endsWith("_end"));
}

export function providerContract(profile: ProviderProfile): void {
  const { api, name } = profile;

  describe(`provider contract: ${api}`, () => {
    let llm: FakeLlmServer;
    let model: Model;
    /** Backoff waits are recorded instead of slept, so retry tests take no wall time. */
    let delays: number[] = [];
    let onSleep: (() => void) | undefined;
    const retry = {
      sleep: async (ms: number) => {
        delays.push(ms);
        onSleep?.();
      },
    };

    beforeAll(async () => {
      llm = await startFakeLlmServer();
      model = profile.model(llm.baseUrl(api));
    });
    afterAll(async () => {
      await llm.close();
    });
    afterEach(() => {
      llm.requests.length = 0;
      delays = [];
      onSleep = undefined;
      vi.unstubAllEnvs();
    });

    function run(options: SimpleStreamOptions = {}, context: Context = hello, m: Model = model) {
      return collect(
        profile.provider.streamSimple(m as Model<FakeApi>, context, {
          apiKey: KEY,
          retry,
          ...options,
        } as SimpleStreamOptions),
      );
    }

    describe("streaming", () => {
      it("streams text cut inside multibyte characters, which arrives intact", async () => {
        llm.enqueue(api, { text: "Héllo 👋, 日本語 too!", chunkSize: 3 });
        const { events, message } = await run();
        expect(blocks(events)).toEqual(["text_start", "text_end"]);
        expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(1);
        expect(message.content).toHaveLength(1);
        expect(message.content[0]).toMatchObject({ type: "text", text: "Héllo 👋, 日本語 too!" });
        expect(message).toMatchObject({ stopReason: "stop", api, provider: model.provider, model: model.id });
      });

      it("streams thinking, then text", async () => {
        llm.enqueue(api, {
          thinking: "The user wants a greeting.",
          thinkingSignature: "c2ln",
          text: "Hello!",
        });
        const { events, message } = await run({ reasoning: "medium" });
        expect(blocks(events)).toEqual(["thinking_start", "thinking_end", "text_start", "text_end"]);
        expect(message.content[0]).toMatchObject({
          type: "thinking",
          thinking: "The user wants a greeting.",
        });
        expect(message.content[1]).toMatchObject({ type: "text", text: "Hello!" });
      });

      it("assembles two tool calls, their arguments an object at every delta", async () => {
        llm.enqueue(api, {
          text: "Checking.",
          toolCalls: [
            { id: "call_A1", name: "read_file", args: { path: "/tmp/ä.txt", lines: [1, 20] } },
            { id: "call_B2", name: "bash", args: { command: 'echo "hi" | wc -c' } },
          ],
          fragmentSize: 3,
          chunkSize: 7,
        });
        const { events, message } = await run();
        expect(message.stopReason).toBe("toolUse");
        const calls = message.content.filter((c) => c.type === "toolCall");
        expect(calls.map((c) => [c.name, c.arguments])).toEqual([
          ["read_file", { path: "/tmp/ä.txt", lines: [1, 20] }],
          ["bash", { command: 'echo "hi" | wc -c' }],
        ]);
        // The ids the API sent (a wire may add its own item id after a `|`).
        expect(calls[0]?.id.split("|")[0]).toBe("call_A1");
        expect(calls[1]?.id.split("|")[0]).toBe("call_B2");
        const deltas = events.filter((e) => e.type === "toolcall_delta");
        expect(deltas.length).toBeGreaterThanOrEqual(2);
        for (const d of deltas) {
          const block = d.partial.content[d.contentIndex];
          expect(block?.type === "toolCall" && typeof block.arguments).toBe("object");
        }
        expect(events.filter((e) => e.type === "toolcall_end")).toHaveLength(2);
      });

      it("reports usage and its cost from the model's prices", async () => {
        llm.enqueue(api, { text: "ok", usage: { input: 1000, output: 500, cacheRead: 2000 } });
        const { message } = await run();
        expect(message.usage).toMatchObject({ input: 1000, output: 500, cacheRead: 2000, totalTokens: 3500 });
        const c = model.cost;
        const expected = (1000 * c.input + 500 * c.output + 2000 * c.cacheRead) / 1_000_000;
        expect(message.usage.cost.total).toBeCloseTo(expected, 10);
      });

      it.each([
        ["stop", "stop"],
        ["length", "length"],
        ["toolUse", "toolUse"],
        ["refusal", "error"],
      ] as const)("maps stop reason %s to %s", async (scripted, expected) => {
        llm.enqueue(api, {
          text: "partial answer",
          ...(scripted === "toolUse" && { toolCalls: [{ id: "call_1", name: "ls", args: {} }] }),
          stopReason: scripted,
        });
        const { events, message } = await run();
        expect(message.stopReason).toBe(expected);
        expect(events.at(-1)?.type).toBe(expected === "error" ? "error" : "done");
        if (expected === "error") expect(message.errorMessage).toMatch(profile.refusal);
        else expect(message.errorMessage).toBeUndefined();
      });
    });

    describe("request", () => {
      it("sends the model's output limit (the config's maxTokens), or the caller's, as the API names it", async () => {
        llm.enqueue(api, [{ text: "ok" }, { text: "ok" }]);
        // Without reasoning: thinking raises the limit by its budget (test/llm/thinking.test.ts).
        const plain = { ...model, reasoning: false };
        await run({}, hello, { ...plain, maxTokens: 1234 });
        await run({ maxTokens: 77 }, hello, plain);
        expect(llm.requests.map((r) => profile.outputLimitOf(r.body))).toEqual([1234, 77]);
      });
    });

    describe("failures are data", () => {
      it("names the status, content type and first bytes of an answer that is not an event stream", async () => {
        const page =
          "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Proxy login</body></html>";
        llm.enqueue(api, { rawAnswer: { contentType: "text/html; charset=utf-8", body: page } });
        const { message } = await run();
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toBe(
          `${name} answered HTTP 200 with text/html instead of an event stream: ${page}. ` +
            "Check the model's baseUrl (it must be the API's address, e.g. http://127.0.0.1:11434/v1)",
        );
        expect(llm.requests).toHaveLength(1);
      });

      it("quotes the message of a JSON error that came with status 200", async () => {
        const body = JSON.stringify({ error: { message: "model 'x' not found, try pulling it first" } });
        llm.enqueue(api, { rawAnswer: { contentType: "application/json", body } });
        const { message } = await run();
        expect(message.errorMessage).toBe(
          `${name} answered HTTP 200 with application/json instead of an event stream: model 'x' not found, try pulling it first`,
        );
      });

      it("reads an event stream sent as text/plain (some compatible servers do)", async () => {
        llm.enqueue(api, { text: "plain but streamed", streamContentType: "text/plain" });
        const { message } = await run();
        expect(message.stopReason).toBe("stop");
        expect(message.content).toMatchObject([{ type: "text", text: "plain but streamed" }]);
      });

      it("retries a 429 after its retry-after and a 5xx with backoff, before the first token", async () => {
        llm.enqueue(api, [
          { httpError: { status: 429, message: "Rate limit reached", retryAfter: 3 } },
          { httpError: { status: 503, message: "Service unavailable" } },
          { text: "finally" },
        ]);
        const { message } = await run();
        expect(message.stopReason).toBe("stop");
        expect(message.content[0]).toMatchObject({ type: "text", text: "finally" });
        expect(delays).toHaveLength(2);
        expect(delays[0]).toBe(3000);
        expect(delays[1]).toBeGreaterThan(0);
        expect(llm.requests).toHaveLength(3);
      });

      it("gives up after maxRetries and says so", async () => {
        llm.enqueue(api, [
          { httpError: { status: 500, message: "Internal error" } },
          { httpError: { status: 500, message: "Internal error" } },
        ]);
        const { message } = await run({ maxRetries: 1 });
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toMatch(
          new RegExp(`^${name} API error \\(HTTP 500.*\\(gave up after 1 retry\\)$`),
        );
        expect(llm.requests).toHaveLength(2);
      });

      it("ends with an error, not a retry, for a server error after the first token", async () => {
        llm.enqueue(api, [
          { text: "Hello there", errorAfterTokens: { tokens: 1, message: "The server had an error" } },
          { text: "must not be used" },
        ]);
        const { message } = await run();
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toMatch(new RegExp(`^${name} .*The server had an error`));
        expect(message.content[0]).toMatchObject({ type: "text", text: "Hell" });
        expect(llm.requests).toHaveLength(1);
        expect(llm.pending(api)).toBe(1);
        await run(); // takes the reply queued for a retry that never came
      });

      it("reports a connection dropped mid-stream as an error and keeps what arrived", async () => {
        const full = "This answer will be cut off somewhere in the middle. ".repeat(3);
        // 80 deltas: every wire's stream is far longer than 2000 bytes, and its preamble far shorter.
        llm.enqueue(api, { text: full, fragmentSize: 2, dropAfterBytes: 2000 });
        const { message } = await run();
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toMatch(
          new RegExp(`^${name} (connection dropped|stream ended) before the response finished`),
        );
        const text = message.content[0];
        expect(text?.type === "text" && text.text.length > 0 && full.startsWith(text.text)).toBe(true);
        expect(llm.requests).toHaveLength(1);
      });

      it("ends a stalled stream after idleTimeoutMs, keeping what arrived", async () => {
        llm.enqueue(api, { text: "One two three four five six", stallAfterTokens: 2 });
        const { message } = await run({ idleTimeoutMs: 200 });
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toBe(`${name} stream stalled: no data for 0.2 s`);
        expect(message.content[0]).toMatchObject({ type: "text", text: "One two " });
      });

      it("ends as aborted with the partial content when the caller aborts mid-stream", async () => {
        llm.enqueue(api, { text: "One two three four five six", stallAfterTokens: 2 });
        const controller = new AbortController();
        const source = profile.provider.streamSimple(model as Model<FakeApi>, hello, {
          apiKey: KEY,
          retry,
          signal: controller.signal,
        } as SimpleStreamOptions);
        let deltas = 0;
        const events: AssistantMessageEvent[] = [];
        for await (const e of source) {
          events.push(e);
          if (e.type === "text_delta" && ++deltas === 2) controller.abort();
        }
        const message = await source.result();
        expect(events.at(-1)).toMatchObject({ type: "error", reason: "aborted" });
        expect(message.stopReason).toBe("aborted");
        expect(message.errorMessage).toBe("Request was aborted");
        expect(message.content[0]).toMatchObject({ type: "text", text: "One two " });
      });

      it("ends as aborted without a request when the signal aborted before the call", async () => {
        llm.enqueue(api, { text: "never sent" });
        const { events, message } = await run({ signal: AbortSignal.abort() });
        expect(events.map((e) => e.type)).toEqual(["start", "error"]);
        expect(message.stopReason).toBe("aborted");
        expect(message.errorMessage).toBe("Request was aborted");
        expect(llm.requests).toHaveLength(0);
        await run(); // takes the unused reply
      });

      it("ends as aborted during a retry wait, without asking again", async () => {
        llm.enqueue(api, [
          { httpError: { status: 429, message: "Rate limit reached", retryAfter: 30 } },
          { text: "never asked for" },
        ]);
        const controller = new AbortController();
        onSleep = () => controller.abort();
        const { message } = await run({ signal: controller.signal });
        expect(message.stopReason).toBe("aborted");
        expect(llm.requests).toHaveLength(1);
        onSleep = undefined;
        await run(); // takes the unused reply
      });

      it("says which variable to set when no key is configured, without a request", async () => {
        for (const env of profile.keyEnv) vi.stubEnv(env, "");
        const remote = { ...model, baseUrl: profile.remoteBaseUrl } as Model<FakeApi>;
        const { events, message } = await collect(profile.provider.streamSimple(remote, hello, {}));
        expect(events.map((e) => e.type)).toEqual(["start", "error"]);
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toBe(
          `No API key for ${name} (model ${model.id}): set ${profile.keyEnv.join(" or ")}, or pass apiKey.`,
        );
        expect(llm.requests).toHaveLength(0);
      });

      it("never puts the key in errorMessage, given or from the environment, even when the server echoes it", async () => {
        const echo = (key: string): ScriptedHttpError => ({
          status: 401,
          message: `Incorrect API key provided: ${key}`,
        });
        llm.enqueue(api, { httpError: echo(KEY) });
        const given = await run();
        expect(given.message.errorMessage).toMatch(
          new RegExp(`^${name} API error \\(HTTP 401.*\\[redacted\\]`),
        );

        const fromEnv = "zq-env-key-0e9a8b7c6d5f4a3b";
        vi.stubEnv(profile.keyEnv[0] ?? "", fromEnv);
        llm.enqueue(api, { httpError: echo(fromEnv) });
        const { message } = await collect(
          profile.provider.streamSimple(model as Model<FakeApi>, hello, { retry } as SimpleStreamOptions),
        );
        expect(message.errorMessage).toContain("[redacted]");
        expect(message.errorMessage).not.toContain(fromEnv);
      });

      it("marks a too-long prompt as context overflow, without retrying", async () => {
        llm.enqueue(api, { httpError: profile.overflow });
        const { message } = await run();
        expect(message.stopReason).toBe("error");
        expect(message.errorMessage).toMatch(
          new RegExp(`^${name} API error \\(HTTP ${profile.overflow.status}`),
        );
        expect(isContextOverflow(message)).toBe(true);
        expect(llm.requests).toHaveLength(1);
      });
    });
  });
}
