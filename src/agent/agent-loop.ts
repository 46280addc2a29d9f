/**
 * The ReAct double loop. The inner loop calls the model, runs its tool calls and injects steering
 * messages until the model stops calling tools and nothing is queued; the outer loop restarts it
 * with follow-up messages. Plain functions: the model stream, the queues and every hook are
 * injected through `AgentLoopConfig`, and everything observable is an `AgentEvent`.
 */
import { errorMessage } from "./errors.js";
import { EventStream } from "./llm/event-stream.js";
import { streamSimple } from "./llm/stream.js";
import type { AssistantMessage, Context, Model, ToolResultMessage } from "./llm/types.js";
import { createAssistantMessage } from "./llm/usage.js";
import { type Emit, executeToolCalls } from "./tool-execution.js";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, StreamFn } from "./types.js";

/** Receives every event of a run; a returned promise is awaited before the loop goes on. */
export type AgentEventSink = (event: AgentEvent) => void | Promise<void>;

/** True for an assistant message, whatever custom message kinds the application added. */
export function isAssistantMessage(message: AgentMessage): message is AssistantMessage {
  return (message as { role?: unknown }).role === "assistant";
}

function isFailed(message: AssistantMessage): boolean {
  return message.stopReason === "error" || message.stopReason === "aborted";
}

/** Tracks whether a turn is open, so a failure outside a turn can still be reported inside one. */
class RunEvents {
  inTurn = false;
  constructor(private readonly sink: AgentEventSink) {}

  readonly emit: Emit = async (event) => {
    if (event.type === "turn_start") this.inTurn = true;
    else if (event.type === "turn_end") this.inTurn = false;
    const pending = this.sink(event);
    if (pending) await pending;
  };
}

function failedMessage(
  model: Model,
  stopReason: "error" | "aborted",
  errorMessage: string,
  partial?: AssistantMessage,
): AssistantMessage {
  const base = partial ?? createAssistantMessage(model);
  return { ...base, content: [...base.content], stopReason, errorMessage };
}

async function readQueue(
  read: (() => Promise<AgentMessage[]>) | undefined,
  signal: AbortSignal | undefined,
): Promise<AgentMessage[]> {
  // Once aborted, queued messages stay where they are for the next run.
  if (!read || signal?.aborted) return [];
  return (await read()) ?? [];
}

/** Consumes one model stream, emitting message_start/update; returns the final message. May throw. */
async function consumeStream(
  model: Model,
  context: AgentContext,
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: Emit,
  streamFn: StreamFn,
  progress: { partial?: AssistantMessage; started: boolean },
): Promise<AssistantMessage> {
  let messages = context.messages;
  if (config.transformContext) messages = await config.transformContext(messages, signal);
  const llmContext: Context = {
    systemPrompt: context.systemPrompt,
    messages: await config.convertToLlm(messages),
    tools: context.tools,
  };
  const apiKey = (config.getApiKey ? await config.getApiKey(model.provider) : undefined) ?? config.apiKey;
  const thinkingLevel = config.getThinkingLevel?.() ?? config.thinkingLevel ?? "off";
  const source = await streamFn(model, llmContext, {
    ...config.streamOptions,
    reasoning: thinkingLevel === "off" ? undefined : thinkingLevel,
    apiKey,
    signal,
    sessionId: config.sessionId,
  });

  for await (const event of source) {
    if (event.type === "done") return event.message;
    if (event.type === "error") return event.error;
    // Foreign streams may omit `partial` on some events; keep the last one seen.
    const partial: AssistantMessage | undefined = event.partial ?? progress.partial;
    if (!partial) continue;
    progress.partial = partial;
    if (!progress.started) {
      progress.started = true;
      await emit({ type: "message_start", message: partial });
    }
    if (event.type !== "start")
      await emit({ type: "message_update", message: partial, assistantMessageEvent: event });
  }
  return source.result();
}

