/**
 * Runs the tool calls of one assistant message for the agent loop: validation, hooks, execution,
 * events and tool-result messages. Every failure becomes an error tool result; nothing here throws.
 */
import { errorMessage } from "./errors.js";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "./llm/types.js";
import { validateToolArguments } from "./tool-validation.js";
import type {
  AgentContext,
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  AgentToolResult,
  BeforeToolCallContext,
} from "./types.js";

/** Result text of a tool call skipped because a steering message arrived. */
export const SKIPPED_FOR_STEERING_TEXT = "Skipped due to queued user message.";
/** Result text of a tool call not started because the run was aborted. */
export const SKIPPED_FOR_ABORT_TEXT = "Skipped: the run was aborted.";
const SKIPPED_FOR_QUEUE_FAILURE_TEXT = "Skipped: reading queued messages failed.";

export type Emit = (event: AgentEvent) => Promise<void>;

interface ToolOutcome {
  result: AgentToolResult;
  isError: boolean;
}

export interface ToolBatch {
  context: AgentContext;
  assistantMessage: AssistantMessage;
  config: AgentLoopConfig;
  signal: AbortSignal | undefined;
  emit: Emit;
  /** Reads steering messages; returns [] once aborted. May throw. */
  readSteering: () => Promise<AgentMessage[]>;
}

export interface ToolBatchResult {
  /** One result per tool call, in the assistant message's order. */
  toolResults: ToolResultMessage[];
  /** Steering messages read during the batch; they go before the next LLM call. */
  steeringMessages?: AgentMessage[];
  /** Set when reading the steering queue threw; the loop ends the run with it after the turn. */
  queueError?: { error: unknown };
}

function errorOutcome(text: string): ToolOutcome {
  return { result: { content: [{ type: "text", text }], details: {} }, isError: true };
}

function isToolResult(value: unknown): value is AgentToolResult {
  return typeof value === "object" && value !== null && Array.isArray((value as AgentToolResult).content);
}

function startEvent(toolCall: ToolCall): AgentEvent {
  return {
    type: "tool_execution_start",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    args: toolCall.arguments,
  };
}

/** A call ready to run: its tool exists, its arguments are valid and `beforeToolCall` let it through. */
interface PreparedCall {
  toolCall: ToolCall;
  tool: AgentTool;
  args: Record<string, unknown>;
  hookContext: BeforeToolCallContext;
}

/** Finds the tool, validates the arguments and asks `beforeToolCall`; an outcome means the call ends here. */
async function prepareToolCall(
  batch: ToolBatch,
  toolCall: ToolCall,
): Promise<{ prepared: PreparedCall } | { outcome: ToolOutcome }> {
  const { context, config, signal } = batch;
  const tool = context.tools?.find((t) => t.name === toolCall.name);
  if (!tool) {
    const names = context.tools?.map((t) => t.name).join(", ") || "none";
    return { outcome: errorOutcome(`Tool "${toolCall.name}" not found. Available tools: ${names}.`) };
  }
  let args: Record<string, unknown>;
  try {
    args = validateToolArguments(tool, toolCall);
  } catch (e) {
    return { outcome: errorOutcome(errorMessage(e)) };
  }
  const hookContext: BeforeToolCallContext = {
    assistantMessage: batch.assistantMessage,
    toolCall,
    tool,
    args,
    context,
  };
  if (config.beforeToolCall) {
    try {
      const decision = await config.beforeToolCall(hookContext, signal);
      if (decision?.block)
        return { outcome: errorOutcome(decision.reason ?? `Tool call "${toolCall.name}" was blocked.`) };
    } catch (e) {
      return { outcome: errorOutcome(`Tool call "${toolCall.name}" was blocked: ${errorMessage(e)}`) };
    }
  }
  return { prepared: { toolCall, tool, args, hookContext } };
}

