import { isAssistantMessage, runAgentLoop, runAgentLoopContinue } from "./agent-loop.js";
import { errorMessage } from "./errors.js";
import type { ImageContent, Message, Model, TextContent, ThinkingLevel } from "./llm/types.js";
import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentState,
  AgentTool,
  QueueMode,
  StreamFn,
  ToolExecutionMode,
} from "./types.js";

/** The state an `Agent` starts with; only `model` is required. */
export type AgentInitialState = Partial<
  Pick<AgentState, "systemPrompt" | "thinkingLevel" | "tools" | "messages">
> & {
  model: Model;
};

/** Construction options of `Agent`. Every hook has the contract documented on `AgentLoopConfig`. */
export interface AgentOptions {
  initialState: AgentInitialState;
  /** Default `streamSimple` (the provider registry). */
  streamFn?: StreamFn;
  /** Default `defaultConvertToLlm`. */
  convertToLlm?: AgentLoopConfig["convertToLlm"];
  transformContext?: AgentLoopConfig["transformContext"];
  getApiKey?: AgentLoopConfig["getApiKey"];
  beforeToolCall?: AgentLoopConfig["beforeToolCall"];
  afterToolCall?: AgentLoopConfig["afterToolCall"];
  /** How `steer()` messages are taken at each checkpoint. Default `one-at-a-time`. */
  steeringMode?: QueueMode;
  /** How `followUp()` messages are taken when the agent would stop. Default `one-at-a-time`. */
  followUpMode?: QueueMode;
  /** Default `sequential`. */
  toolExecution?: ToolExecutionMode;
  sessionId?: string;
  streamOptions?: AgentLoopConfig["streamOptions"];
  /**
   * An external steering source (e.g. a Redis inbox), drained at every steering checkpoint after
   * the internal `steer()` queue. With `steeringMode` `one-at-a-time` it is read only when the
   * internal queue gave nothing at that checkpoint. Messages it returns are delivered exactly once.
   */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** An external follow-up source, drained like `getSteeringMessages` when the agent would stop. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  /** Receives errors thrown (or rejected) by subscribers. Default: one line on stderr. */
  onListenerError?: (error: unknown, event: AgentEvent) => void;
}

/**
 * The default `convertToLlm`: keeps user, assistant and tool-result messages and drops custom
 * kinds. Assistant messages that failed (`error`, `aborted`) are dropped too: they are history for
 * people, and providers reject their half-finished content (a retry with `continue()` relies on this).
 */
export function defaultConvertToLlm(messages: AgentMessage[]): Message[] {
  return messages.filter((m): m is Message => {
    const role = (m as { role?: unknown }).role;
    if (role === "assistant")
      return !["error", "aborted"].includes((m as { stopReason?: string }).stopReason ?? "");
    return role === "user" || role === "toolResult";
  });
}

/**
 * Hooks composed onto an agent after it was built (`Agent.addHooks`). A runtime adds its inbox and
 * its per-call compaction this way to an agent that a factory built, without the factory wiring
 * them and without touching the agent's options.
 */
export interface AgentHooks {
  /** Rewrites the history before every LLM call, composed with the other transforms (see `addHooks`). */
  transformContext?: AgentLoopConfig["transformContext"];
  /** An external steering source, drained with the others at every steering checkpoint. */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** An external follow-up source, drained with the others when the agent would stop. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
}

/** Where `addHooks` puts hooks among those the agent has. */
export interface AddHooksOptions {
  /** `first`: before every hook so far, the construction options' included; `last` (default): after them. */
  position?: "first" | "last";
}

function takeFrom(queue: AgentMessage[], mode: QueueMode): AgentMessage[] {
  return mode === "all" ? queue.splice(0) : queue.splice(0, 1);
}

function defaultListenerErrorReport(error: unknown, event: AgentEvent): void {
  const text = errorMessage(error);
  console.error(`Agent subscriber failed on "${event.type}": ${text}`);
}