/**
 * Calls the model once with the current history and emits the assistant message's events. Reads
 * the model and reasoning level afresh, so changes made during a run apply here. Never throws: a
 * throwing hook or stream function becomes a message with `stopReason: "error"` (or `"aborted"`
 * when the signal fired).
 */
async function streamAssistantResponse(
  context: AgentContext,
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: Emit,
  streamFn: StreamFn,
): Promise<AssistantMessage> {
  const model = config.getModel?.() ?? config.model;
  const progress: { partial?: AssistantMessage; started: boolean } = { started: false };
  let message: AssistantMessage;
  if (signal?.aborted) {
    message = failedMessage(model, "aborted", "The run was aborted before the model was called.");
  } else {
    try {
      const final: AssistantMessage | undefined = await consumeStream(
        model,
        context,
        config,
        signal,
        emit,
        streamFn,
        progress,
      );
      message =
        final && isAssistantMessage(final)
          ? final
          : failedMessage(
              model,
              "error",
              "The model stream ended without a final message.",
              progress.partial,
            );
    } catch (e) {
      const reason = signal?.aborted ? "aborted" : "error";
      message = failedMessage(model, reason, `The model call failed: ${errorMessage(e)}`, progress.partial);
    }
  }
  if (!progress.started) await emit({ type: "message_start", message });
  await emit({ type: "message_end", message });
  context.messages.push(message);
  return message;
}

async function injectMessages(
  messages: AgentMessage[],
  context: AgentContext,
  newMessages: AgentMessage[],
  emit: Emit,
): Promise<void> {
  for (const message of messages) {
    await emit({ type: "message_start", message });
    await emit({ type: "message_end", message });
    context.messages.push(message);
    newMessages.push(message);
  }
}

async function runTurns(
  context: AgentContext,
  newMessages: AgentMessage[],
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: Emit,
  streamFn: StreamFn,
): Promise<void> {
  let firstTurn = true;
  let pending = await readQueue(config.getSteeringMessages, signal);

  while (true) {
    let hasMoreToolCalls = true;
    while (hasMoreToolCalls || pending.length > 0) {
      if (firstTurn) firstTurn = false;
      else await emit({ type: "turn_start" });

      await injectMessages(pending, context, newMessages, emit);
      pending = [];

      const message = await streamAssistantResponse(context, config, signal, emit, streamFn);
      newMessages.push(message);
      if (isFailed(message)) {
        await emit({ type: "turn_end", message, toolResults: [] });
        return;
      }

      hasMoreToolCalls = message.content.some((c) => c.type === "toolCall");
      let toolResults: ToolResultMessage[] = [];
      let steering: AgentMessage[] | undefined;
      let queueError: { error: unknown } | undefined;
      if (hasMoreToolCalls) {
        const batch = await executeToolCalls({
          context,
          assistantMessage: message,
          config,
          signal,
          emit,
          readSteering: () => readQueue(config.getSteeringMessages, signal),
        });
        ({ toolResults, steeringMessages: steering, queueError } = batch);
        context.messages.push(...toolResults);
        newMessages.push(...toolResults);
      }
      await emit({ type: "turn_end", message, toolResults });
      if (queueError) throw queueError.error;

      pending =
        steering && steering.length > 0 ? steering : await readQueue(config.getSteeringMessages, signal);
    }

    const followUps = await readQueue(config.getFollowUpMessages, signal);
    if (followUps.length === 0) return;
    pending = followUps;
  }
}

/** Runs the loop to its end; a failure outside the model call (a queue reader threw) ends it with an error message. */
async function runLoop(
  context: AgentContext,
  newMessages: AgentMessage[],
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  events: RunEvents,
  streamFn: StreamFn,
): Promise<AgentMessage[]> {
  try {
    await runTurns(context, newMessages, config, signal, events.emit, streamFn);
  } catch (e) {
    const model = config.getModel?.() ?? config.model;
    const reason = signal?.aborted ? "aborted" : "error";
    const message = failedMessage(model, reason, `The agent run failed: ${errorMessage(e)}`);
    if (!events.inTurn) await events.emit({ type: "turn_start" });
    await events.emit({ type: "message_start", message });
    await events.emit({ type: "message_end", message });
    context.messages.push(message);
    newMessages.push(message);
    await events.emit({ type: "turn_end", message, toolResults: [] });
  }
  await events.emit({ type: "agent_end", messages: newMessages });
  return newMessages;
}

