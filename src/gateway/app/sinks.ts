/**
 * Where runs are shown: one `RunRenderer` per run (or notice) on the adapter of the thread's
 * platform, all sharing one rate limiter (Redis-backed when several processes post), with the run's
 * logger and the run and outcome metrics taken from the agent events on the way.
 */

import { finishOwedRender } from "../../adapters/render/owed.js";
import { RunRenderer } from "../../adapters/render/run-renderer.js";
import type { ChannelAdapter, MessageRef, Platform, RateLimiter } from "../../adapters/types.js";
import { systemClock } from "../../agent/clock.js";
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import type { OwedRenderFinisher, RunSink, RunSinkFactory } from "../../queue/types.js";
import type { RunOutcomeLabel, SwitchboardMetrics } from "../http/metrics.js";
import { type Logger, runLogger, threadLogger } from "../log.js";
import { platformOf } from "./platforms.js";

export interface SinkFactoryOptions {
  adapterOf(platform: Platform): ChannelAdapter | undefined;
  /** The platforms there are, by name (the config's `channels`); default the built-in ones. */
  platforms?: Readonly<Record<string, unknown>>;
  limiter: RateLimiter;
  metrics: SwitchboardMetrics;
  logger: Logger;
  /** The chat message a user message of a run came from (see `ReplyTargets`). */
  replyTargetOf?: (message: AgentMessage) => MessageRef | undefined;
  /** `models.waitNoticeMs`: silence from the model after which the answer says it still waits. */
  waitNoticeMs?: number;
  /** `schedules.quietMarker`: a reply that is exactly this posts nothing. */
  quietMarker?: string;
}

/** The runtime's `sinks`: renders each run into its thread and counts it. */
export function createSinkFactory(o: SinkFactoryOptions): RunSinkFactory {
  return (threadKey, runId, journal) => {
    const log = runLogger(threadLogger(o.logger, { threadKey }), runId);
    const platform = platformOf(threadKey, o.platforms);
    const adapter = platform ? o.adapterOf(platform) : undefined;
    if (!platform || !adapter) {
      log.error({ platform }, "no enabled channel for this thread; its output is dropped");
      return droppingSink();
    }
    const renderer = new RunRenderer({
      adapter,
      threadKey,
      limiter: o.limiter,
      logger: log,
      ...(o.replyTargetOf ? { replyTargetOf: o.replyTargetOf } : {}),
      ...(o.waitNoticeMs ? { waitNoticeMs: o.waitNoticeMs } : {}),
      ...(o.quietMarker ? { quietMarker: o.quietMarker } : {}),
      ...(journal ? { log: journal } : {}),
    });
    if (runId.startsWith("notice:")) return renderer;
    return meteredSink(renderer, platform, o.metrics, log);
  };
}

/**
 * The runtime's `finishOwed`: finishes what a dead worker's run owed the thread's chat on the
 * adapter of its platform, within the same shared rate limits. A thread without an enabled channel
 * owes nothing that could be shown (true: the record is dropped).
 */
export function createOwedFinisher(o: SinkFactoryOptions): OwedRenderFinisher {
  return async (threadKey, snapshot, journal, saved, posted) => {
    const log = threadLogger(o.logger, { threadKey });
    const platform = platformOf(threadKey, o.platforms);
    const adapter = platform ? o.adapterOf(platform) : undefined;
    if (!adapter) {
      log.warn({ platform }, "no enabled channel for this thread; what an earlier run owed it is dropped");
      return true;
    }
    const done = await finishOwedRender(
      { adapter, threadKey, clock: systemClock, limiter: o.limiter, logger: log },
      snapshot,
      journal,
      saved,
      posted,
    );
    if (done) log.info("finished what an earlier run owed the chat");
    return done;
  };
}

function droppingSink(): RunSink {
  return { onEvent() {}, onNotice() {}, close() {} };
}

/** `renderer` plus run metrics: started now, finished at `close` with the outcome the events showed. */
function meteredSink(
  renderer: RunRenderer,
  platform: Platform,
  metrics: SwitchboardMetrics,
  log: Logger,
): RunSink {
  const startedAt = Date.now();
  let outcome: RunOutcomeLabel = "completed";
  metrics.runStarted(platform);
  log.debug("run started");
  return {
    onEvent(event: AgentEvent) {
      // The tokens are counted where every model call passes (llm-calls.ts), not here.
      if (event.type === "message_end" && event.message.role === "assistant") {
        const m = event.message;
        if (m.stopReason === "error") outcome = "error";
        else if (m.stopReason === "aborted") outcome = "aborted";
      }
      renderer.onEvent(event);
    },
    onNotice: (text) => renderer.onNotice(text),
    async close() {
      const ms = Date.now() - startedAt;
      metrics.runFinished(platform, outcome, ms);
      log.info({ outcome, ms }, "run finished");
      await renderer.close();
    },
  };
}
