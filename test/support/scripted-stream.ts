/**
 * A scripted model for tests: a `StreamFn` that answers each call with the next scripted reply,
 * speaking the engine's event protocol (start, text/thinking/tool-call start-delta-end, done or
 * error) the way a provider does, with no network in between. For the wire level, use the fake
 * LLM server in test/fakes/llm-server.ts instead.
 *
 * ```ts
 * const model = new ScriptedStream(["Hello!"]);                       // replies in order
 * model.enqueue({ toolCalls: [{ name: "add", args: { a: 1, b: 2 } }] }, "It is 3.");
 * const agent = new Agent({ initialState: { model: scriptedModel() }, streamFn: model.streamFn });
 * await agent.prompt("hi");
 * expect(model.calls[0]?.context.messages).toHaveLength(1);          // what the model saw
 * ```
 *
 * Conversation-driven tests use a responder instead of (or after) the queue:
 * `new ScriptedStream((call) => ({ text: `you said ${lastUserText(call)}` }))`.
 *
 * To make something happen at an exact point of a reply (steer or abort mid-run, without sleeps),
 * put a `Gate` in its content: the stream stops there, resolves `gate.reached`, and goes on when
 * the test calls `gate.release()`. An abort while paused (or anywhere) ends the reply with
 * `stopReason: "aborted"`, keeping the content streamed so far.
 */
import { parse as parsePartialJson } from "partial-json";
import { AssistantMessageEventStream } from "../../src/agent/llm/event-stream.js";
import type {
  AssistantMessage,
  AssistantMessageEventSource,
  Context,
  Message,
  Model,
  SimpleStreamOptions,
  TextContent,
  ThinkingContent,
  Tool,
  ToolCall,
} from "../../src/agent/llm/types.js";
import { calculateCost, createAssistantMessage } from "../../src/agent/llm/usage.js";

/** A pause point. Await `reached`, then call `release()` to let the reply go on. */
export interface Gate {
  readonly type: "gate";
  /** Resolves when a stream (or anything calling `arrive()`) reaches the gate. */
  readonly reached: Promise<void>;
  readonly isReached: boolean;
  readonly isReleased: boolean;
  /** Marks the gate reached and waits for `release()`. Also usable inside scripted tools. */
  arrive(): Promise<void>;
  release(): void;
}

/** A new gate, not reached and not released. */
export function createGate(): Gate {
  let markReached!: () => void;
  let markReleased!: () => void;
  const reached = new Promise<void>((resolve) => {
    markReached = resolve;
  });
  const released = new Promise<void>((resolve) => {
    markReleased = resolve;
  });
  const gate = {
    type: "gate" as const,
    reached,
    isReached: false,
    isReleased: false,
    arrive(): Promise<void> {
      gate.isReached = true;
      markReached();
      return released;
    },
    release(): void {
      gate.isReleased = true;
      markReleased();
    },
  };
  return gate;
}

/** One block of a scripted reply, streamed in order. A `Gate` pauses the reply at that point. */
export type ScriptedStreamBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string; signature?: string }
  /** `id` defaults to `call_<callIndex>_<blockIndex>`. */
  | { type: "toolCall"; name: string; args: Record<string, unknown>; id?: string }
  | Gate;

/**
 * One scripted reply. Content is `content` (explicit order) or the shorthands, streamed as
 * thinking → text → tool calls. A string is shorthand for `{ text }`. The stop reason defaults to
 * `toolUse` when there are tool calls, else `stop`.
 */
export interface ScriptedStreamReply {
  content?: ScriptedStreamBlock[];
  thinking?: string;
  text?: string;
  toolCalls?: { name: string; args: Record<string, unknown>; id?: string }[];
  stopReason?: "stop" | "length" | "toolUse";
  /** Token counts; cost is computed from the model's prices. Default all zero. */
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
  responseId?: string;
  /** Characters per delta event. Default 4. */
  fragmentSize?: number;
  /** After the content, end with `stopReason: "error"` and this `errorMessage` (a provider error). */
  error?: string;
  /**
   * The stream function throws this synchronously instead of returning a stream (a broken stream
   * function). Works for queued replies and for replies a responder returns synchronously.
   */
  throwError?: string;
  /** After the content, the iterator throws this instead of ending (a stream breaking its contract). */
  iteratorError?: string;
}

/** What one call received, copied at call time so later history changes do not alter it. */
export interface RecordedStreamCall {
  /** 0-based call number. */
  index: number;
  model: Model;
  context: {
    systemPrompt?: string;
    messages: Message[];
    tools?: Pick<Tool, "name" | "description" | "parameters">[];
  };
  /** The options without `signal`: `reasoning`, `apiKey`, `sessionId`, and any stream options. */
  options: Omit<SimpleStreamOptions, "signal">;
  signal?: AbortSignal;
}

