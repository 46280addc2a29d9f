/**
 * Compaction in the holder: before every LLM call (the agent's `transformContext`), after a reply
 * that overflowed the context window (compact once, then the holder retries), and on demand
 * (`/compact`). The session functions of src/agent/session do the planning and the summary; this
 * file does the I/O: it reads the holder's branch, writes the compaction entry through the
 * holder's fenced, ordered writer, and gives the running loop the shortened history.
 */
import { complete } from "../../agent/llm/stream.js";
import {
  branchBeforeFailure,
  type CompactionSettings,
  type CompactOptions,
  type CompleteFn,
  compact,
  compactionEntryInput,
  DEFAULT_COMPACTION_SETTINGS,
  estimateContextTokens,
  prepareCompaction,
  shouldCompact,
} from "../../agent/session/compaction/index.js";
import { buildSessionContext } from "../../agent/session/context.js";
import type { AgentMessage, StreamFn } from "../../agent/types.js";
import type { CompactOutcome } from "../../extensions/types.js";
import { applyView, withoutFailedTail } from "./compaction-view.js";
import type { CompactionConfig, HolderEnv } from "./holder-env.js";
import { emitSessionEvent } from "./session-events.js";
import type { Tenure } from "./tenure.js";
import type { ThreadSession } from "./thread-session.js";

/** Why a compaction is attempted. */
export type CompactionTrigger = "threshold" | "overflow" | "manual";

export class ThreadCompactor {
  private busy: Promise<unknown> = Promise.resolve();
  /** The last history message when an automatic compaction last failed: no new try before it grows. */
  private failedAt: AgentMessage | undefined;

  constructor(
    private readonly tenure: Tenure,
    private readonly session: ThreadSession,
    private readonly env: HolderEnv,
  ) {}

  /** Undefined: no automatic compaction (a manual one uses the defaults). */
  private get config(): CompactionConfig | undefined {
    return this.env.compaction;
  }

  private settings(): CompactionSettings {
    return this.config?.settings ?? DEFAULT_COMPACTION_SETTINGS;
  }

  /** No automatic compaction starts while the tenure ends or hands over, or its run was stopped. */
  private mayCompact(): boolean {
    return this.tenure.active && !this.tenure.work?.aborted;
  }

  /**
   * The per-call hook: the loop's `messages` as the model should see them. Applies the run's
   * compaction, and compacts first when the result is over the threshold. Never throws.
   */
  async beforeCall(messages: AgentMessage[], signal?: AbortSignal): Promise<AgentMessage[]> {
    const entry = this.session.entry;
    if (!entry) return messages;
    const view = applyView(messages, entry.view);
    if (!this.config || signal?.aborted || !this.mayCompact()) return view;
    const tokens = estimateContextTokens(view).tokens;
    if (!shouldCompact(tokens, entry.agent.state.model.contextWindow, this.settings())) return view;
    const last = messages[messages.length - 1];
    if (last !== undefined && last === this.failedAt) return view;
    const r = await this.compact("threshold", { history: messages, signal });
    if (!r.compacted) {
      this.failedAt = last;
      return view;
    }
    return applyView(messages, this.session.entry?.view);
  }

  /**
   * Compacts the holder's branch now (one at a time). `history` is the agent's history the view is
   * made for (default: the agent's state); with `overflow`, the trailing failed replies are left
   * off the branch (the compaction attaches before them). Never throws; failures are reported
   * through `onError` and in the result.
   */
  compact(
    trigger: CompactionTrigger,
    o: { history?: AgentMessage[]; instructions?: string; signal?: AbortSignal } = {},
  ): Promise<CompactOutcome> {
    const job = this.busy.then(() => this.run(trigger, o));
    this.busy = job;
    return job;
  }

  /**
   * After a run (or an overflow compaction): the agent's own history becomes the compacted one, so
   * the next run starts small. `dropFailedTail` also drops trailing failed replies (an overflow
   * compaction left them off the branch).
   */
  settle(o: { dropFailedTail?: boolean } = {}): void {
    const entry = this.session.entry;
    if (!entry?.view) return;
    const messages = entry.agent.state.messages;
    entry.agent.replaceMessages(
      applyView(o.dropFailedTail ? withoutFailedTail(messages) : messages, entry.view),
    );
    entry.view = undefined;
  }