/**
 * Runs the loop for `prompts` and delivers each event to `sink` as it happens (awaiting a returned
 * promise), resolving with every message the run added. `context` is copied, never mutated. The
 * returned promise never rejects because of the model, tools, hooks or queues: failures end the
 * run with an assistant message whose `stopReason` is `error` or `aborted`, then `agent_end`.
 */
export async function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  sink: AgentEventSink,
  signal?: AbortSignal,
  streamFn: StreamFn = streamSimple,
): Promise<AgentMessage[]> {
  const { current, events } = await beginRun(context, sink);
  const newMessages: AgentMessage[] = [];
  await injectMessages(prompts, current, newMessages, events.emit);
  return runLoop(current, newMessages, config, signal, events, streamFn);
}

/** A run's own copy of `context` and its event channel, once `agent_start` and `turn_start` are delivered. */
async function beginRun(
  context: AgentContext,
  sink: AgentEventSink,
): Promise<{ current: AgentContext; events: RunEvents }> {
  const current: AgentContext = { ...context, messages: [...context.messages] };
  const events = new RunEvents(sink);
  await events.emit({ type: "agent_start" });
  await events.emit({ type: "turn_start" });
  return { current, events };
}

/**
 * Throws when `context` cannot be continued: it is empty, or ends with a finished assistant reply
 * (the model would have nothing to answer). An assistant message that failed (`error`, `aborted`)
 * may be continued: that retries the call.
 */
export function assertContinuable(context: AgentContext): void {
  const last = context.messages[context.messages.length - 1];
  if (!last)
    throw new Error("Cannot continue: the context has no messages. Start a run with a prompt instead.");
  if (isAssistantMessage(last) && !isFailed(last)) {
    throw new Error(
      "Cannot continue: the last message is a finished assistant reply, so the model has nothing to answer. " +
        "Add a user message (start a run with a prompt) instead.",
    );
  }
}

/** Like `runAgentLoop`, without new prompts: the model answers the context as it is. Throws as `assertContinuable`. */
export async function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  sink: AgentEventSink,
  signal?: AbortSignal,
  streamFn: StreamFn = streamSimple,
): Promise<AgentMessage[]> {
  assertContinuable(context);
  const { current, events } = await beginRun(context, sink);
  return runLoop(current, [], config, signal, events, streamFn);
}

function createAgentEventStream(): EventStream<AgentEvent, AgentMessage[]> {
  return new EventStream<AgentEvent, AgentMessage[]>(
    (event) => event.type === "agent_end",
    (event) => (event.type === "agent_end" ? event.messages : []),
  );
}

function toStream(
  run: (sink: AgentEventSink) => Promise<AgentMessage[]>,
): EventStream<AgentEvent, AgentMessage[]> {
  const stream = createAgentEventStream();
  run((event) => stream.push(event)).then(
    (messages) => stream.end(messages),
    // Unreachable by contract (the loop reports failures as events); ends the stream so no consumer hangs.
    () => stream.end([]),
  );
  return stream;
}

/**
 * Starts a run for `prompts` and returns its events as a stream whose `result()` is every message
 * the run added (the same list as `agent_end`). The stream always ends with `agent_end`; model,
 * tool, hook and queue failures are carried as messages, never thrown.
 */
export function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]> {
  return toStream((sink) => runAgentLoop(prompts, context, config, sink, signal, streamFn));
}

/**
 * Continues from `context` without new prompts (after a tool result, a queued message or a failed
 * reply). Throws synchronously when the context cannot be continued (see `assertContinuable`).
 */
export function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]> {
  assertContinuable(context);
  return toStream((sink) => runAgentLoopContinue(context, config, sink, signal, streamFn));
}