export type ScriptedStreamResponder = (
  call: RecordedStreamCall,
) => ScriptedStreamReply | string | Promise<ScriptedStreamReply | string>;

/** A model for tests: reasoning-capable, free, scripted api and provider. */
export function scriptedModel(overrides: Partial<Model> = {}): Model {
  return {
    id: "scripted-1",
    name: "Scripted",
    api: "scripted",
    provider: "scripted",
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 100_000,
    maxTokens: 8_000,
    ...overrides,
  };
}

/** The text of the last user message a call saw (string or text blocks), or "". */
export function lastUserText(call: RecordedStreamCall): string {
  const user = call.context.messages.filter((m) => m.role === "user").at(-1);
  if (!user) return "";
  if (typeof user.content === "string") return user.content;
  return user.content
    .filter((c): c is TextContent => c.type === "text")
    .map((c) => c.text)
    .join("");
}

function copyMessages(messages: Message[]): Message[] {
  try {
    return structuredClone(messages);
  } catch {
    return messages.map((m) => ({ ...m }));
  }
}

function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

function blocksOf(reply: ScriptedStreamReply): ScriptedStreamBlock[] {
  if (reply.content) return reply.content;
  const blocks: ScriptedStreamBlock[] = [];
  if (reply.thinking !== undefined) blocks.push({ type: "thinking", text: reply.thinking });
  if (reply.text !== undefined) blocks.push({ type: "text", text: reply.text });
  for (const call of reply.toolCalls ?? []) blocks.push({ type: "toolCall", ...call });
  return blocks;
}

class Aborted extends Error {}

/** Plays one reply into `out`. Never throws except for `iteratorError`, which is delivered by the wrapper. */
async function play(
  reply: ScriptedStreamReply,
  call: RecordedStreamCall,
  out: AssistantMessageEventStream,
): Promise<void> {
  const { model, signal } = call;
  const message: AssistantMessage = createAssistantMessage(model);
  if (reply.responseId) message.responseId = reply.responseId;
  const u = reply.usage ?? {};
  message.usage.input = u.input ?? 0;
  message.usage.output = u.output ?? 0;
  message.usage.cacheRead = u.cacheRead ?? 0;
  message.usage.cacheWrite = u.cacheWrite ?? 0;
  message.usage.totalTokens =
    message.usage.input + message.usage.output + message.usage.cacheRead + message.usage.cacheWrite;
  calculateCost(model, message.usage);
  const size = reply.fragmentSize ?? 4;

  // Yields a macrotask between events, like a network stream: the consumer handles each event
  // before the partial message changes again. Notices an abort at each step.
  const step = async () => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal?.aborted) throw new Aborted();
  };

  try {
    await step();
    out.push({ type: "start", partial: message });
    for (const [blockIndex, block] of blocksOf(reply).entries()) {
      if (block.type === "gate") {
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => reject(new Aborted());
          signal?.addEventListener("abort", onAbort, { once: true });
          block.arrive().then(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          });
        });
        await step();
        continue;
      }
      const contentIndex = message.content.length;
      if (block.type === "text") {
        const content: TextContent = { type: "text", text: "" };
        message.content.push(content);
        out.push({ type: "text_start", contentIndex, partial: message });
        for (const delta of fragments(block.text, size)) {
          await step();
          content.text += delta;
          out.push({ type: "text_delta", contentIndex, delta, partial: message });
        }
        await step();
        out.push({ type: "text_end", contentIndex, content, partial: message });
      } else if (block.type === "thinking") {
        const content: ThinkingContent = { type: "thinking", thinking: "" };
        if (block.signature) content.thinkingSignature = block.signature;
        message.content.push(content);
        out.push({ type: "thinking_start", contentIndex, partial: message });
        for (const delta of fragments(block.text, size)) {
          await step();
          content.thinking += delta;
          out.push({ type: "thinking_delta", contentIndex, delta, partial: message });
        }
        await step();
        out.push({ type: "thinking_end", contentIndex, content, partial: message });
      } else {
        const toolCall: ToolCall = {
          type: "toolCall",
          id: block.id ?? `call_${call.index}_${blockIndex}`,
          name: block.name,
          arguments: {},
        };
        message.content.push(toolCall);
        out.push({ type: "toolcall_start", contentIndex, partial: message });
        let json = "";
        for (const delta of fragments(JSON.stringify(block.args), size)) {
          await step();
          json += delta;
          toolCall.arguments = (parsePartialJson(json) as Record<string, unknown> | undefined) ?? {};
          out.push({ type: "toolcall_delta", contentIndex, delta, partial: message });
        }
        toolCall.arguments = structuredClone(block.args);
        await step();
        out.push({ type: "toolcall_end", contentIndex, toolCall, partial: message });
      }
    }
    await step();
    if (reply.iteratorError !== undefined) throw new Error(reply.iteratorError);
    if (reply.error !== undefined) {
      message.stopReason = "error";
      message.errorMessage = reply.error;
      out.push({ type: "error", reason: "error", error: message });
      return;
    }
    const hasToolCalls = message.content.some((c) => c.type === "toolCall");
    message.stopReason = reply.stopReason ?? (hasToolCalls ? "toolUse" : "stop");
    out.push({ type: "done", reason: message.stopReason, message });
  } catch (e) {
    if (!(e instanceof Aborted)) throw e;
    message.stopReason = "aborted";
    message.errorMessage = "Request was aborted.";
    out.push({ type: "error", reason: "aborted", error: message });
  }
}

