/**
 * Building the streamed `AssistantMessage` and its events, shared by every provider.
 *
 * Usage:
 * ```ts
 * export const streamFoo: StreamFunction<"foo", FooOptions> = (model, context, options) =>
 *   runProviderStream({ model, provider: "Foo", signal: options?.signal, secrets: [apiKey] }, async (b) => {
 *     const response = await fetchWithRetry(...);   // throws → error event
 *     b.start();                                     // first byte arrived
 *     const t = b.startText();
 *     b.appendText(t, "Hel");
 *     b.setUsage({ input: 12, output: 3 });
 *     b.finish("stop");                              // ends open blocks, pushes done
 *   });
 * ```
 * Event order guaranteed to consumers: `start`, then for each content block
 * `<kind>_start`, `<kind>_delta`…, `<kind>_end` (blocks may interleave only as the wire
 * interleaves them), then exactly one `done` or `error`. Every event carries `partial`, the same
 * message object mutated in place. Tool-call `arguments` are re-parsed from the raw JSON text
 * after every fragment, so they are an object at every `toolcall_delta`.
 *
 * The "never throws once started" contract lives in `runProviderStream`: any exception from the
 * provider body becomes an `error` event, `stopReason: "aborted"` when the caller's signal was
 * aborted (partial content and usage kept), else `"error"` with a one-line, credential-free
 * `errorMessage`. Blocks still open at a failure get no `_end` event: after `error`, read the
 * message itself. A body that returns without calling `finish` is reported as a stream that ended
 * before the response finished (a dropped connection or a truncated stream).
 */
import { AssistantMessageEventStream } from "../../event-stream.js";
import { redactSecrets } from "../../redact.js";
import type {
  AssistantMessage,
  Model,
  StopReason,
  TextContent,
  ThinkingContent,
  ToolCall,
} from "../../types.js";
import { calculateCost, createAssistantMessage } from "../../usage.js";
import { describeError, ProviderError } from "./http.js";
import { parseStreamingJson } from "./partial-json.js";

type BlockState =
  | { kind: "text"; block: TextContent }
  | { kind: "thinking"; block: ThinkingContent }
  | { kind: "toolCall"; block: ToolCall; rawArguments: string };

/** Token counts as a provider reports them; omitted fields keep their previous value. */
export interface UsageUpdate {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface ProviderRunInfo {
  model: Model;
  /** Human-readable provider name used in error messages, e.g. "OpenAI". */
  provider: string;
  signal?: AbortSignal;
  /** Credentials to scrub from any error message. */
  secrets?: readonly (string | undefined)[];
}

/**
 * Creates the stream, runs `body` on the next microtask and returns the stream at once.
 * See the file header for the error contract.
 */
export function runProviderStream(
  info: ProviderRunInfo,
  body: (builder: AssistantMessageBuilder) => Promise<void>,
): AssistantMessageEventStream {
  const builder = new AssistantMessageBuilder(info);
  void Promise.resolve()
    .then(() => body(builder))
    .then(
      () => {
        if (!builder.finished) {
          builder.fail(new ProviderError(`${info.provider} stream ended before the response finished`));
        }
      },
      (error: unknown) => builder.fail(error),
    );
  return builder.stream;
}

/** Accumulates one assistant message and pushes its events; see the file header. */
export class AssistantMessageBuilder {
  readonly stream = new AssistantMessageEventStream();
  readonly message: AssistantMessage;
  private readonly blocks = new Map<number, BlockState>();
  private started = false;
  private done = false;
  private readonly secrets: (string | undefined)[];

  constructor(private readonly info: ProviderRunInfo) {
    this.message = createAssistantMessage(info.model);
    this.secrets = [...(info.secrets ?? [])];
  }

  /** Keeps `secret` (the key in use, once resolved) out of every error message of this stream. */
  scrub(secret: string | undefined): void {
    this.secrets.push(secret);
  }

  /** True once `finish` or `fail` has run; later calls are ignored. */
  get finished(): boolean {
    return this.done;
  }

  /** Pushes `start` (once). `finish` and `fail` call it when the provider did not. */
  start(): void {
    if (this.started || this.done) return;
    this.started = true;
    this.stream.push({ type: "start", partial: this.message });
  }

  startText(): number {
    const block: TextContent = { type: "text", text: "" };
    const index = this.open({ kind: "text", block });
    this.stream.push({ type: "text_start", contentIndex: index, partial: this.message });
    return index;
  }

  appendText(index: number, delta: string): void {
    const state = this.get(index, "text");
    if (!state || delta === "") return;
    state.block.text += delta;
    this.stream.push({ type: "text_delta", contentIndex: index, delta, partial: this.message });
  }

  /** Sets the provider's id of the text block (kept for replay to the same API). */
  setTextSignature(index: number, signature: string): void {
    const state = this.get(index, "text");
    if (state) state.block.textSignature = signature;
  }

