/**
 * The inbox items that are not chat messages: `/new` (a fresh session, with the extensions' say)
 * and `/compact [instructions]` (a compaction now, whatever the threshold). The holder takes them
 * in order with the messages around them and hands them here between runs.
 */
import type { ControlState, ThreadState } from "../state/types.js";
import type { SessionStore } from "../store/types.js";
import type { InboxItem } from "../types.js";
import type { CompactionAttempt, ThreadCompactor } from "./compaction-step.js";
import { emitSessionEvent } from "./session-events.js";
import type { ThreadSession } from "./thread-session.js";

/** What the commands need from their holder. */
export interface SessionCommandsHost {
  threadKey: string;
  state: ThreadState;
  store: SessionStore;
  session: ThreadSession;
  compactor: ThreadCompactor;
  onError: (error: unknown, context: string) => void;
  /** Removes settled items from the inflight list; false (and the holder marked lost) when the lease is gone. */
  settleItems(seqs: readonly number[]): Promise<boolean>;
  /** True once the tenure has an outcome (lost, failed): nothing more may be settled. */
  ended(): boolean;
  notice(text: string): Promise<void>;
  /** Records the agent's context estimate for `status`. */
  recordContextTokens(): void;
}

export class SessionCommands {
  /** A `/compact` in progress: a stop sent after it started cancels its summary request. */
  private manual: { controller: AbortController; stopsAtStart: number } | undefined;

  constructor(private readonly h: SessionCommandsHost) {}

  /** Handles a taken `newSession` or `compact` item (with the items taken along with it). */
  run(items: InboxItem[]): Promise<void> {
    return items[0]?.kind === "compact" ? this.compact(items) : this.newSession(items);
  }

  /** The durable control state changed: a stop cancels a `/compact` that started before it. */
  onControl(c: ControlState): void {
    const manual = this.manual;
    if (manual && c.stops > manual.stopsAtStart) manual.controller.abort();
  }

  /** `/new`: asks the extensions, starts a fresh session (fenced) and builds its agent. */
  private async newSession(items: InboxItem[]): Promise<void> {
    const { session } = this.h;
    await session.flush();
    const seqs = items.map((i) => i.seq);
    const previous = session.entry;
    const verdict = await emitSessionEvent(
      previous?.onSessionEvent,
      { type: "session_before_switch", reason: "new" },
      this.h.onError,
    );
    if (verdict?.cancel) {
      if (!(await this.h.settleItems(seqs))) return;
      await this.h.notice(`Kept the current session: ${verdict.reason ?? "an extension cancelled /new"}.`);
      return;
    }
    const header = await this.h.store.newSession(this.h.threadKey, { fence: session.fence() });
    session.forgetAgent();
    if (!(await this.h.settleItems(seqs))) return;
    await session.ensureAgent(previous ? { switchedFrom: previous.sessionId } : {});
    await this.h.notice(`Started a new session (${header.id.slice(0, 8)}).`);
  }

  /** `/compact [instructions]`: compacts now, whatever the threshold, and says what it did. */
  private async compact(items: InboxItem[]): Promise<void> {
    const { session, compactor } = this.h;
    const item = items[0] as InboxItem;
    await session.ensureAgent();
    const c = await this.h.state.readControl(this.h.threadKey);
    const manual = { controller: new AbortController(), stopsAtStart: c.stops };
    this.manual = manual;
    let r: CompactionAttempt;
    try {
      r = await compactor.compact("manual", {
        ...(item.instructions !== undefined ? { instructions: item.instructions } : {}),
        signal: manual.controller.signal,
      });
    } finally {
      this.manual = undefined;
    }
    if (r.compacted) compactor.settle();
    await session.flush();
    if (this.h.ended()) return;
    if (!(await this.h.settleItems(items.map((i) => i.seq)))) return;
    this.h.recordContextTokens();
    await this.h.notice(
      r.compacted
        ? `Compacted the conversation: about ${tokenCount(r.tokensBefore)} → ${tokenCount(r.tokensAfter)} tokens.`
        : `Nothing compacted: ${r.reason ?? "there is not enough history yet"}.`,
    );
  }
}

function tokenCount(n: number | undefined): string {
  return (n ?? 0).toLocaleString("en-US");
}