/**
 * A stateful agent around the loop: it owns the history, model, reasoning level and tools, runs
 * one loop at a time, queues steering and follow-up messages, and fans events out to subscribers.
 *
 * State is updated before subscribers see an event, so a subscriber reading `agent.state` sees the
 * event applied. The model and reasoning level are read before every LLM call, so `setModel` and
 * `setThinkingLevel` during a run apply from the next call. `prompt()`/`continue()` resolve when
 * the run has ended (after `agent_end` reached every subscriber); failures are not thrown but end
 * the run with a failed assistant message and `state.error`.
 */
export class Agent {
  private readonly _state: AgentState;
  private readonly listeners = new Set<(event: AgentEvent) => void>();
  private readonly steeringQueue: AgentMessage[] = [];
  private readonly followUpQueue: AgentMessage[] = [];
  private abortController: AbortController | undefined;
  private running: Promise<void> | undefined;
  private readonly options: AgentOptions;
  /** The composed hooks, in order; the construction options' hooks are the first entry. */
  private hooks: AgentHooks[];

  steeringMode: QueueMode;
  followUpMode: QueueMode;
  toolExecution: ToolExecutionMode;
  sessionId: string | undefined;

  constructor(options: AgentOptions) {
    const initial = options.initialState;
    this.options = options;
    this._state = {
      systemPrompt: initial.systemPrompt ?? "",
      model: initial.model,
      thinkingLevel: initial.thinkingLevel ?? "off",
      tools: initial.tools ?? [],
      messages: initial.messages?.slice() ?? [],
      isStreaming: false,
      streamMessage: null,
      pendingToolCalls: new Set(),
    };
    this.steeringMode = options.steeringMode ?? "one-at-a-time";
    this.followUpMode = options.followUpMode ?? "one-at-a-time";
    this.toolExecution = options.toolExecution ?? "sequential";
    this.sessionId = options.sessionId;
    this.hooks = [
      {
        transformContext: options.transformContext,
        getSteeringMessages: options.getSteeringMessages,
        getFollowUpMessages: options.getFollowUpMessages,
      },
    ];
  }

  /**
   * Composes `hooks` with the agent's own and returns the function that removes them again. The
   * hooks are read at every use, so adding or removing them applies from the next LLM call or
   * checkpoint, also during a run.
   *
   * - `transformContext`: every transform runs before each LLM call, in order, each on the result
   *   of the one before. `position: "first"` makes a transform see the loop's full history (what
   *   compaction needs); the transforms after it see what it returned.
   * - `getSteeringMessages` / `getFollowUpMessages`: every source is drained at each checkpoint, in
   *   order, after the internal `steer()`/`followUp()` queue; the messages are concatenated. With
   *   `one-at-a-time` the external sources are asked only when the internal queue gave nothing.
   *
   * ```ts
   * const remove = agent.addHooks({ getSteeringMessages: () => inbox.take() }, { position: "first" });
   * // ...
   * remove();
   * ```
   */
  addHooks(hooks: AgentHooks, options: AddHooksOptions = {}): () => void {
    const entry: AgentHooks = { ...hooks };
    this.hooks = options.position === "first" ? [entry, ...this.hooks] : [...this.hooks, entry];
    return () => {
      this.hooks = this.hooks.filter((h) => h !== entry);
    };
  }

  /** How this agent calls its model (undefined: the provider registry's `streamSimple`); work for the same thread (a compaction's summary) calls the same way. */
  get streamFn(): StreamFn | undefined {
    return this.options.streamFn;
  }

  get state(): Readonly<AgentState> {
    return this._state;
  }