  /** Whether `afterRun` would compact now (the agent's history is over the threshold). No I/O. */
  wantsAfterRun(): boolean {
    const entry = this.session.entry;
    if (!entry || !this.config || !this.mayCompact()) return false;
    const messages = entry.agent.state.messages;
    const tokens = estimateContextTokens(messages).tokens;
    if (!shouldCompact(tokens, entry.agent.state.model.contextWindow, this.settings())) return false;
    const last = messages[messages.length - 1];
    return !(last !== undefined && last === this.failedAt);
  }

  /** The after-run check: compacts when the agent's history is over the threshold. Never throws. */
  async afterRun(): Promise<void> {
    if (!this.wantsAfterRun()) return;
    const last = this.session.entry?.agent.state.messages.at(-1);
    const r = await this.compact("threshold");
    if (r.compacted) this.settle();
    else this.failedAt = last;
  }

  private async run(
    trigger: CompactionTrigger,
    o: { history?: AgentMessage[]; instructions?: string; signal?: AbortSignal },
  ): Promise<CompactOutcome> {
    const { session } = this;
    const threadKey = this.tenure.threadKey;
    try {
      await session.flush();
      const entry = session.entry;
      if (!entry || !session.writing) return { compacted: false, reason: "the thread is being handed over" };
      const branch = await this.env.store.readBranch(threadKey, entry.sessionId, entry.leafId ?? undefined);
      if (!branch) return { compacted: false, reason: "the thread has no session yet" };
      let path = branch.entries;
      let parentId = entry.leafId;
      let history = o.history ?? entry.agent.state.messages.slice();
      if (trigger === "overflow") {
        ({ entries: path, leafId: parentId } = branchBeforeFailure(path));
        history = withoutFailedTail(history);
      }
      const settings = { ...this.settings(), enabled: true };
      const preparation = prepareCompaction(path, settings);
      if (!preparation) return { compacted: false, reason: "there is not enough history to compact yet" };
      const verdict = await emitSessionEvent(
        entry.onSessionEvent,
        {
          type: "session_before_compact",
          ...(o.instructions !== undefined ? { instructions: o.instructions } : {}),
        },
        this.env.onError,
      );
      if (verdict?.cancel)
        return { compacted: false, reason: verdict.reason ?? "an extension cancelled the compaction" };

      const config = this.config ?? {};
      const model = entry.agent.state.model;
      const options: CompactOptions = { ...((await config.options?.(model)) ?? {}) };
      if (o.instructions !== undefined) options.customInstructions = o.instructions;
      if (o.signal) options.signal = o.signal;
      const outcome = await compact(
        preparation,
        model,
        options,
        config.complete ?? completeLike(entry.agent.streamFn),
      );
      const u = outcome.usage;
      await this.env.store
        .addUsage(threadKey, {
          input: u.input,
          output: u.output,
          cacheRead: u.cacheRead,
          cacheWrite: u.cacheWrite,
          cost: u.cost.total,
        })
        .catch((e: unknown) => this.env.onError(e, `adding the usage of a compaction of ${threadKey}`));
      if (!outcome.ok) {
        if (outcome.aborted) return { compacted: false, reason: "it was stopped" };
        this.env.onError(
          new Error(`The summary request failed: ${outcome.errorMessage}`),
          `compacting ${threadKey}`,
        );
        return { compacted: false, reason: `the summary request failed (${outcome.errorMessage})` };
      }
      const stored = await session.write(compactionEntryInput(outcome.compaction), { parentId });
      if (!stored) return { compacted: false, reason: "the thread's lease was lost" };
      const rebuilt = buildSessionContext([...path, stored], stored.id).messages;
      const anchor = history[history.length - 1];
      if (anchor) entry.view = { prefix: rebuilt, anchor };
      this.failedAt = undefined;
      const tokensAfter = estimateContextTokens(rebuilt).tokens;
      await emitSessionEvent(
        entry.onSessionEvent,
        { type: "session_compact", tokensBefore: preparation.tokensBefore, tokensAfter },
        this.env.onError,
      );
      return { compacted: true, tokensBefore: preparation.tokensBefore, tokensAfter };
    } catch (e) {
      this.env.onError(e, `compacting ${threadKey}`);
      return { compacted: false, reason: "the compaction failed (see the logs)" };
    }
  }
}

/**
 * The summary request made the way the thread's agent calls its model (its stall timeout, metrics
 * and budget), else the provider registry's `complete`.
 */
function completeLike(streamFn: StreamFn | undefined): CompleteFn {
  if (!streamFn) return complete;
  return async (model, context, options) => (await streamFn(model, context, options)).result();
}