/** Runs a prepared call's `execute`, then `afterToolCall`. */
async function executePreparedCall(batch: ToolBatch, call: PreparedCall): Promise<ToolOutcome> {
  const { config, signal, emit } = batch;
  const { toolCall, tool, args, hookContext } = call;
  let outcome: ToolOutcome;
  let finished = false;
  try {
    const result: unknown = await tool.execute(toolCall.id, args, signal, (partialResult) => {
      // A tool may call onUpdate after it returned; such late updates would follow the end event.
      if (finished) return;
      void emit({
        type: "tool_execution_update",
        toolCallId: toolCall.id,
        toolName: toolCall.name,
        args: toolCall.arguments,
        partialResult,
      });
    });
    outcome = isToolResult(result)
      ? { result, isError: false }
      : errorOutcome(`Tool "${tool.name}" returned no valid result (expected { content, details }).`);
  } catch (e) {
    outcome = errorOutcome(errorMessage(e));
  } finally {
    finished = true;
  }

  if (config.afterToolCall) {
    try {
      const patch = await config.afterToolCall({ ...hookContext, ...outcome }, signal);
      if (patch) {
        outcome = {
          result: {
            content: patch.content ?? outcome.result.content,
            details: patch.details !== undefined ? patch.details : outcome.result.details,
          },
          isError: patch.isError ?? outcome.isError,
        };
      }
    } catch (e) {
      outcome = errorOutcome(`afterToolCall failed for "${toolCall.name}": ${errorMessage(e)}`);
    }
  }
  return outcome;
}

async function runToolCall(batch: ToolBatch, toolCall: ToolCall): Promise<ToolOutcome> {
  const step = await prepareToolCall(batch, toolCall);
  return "outcome" in step ? step.outcome : executePreparedCall(batch, step.prepared);
}

async function emitEnd(emit: Emit, toolCall: ToolCall, outcome: ToolOutcome): Promise<void> {
  await emit({
    type: "tool_execution_end",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    args: toolCall.arguments,
    result: outcome.result,
    isError: outcome.isError,
  });
}

async function emitResultMessage(
  emit: Emit,
  toolCall: ToolCall,
  outcome: ToolOutcome,
): Promise<ToolResultMessage> {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    content: outcome.result.content,
    details: outcome.result.details,
    isError: outcome.isError,
    timestamp: Date.now(),
  };
  await emit({ type: "message_start", message });
  await emit({ type: "message_end", message });
  return message;
}

/** Gives each call the full start/end/message sequence with an error result, so no call is left without a result. */
async function skipAll(emit: Emit, toolCalls: ToolCall[], text: string): Promise<ToolResultMessage[]> {
  const results: ToolResultMessage[] = [];
  for (const toolCall of toolCalls) {
    await emit(startEvent(toolCall));
    const outcome = errorOutcome(text);
    await emitEnd(emit, toolCall, outcome);
    results.push(await emitResultMessage(emit, toolCall, outcome));
  }
  return results;
}

type SteeringPoll = { messages: AgentMessage[] } | { error: unknown };

async function pollSteering(batch: ToolBatch): Promise<SteeringPoll> {
  try {
    return { messages: await batch.readSteering() };
  } catch (error) {
    return { error };
  }
}

async function executeSequentially(batch: ToolBatch, toolCalls: ToolCall[]): Promise<ToolBatchResult> {
  const { emit, signal } = batch;
  const toolResults: ToolResultMessage[] = [];
  for (let i = 0; i < toolCalls.length; i++) {
    const toolCall = toolCalls[i] as ToolCall;
    if (signal?.aborted) {
      toolResults.push(...(await skipAll(emit, toolCalls.slice(i), SKIPPED_FOR_ABORT_TEXT)));
      break;
    }
    await emit(startEvent(toolCall));
    const outcome = await runToolCall(batch, toolCall);
    await emitEnd(emit, toolCall, outcome);
    toolResults.push(await emitResultMessage(emit, toolCall, outcome));

    const poll = await pollSteering(batch);
    const rest = toolCalls.slice(i + 1);
    if ("error" in poll) {
      toolResults.push(...(await skipAll(emit, rest, SKIPPED_FOR_QUEUE_FAILURE_TEXT)));
      return { toolResults, queueError: { error: poll.error } };
    }
    if (poll.messages.length > 0) {
      toolResults.push(...(await skipAll(emit, rest, SKIPPED_FOR_STEERING_TEXT)));
      return { toolResults, steeringMessages: poll.messages };
    }
  }
  return { toolResults };
}

