/**
 * The one way this process calls a model: a thread's agent, compaction's summary and sub-agents all
 * go through `llmCalls`, so each request gets the config's stall timeout (`models.stallTimeoutMs`)
 * and each reply's tokens and cost are counted in `switchboard_llm_tokens_total` and
 * `switchboard_llm_cost_usd_total`, whoever asked (a run's answer used to be the only one counted).
 * With budgets on, `streamFor` puts each call of a thread behind the budget gate (reserve before,
 * settle after; docs/budgets.md): the thread's agent, its compaction and its sub-agents all call
 * through it.
 */
import { streamSimple } from "../../agent/llm/stream.js";
import type {
  AssistantMessage,
  AssistantMessageEventSource,
  Context,
  Model,
  SimpleStreamOptions,
} from "../../agent/llm/types.js";
import type { StreamFn } from "../../agent/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import type { Logger } from "../log.js";
import type { BudgetCaller, BudgetGate } from "./budgets/gate.js";

export interface LlmCalls {
  /** `streamSimple` with the stall timeout and the usage counted (the agents' `streamFn`). */
  stream(model: Model, context: Context, options?: SimpleStreamOptions): AssistantMessageEventSource;
  /** `stream` run to its end (compaction's summary request). */
  complete(model: Model, context: Context, options?: SimpleStreamOptions): Promise<AssistantMessage>;
  /**
   * `stream` for the calls of one thread: behind the budget gate when budgets are on, with
   * `caller` read at each call (who the run answers changes between runs).
   */
  streamFor(caller: () => BudgetCaller): StreamFn;
}

export interface LlmCallsOptions {
  /** `models.stallTimeoutMs`: used when a caller sets no `idleTimeoutMs` of its own. */
  stallTimeoutMs: number;
  metrics: SwitchboardMetrics;
  logger: Logger;
  /** Absent: budgets are off and calls are not counted against any cap. */
  budgets?: BudgetGate;
}

/** The process's model calls (see the file header). */
export function llmCalls(o: LlmCallsOptions): LlmCalls {
  const stream: LlmCalls["stream"] = (model, context, options) => {
    const source = streamSimple(model, context, {
      ...options,
      idleTimeoutMs: options?.idleTimeoutMs ?? o.stallTimeoutMs,
    });
    source.result().then(
      (m) => o.metrics.llmUsage(m.provider, m.model, m.usage),
      // A stream's result never rejects (the provider contract); this would be a provider's bug.
      (err: unknown) =>
        o.logger.error({ err, model: `${model.provider}/${model.id}` }, "model stream failed"),
    );
    return source;
  };
  return {
    stream,
    complete: (model, context, options) => stream(model, context, options).result(),
    streamFor: (caller) => (o.budgets ? o.budgets.wrap(stream, caller) : stream),
  };
}