  /** Calls `fn` with every event from now on. Returns the function that unsubscribes. */
  subscribe(fn: (event: AgentEvent) => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  setSystemPrompt(systemPrompt: string): void {
    this._state.systemPrompt = systemPrompt;
  }

  /** Takes effect at the next LLM call, also during a run. */
  setModel(model: Model): void {
    this._state.model = model;
  }

  /** Takes effect at the next LLM call, also during a run. */
  setThinkingLevel(level: ThinkingLevel): void {
    this._state.thinkingLevel = level;
  }

  /** Takes effect at the next run. */
  setTools(tools: AgentTool[]): void {
    this._state.tools = tools.slice();
  }

  /** Replaces the history (after compaction or a session switch). The loop of an active run keeps its own copy. */
  replaceMessages(messages: AgentMessage[]): void {
    this._state.messages = messages.slice();
  }

  appendMessage(message: AgentMessage): void {
    this._state.messages.push(message);
  }

  clearMessages(): void {
    this._state.messages = [];
  }

  /** Queues a message to inject before the next LLM call of the active run (or at the start of the next run). */
  steer(message: AgentMessage): void {
    this.steeringQueue.push(message);
  }

  /** Queues a message to run after the agent would otherwise stop. */
  followUp(message: AgentMessage): void {
    this.followUpQueue.push(message);
  }

  clearSteeringQueue(): void {
    this.steeringQueue.length = 0;
  }

  clearFollowUpQueue(): void {
    this.followUpQueue.length = 0;
  }

  clearAllQueues(): void {
    this.clearSteeringQueue();
    this.clearFollowUpQueue();
  }

  /** Whether the internal `steer()`/`followUp()` queues hold messages (external sources are not asked). */
  hasQueuedMessages(): boolean {
    return this.steeringQueue.length > 0 || this.followUpQueue.length > 0;
  }

  /** Aborts the active run, if any. Queued messages are kept. */
  abort(): void {
    this.abortController?.abort();
  }

  /** Resolves when no run is active. */
  waitForIdle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Clears history, error and queues. Throws during a run: call `abort()` and await `waitForIdle()` first. */
  reset(): void {
    if (this.running) {
      throw new Error("Cannot reset the agent during a run: call abort() and await waitForIdle() first.");
    }
    this._state.messages = [];
    this._state.streamMessage = null;
    this._state.pendingToolCalls = new Set();
    this._state.error = undefined;
    this.clearAllQueues();
  }

  /**
   * Starts a run with a user message made of `input` (plus `images`), or with the given message(s),
   * and resolves when it ends. Rejects at once when a run is active: use `steer()` or `followUp()`.
   */
  prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    let prompts: AgentMessage[];
    if (typeof input === "string") {
      const content: (TextContent | ImageContent)[] = [{ type: "text", text: input }, ...(images ?? [])];
      prompts = [{ role: "user", content, timestamp: Date.now() }];
    } else {
      prompts = Array.isArray(input) ? input : [input];
    }
    return this.run((context, config, signal, sink) =>
      runAgentLoop(prompts, context, config, sink, signal, this.options.streamFn),
    );
  }

  /**
   * Continues from the current history: retries after a failed reply, or answers a trailing user or
   * tool-result message. When the last message is a finished assistant reply, queued steering
   * messages (else follow-ups, internal then external) start the run; with nothing queued it rejects.
   */
  continue(): Promise<void> {
    return this.run(async (context, config, signal, sink) => {
      const last = context.messages[context.messages.length - 1];
      if (last && isAssistantMessage(last) && last.stopReason !== "error" && last.stopReason !== "aborted") {
        let queued = await config.getSteeringMessages?.();
        if (!queued?.length) queued = await config.getFollowUpMessages?.();
        if (!queued?.length) {
          throw new Error(
            "Cannot continue: the last message is a finished assistant reply and nothing is queued. " +
              "Call prompt() with a new message.",
          );
        }
        return runAgentLoop(queued, context, config, sink, signal, this.options.streamFn);
      }
      return runAgentLoopContinue(context, config, sink, signal, this.options.streamFn);
    });
  }

  private busyError(): Error {
    return new Error(
      "The agent is already running. Use steer() to redirect the current run, followUp() to queue a message " +
        "for after it, or await waitForIdle() before prompting again.",
    );
  }

  private async drain(queue: AgentMessage[], mode: QueueMode, external?: () => Promise<AgentMessage[]>) {
    const internal = takeFrom(queue, mode);
    if (!external || (mode === "one-at-a-time" && internal.length > 0)) return internal;
    return [...internal, ...((await external()) ?? [])];
  }