/** Wraps the event stream so that an `iteratorError` surfaces from the iterator, as a broken stream would. */
function withIteratorError(
  inner: AssistantMessageEventStream,
  failure: Promise<Error | undefined>,
): AssistantMessageEventSource {
  return {
    result: () => inner.result(),
    async *[Symbol.asyncIterator]() {
      yield* inner;
      const error = await failure;
      if (error) throw error;
    },
  };
}

/** A scripted `StreamFn` with a reply queue, an optional responder, and a record of every call. */
export class ScriptedStream {
  /** Every call in order, with the context the model saw. */
  readonly calls: RecordedStreamCall[] = [];
  private readonly queue: (ScriptedStreamReply | string)[] = [];
  private responder: ScriptedStreamResponder | undefined;
  private readonly callWaiters: { count: number; resolve: () => void }[] = [];

  constructor(replies: (ScriptedStreamReply | string)[] | ScriptedStreamResponder = []) {
    if (typeof replies === "function") this.responder = replies;
    else this.queue.push(...replies);
  }

  /** Adds replies to the queue; queued replies are used before the responder. */
  enqueue(...replies: (ScriptedStreamReply | string)[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Answers calls when the queue is empty. */
  respondWith(responder: ScriptedStreamResponder): this {
    this.responder = responder;
    return this;
  }

  /** Replies still queued. */
  get pending(): number {
    return this.queue.length;
  }

  /** Resolves once at least `count` calls have been made. */
  waitForCalls(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.callWaiters.push({ count, resolve }));
  }

  /** The stream function to pass to `Agent` or `agentLoop`. */
  readonly streamFn = (
    model: Model,
    context: Context,
    options?: SimpleStreamOptions,
  ): AssistantMessageEventSource => {
    const { signal, ...rest } = options ?? {};
    const call: RecordedStreamCall = {
      index: this.calls.length,
      model,
      context: {
        systemPrompt: context.systemPrompt,
        messages: copyMessages(context.messages),
        tools: context.tools?.map(({ name, description, parameters }) => ({ name, description, parameters })),
      },
      options: rest,
      signal,
    };
    this.calls.push(call);
    for (const waiter of this.callWaiters.filter((w) => this.calls.length >= w.count)) {
      this.callWaiters.splice(this.callWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }

    let chosen: ScriptedStreamReply | string | Promise<ScriptedStreamReply | string> | undefined;
    let choiceError: unknown;
    try {
      chosen = this.queue.shift() ?? this.responder?.(call);
    } catch (e) {
      choiceError = e;
    }
    // A reply known synchronously may ask the stream function itself to throw.
    if (typeof chosen === "object" && !(chosen instanceof Promise) && chosen.throwError !== undefined) {
      throw new Error(chosen.throwError);
    }

    const out = new AssistantMessageEventStream();
    const failure = (async (): Promise<Error | undefined> => {
      let reply: ScriptedStreamReply;
      try {
        if (choiceError !== undefined) throw choiceError;
        const resolved = await chosen;
        if (resolved === undefined) {
          throw new Error(
            `ScriptedStream: no reply scripted for call #${call.index}; enqueue() one or set respondWith().`,
          );
        }
        reply = typeof resolved === "string" ? { text: resolved } : resolved;
      } catch (e) {
        const message = { ...createAssistantMessage(model), stopReason: "error" as const };
        message.errorMessage = e instanceof Error ? e.message : String(e);
        out.push({ type: "error", reason: "error", error: message });
        return undefined;
      }
      try {
        await play(reply, call, out);
        return undefined;
      } catch (e) {
        out.end();
        return e instanceof Error ? e : new Error(String(e));
      }
    })();
    return withIteratorError(out, failure);
  };
}