  startThinking(init: { signature?: string; redacted?: boolean } = {}): number {
    const block: ThinkingContent = { type: "thinking", thinking: "" };
    if (init.signature !== undefined) block.thinkingSignature = init.signature;
    if (init.redacted) block.redacted = true;
    const index = this.open({ kind: "thinking", block });
    this.stream.push({ type: "thinking_start", contentIndex: index, partial: this.message });
    return index;
  }

  appendThinking(index: number, delta: string): void {
    const state = this.get(index, "thinking");
    if (!state || delta === "") return;
    state.block.thinking += delta;
    this.stream.push({ type: "thinking_delta", contentIndex: index, delta, partial: this.message });
  }

  /** Appends to the thinking block's signature (signatures may stream in pieces). */
  appendThinkingSignature(index: number, delta: string): void {
    const state = this.get(index, "thinking");
    if (state) state.block.thinkingSignature = (state.block.thinkingSignature ?? "") + delta;
  }

  startToolCall(id: string, name: string, init: { thoughtSignature?: string } = {}): number {
    const block: ToolCall = { type: "toolCall", id, name, arguments: {} };
    if (init.thoughtSignature !== undefined) block.thoughtSignature = init.thoughtSignature;
    const index = this.open({ kind: "toolCall", block, rawArguments: "" });
    this.stream.push({ type: "toolcall_start", contentIndex: index, partial: this.message });
    return index;
  }

  /** Appends a fragment of the arguments' JSON text and re-parses it into `arguments`. */
  appendToolCallArguments(index: number, delta: string): void {
    const state = this.get(index, "toolCall");
    if (!state || delta === "") return;
    state.rawArguments += delta;
    state.block.arguments = parseStreamingJson(state.rawArguments);
    this.stream.push({ type: "toolcall_delta", contentIndex: index, delta, partial: this.message });
  }

  /** Fills in a tool call's id or name when the wire sends them after the first fragment. */
  updateToolCall(index: number, update: { id?: string; name?: string }): void {
    const state = this.get(index, "toolCall");
    if (!state) return;
    if (update.id) state.block.id = update.id;
    if (update.name) state.block.name = update.name;
  }

  /** Pushes the `_end` event of an open block. Unknown or closed indexes are ignored. */
  endBlock(index: number): void {
    const state = this.blocks.get(index);
    if (!state) return;
    this.blocks.delete(index);
    switch (state.kind) {
      case "text":
        this.stream.push({
          type: "text_end",
          contentIndex: index,
          content: state.block,
          partial: this.message,
        });
        break;
      case "thinking":
        this.stream.push({
          type: "thinking_end",
          contentIndex: index,
          content: state.block,
          partial: this.message,
        });
        break;
      case "toolCall":
        state.block.arguments = parseStreamingJson(state.rawArguments);
        this.stream.push({
          type: "toolcall_end",
          contentIndex: index,
          toolCall: state.block,
          partial: this.message,
        });
        break;
    }
  }

  /** Ends every open block in content order. */
  endOpenBlocks(): void {
    for (const index of [...this.blocks.keys()].sort((a, b) => a - b)) this.endBlock(index);
  }

  /** Merges token counts, then recomputes `totalTokens` and the cost from the model's prices. */
  setUsage(update: UsageUpdate): void {
    const usage = this.message.usage;
    if (update.input !== undefined) usage.input = update.input;
    if (update.output !== undefined) usage.output = update.output;
    if (update.cacheRead !== undefined) usage.cacheRead = update.cacheRead;
    if (update.cacheWrite !== undefined) usage.cacheWrite = update.cacheWrite;
    usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
    calculateCost(this.info.model, usage);
  }

  setResponseId(id: string): void {
    this.message.responseId = id;
  }

  /**
   * Ends the message: closes open blocks and pushes `done`, or `error` when `reason` is
   * `error`/`aborted` (then `errorMessage` says why, e.g. a content-filter refusal).
   */
  finish(reason: StopReason, errorMessage?: string): void {
    if (this.done) return;
    this.start();
    this.endOpenBlocks();
    this.message.stopReason = reason;
    this.done = true;
    if (reason === "error" || reason === "aborted") {
      this.message.errorMessage = redactSecrets(
        errorMessage ??
          (reason === "aborted" ? "Request was aborted" : `${this.info.provider} request failed`),
        this.secrets,
      );
      this.stream.push({ type: "error", reason, error: this.message });
      return;
    }
    this.stream.push({ type: "done", reason, message: this.message });
  }

  /** Ends the message with an `error` event for `error`, keeping partial content and usage. */
  fail(error: unknown): void {
    if (this.done) return;
    this.blocks.clear();
    if (this.info.signal?.aborted) {
      this.finish("aborted", "Request was aborted");
      return;
    }
    this.finish("error", describeError(error, this.info.provider, this.secrets));
  }

  private open(state: BlockState): number {
    this.start();
    const index = this.message.content.length;
    this.message.content.push(state.block);
    this.blocks.set(index, state);
    return index;
  }

  private get<K extends BlockState["kind"]>(
    index: number,
    kind: K,
  ): Extract<BlockState, { kind: K }> | undefined {
    const state = this.blocks.get(index);
    return state?.kind === kind ? (state as Extract<BlockState, { kind: K }>) : undefined;
  }
}