/**
 * Parallel mode. Every start event goes first; then every call is prepared (tool lookup,
 * validation, `beforeToolCall`, so approvals are asked at once); then, before any `execute`
 * starts, the steering queue is read: a message that arrived after the assistant message skips
 * every prepared call with the steering text (as pi's engine does), and calls that already ended
 * in preparation keep their error. Otherwise the prepared calls run concurrently and steering is
 * read again after the batch.
 */
async function executeInParallel(batch: ToolBatch, toolCalls: ToolCall[]): Promise<ToolBatchResult> {
  const { emit, signal } = batch;
  if (signal?.aborted) return { toolResults: await skipAll(emit, toolCalls, SKIPPED_FOR_ABORT_TEXT) };
  for (const toolCall of toolCalls) await emit(startEvent(toolCall));
  const steps = await Promise.all(
    toolCalls.map(async (toolCall) => {
      const step = await prepareToolCall(batch, toolCall);
      if ("outcome" in step) await emitEnd(emit, toolCall, step.outcome);
      return step;
    }),
  );
  const prepared = steps.filter((s): s is { prepared: PreparedCall } => "prepared" in s).length;

  let skipText: string | undefined;
  let early: SteeringPoll | undefined;
  if (prepared > 0 && signal?.aborted) skipText = SKIPPED_FOR_ABORT_TEXT;
  else if (prepared > 0) {
    early = await pollSteering(batch);
    if ("error" in early) skipText = SKIPPED_FOR_QUEUE_FAILURE_TEXT;
    else if (early.messages.length > 0) skipText = SKIPPED_FOR_STEERING_TEXT;
  }

  const outcomes = await Promise.all(
    steps.map(async (step, i) => {
      if ("outcome" in step) return step.outcome;
      const toolCall = toolCalls[i] as ToolCall;
      const outcome =
        skipText !== undefined ? errorOutcome(skipText) : await executePreparedCall(batch, step.prepared);
      await emitEnd(emit, toolCall, outcome);
      return outcome;
    }),
  );
  // Result messages follow the assistant's order, whatever order the tools finished in.
  const toolResults: ToolResultMessage[] = [];
  for (const [i, toolCall] of toolCalls.entries()) {
    toolResults.push(await emitResultMessage(emit, toolCall, outcomes[i] as ToolOutcome));
  }
  if (early && "error" in early) return { toolResults, queueError: { error: early.error } };
  if (early && early.messages.length > 0) return { toolResults, steeringMessages: early.messages };
  if (skipText !== undefined) return { toolResults };
  const poll = await pollSteering(batch);
  if ("error" in poll) return { toolResults, queueError: { error: poll.error } };
  return poll.messages.length > 0 ? { toolResults, steeringMessages: poll.messages } : { toolResults };
}

/**
 * Runs every tool call of `batch.assistantMessage` in the configured mode and returns one result
 * per call in the assistant's order. Sequential mode reads steering after each call and skips the
 * remaining calls when it is non-empty; parallel mode emits every start event first, prepares
 * every call, reads steering before any call runs (a queued message skips them all), runs them
 * concurrently and reads steering again after the batch. Calls not started before an abort get
 * an error result. Never throws.
 */
export async function executeToolCalls(batch: ToolBatch): Promise<ToolBatchResult> {
  const toolCalls = batch.assistantMessage.content.filter((c): c is ToolCall => c.type === "toolCall");
  if (batch.config.toolExecution === "parallel") return executeInParallel(batch, toolCalls);
  return executeSequentially(batch, toolCalls);
}