  private loopConfig(): AgentLoopConfig {
    const o = this.options;
    return {
      model: this._state.model,
      getModel: () => this._state.model,
      thinkingLevel: this._state.thinkingLevel,
      getThinkingLevel: () => this._state.thinkingLevel,
      convertToLlm: o.convertToLlm ?? defaultConvertToLlm,
      transformContext: (messages, signal) => this.transform(messages, signal),
      getApiKey: o.getApiKey,
      sessionId: this.sessionId,
      streamOptions: o.streamOptions,
      beforeToolCall: o.beforeToolCall,
      afterToolCall: o.afterToolCall,
      toolExecution: this.toolExecution,
      getSteeringMessages: () => this.drain(this.steeringQueue, this.steeringMode, this.sources("steer")),
      getFollowUpMessages: () => this.drain(this.followUpQueue, this.followUpMode, this.sources("followUp")),
    };
  }

  /** Every composed `transformContext`, in order. */
  private async transform(messages: AgentMessage[], signal?: AbortSignal): Promise<AgentMessage[]> {
    let out = messages;
    for (const h of this.hooks) if (h.transformContext) out = await h.transformContext(out, signal);
    return out;
  }

  /** The composed external sources of one queue as one source; undefined when there is none. */
  private sources(which: "steer" | "followUp"): (() => Promise<AgentMessage[]>) | undefined {
    const fns = this.hooks.flatMap((h) => {
      const fn = which === "steer" ? h.getSteeringMessages : h.getFollowUpMessages;
      return fn ? [fn] : [];
    });
    if (fns.length === 0) return undefined;
    return async () => {
      const out: AgentMessage[] = [];
      for (const fn of fns) out.push(...((await fn()) ?? []));
      return out;
    };
  }

  private run(
    body: (
      context: AgentContext,
      config: AgentLoopConfig,
      signal: AbortSignal,
      sink: (event: AgentEvent) => void,
    ) => Promise<unknown>,
  ): Promise<void> {
    if (this.running) return Promise.reject(this.busyError());
    const controller = new AbortController();
    const state = this._state;
    this.abortController = controller;
    state.isStreaming = true;
    state.streamMessage = null;
    state.error = undefined;
    const context: AgentContext = {
      systemPrompt: state.systemPrompt,
      messages: state.messages.slice(),
      tools: state.tools,
    };
    let markIdle!: () => void;
    // Set before the body starts: a subscriber of the first events must already see the run.
    this.running = new Promise<void>((resolve) => {
      markIdle = resolve;
    });
    const finished = (async () => {
      try {
        await body(context, this.loopConfig(), controller.signal, (event) => this.handle(event));
      } finally {
        state.isStreaming = false;
        state.streamMessage = null;
        state.pendingToolCalls = new Set();
        this.abortController = undefined;
        this.running = undefined;
        markIdle();
      }
    })();
    return finished;
  }

  private handle(event: AgentEvent): void {
    const state = this._state;
    switch (event.type) {
      case "message_start":
      case "message_update":
        if (isAssistantMessage(event.message)) state.streamMessage = event.message;
        break;
      case "message_end":
        state.streamMessage = null;
        state.messages.push(event.message);
        break;
      case "tool_execution_start":
        state.pendingToolCalls.add(event.toolCallId);
        break;
      case "tool_execution_end":
        state.pendingToolCalls.delete(event.toolCallId);
        break;
      case "turn_end":
        if (event.message.stopReason === "error" || event.message.stopReason === "aborted") {
          state.error =
            event.message.errorMessage ?? `The model reply ended with "${event.message.stopReason}".`;
        }
        break;
      default:
        break;
    }
    for (const listener of [...this.listeners]) {
      try {
        const returned: unknown = listener(event);
        if (returned instanceof Promise) returned.catch((e: unknown) => this.reportListenerError(e, event));
      } catch (e) {
        this.reportListenerError(e, event);
      }
    }
  }

  private reportListenerError(error: unknown, event: AgentEvent): void {
    try {
      (this.options.onListenerError ?? defaultListenerErrorReport)(error, event);
    } catch {
      // The reporter itself failed; the run must go on regardless.
    }
  }
}
