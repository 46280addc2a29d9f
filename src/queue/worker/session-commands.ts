/**
 * The inbox items that are not chat messages: `/new` (a fresh session, with the extensions' say)
 * and `/compact [instructions]` (a compaction now, whatever the threshold). The holder takes them
 * in order with the messages around them and hands them here between runs; each is the tenure's
 * work from `begin` to `settled`, like a run.
 */

import type { CompactOutcome } from "../../extensions/types.js";
import type { ControlState } from "../state/types.js";
import type { InboxItem, RenderLog } from "../types.js";
import type { ThreadCompactor } from "./compaction-step.js";
import type { HolderEnv } from "./holder-env.js";
import { postNotice } from "./notices.js";
import { renderLog } from "./render-log.js";
import { emitSessionEvent } from "./session-events.js";
import type { Tenure, TenureWork } from "./tenure.js";
import type { ThreadSession } from "./thread-session.js";

/** `/new` runs to its end once started (it only writes a new session header). */
const NEW_SESSION: TenureWork = { aborted: false, onControl: () => {} };

/** A `/compact` in progress: a stop sent after it started cancels its summary request. */
class ManualCompaction implements TenureWork {
  private readonly controller = new AbortController();

  constructor(private readonly stopsAtStart: number) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  onControl(c: ControlState): void {
    if (c.stops > this.stopsAtStart) this.controller.abort();
  }
}

export class SessionCommands {
  constructor(
    private readonly tenure: Tenure,
    private readonly session: ThreadSession,
    private readonly compactor: ThreadCompactor,
    private readonly env: HolderEnv,
  ) {}

  /** The render-journal log of a notice of this tenure. */
  private readonly logFor = (id: string): RenderLog | undefined =>
    renderLog(this.env, this.tenure, this.session, id);

  private get threadKey(): string {
    return this.tenure.threadKey;
  }

  /** Handles a taken `newSession` or `compact` item (with the items taken along with it). */
  run(items: InboxItem[]): Promise<void> {
    return items[0]?.kind === "compact" ? this.compact(items) : this.newSession(items);
  }

  /** `leased → running`, or (handing over) the items go back to the inbox for the next holder. */
  private async begin(work: TenureWork): Promise<boolean> {
    if (this.tenure.mayBegin) {
      this.tenure.begin(work);
      return true;
    }
    if (!this.tenure.ended) await this.tenure.settle([], false);
    return false;
  }

  /** `running → settling → leased`: removes the command's items; false when the tenure cannot go on. */
  private async finish(items: InboxItem[]): Promise<boolean> {
    this.tenure.endWork();
    if (this.tenure.ended) return false;
    if (
      !(await this.tenure.settle(
        items.map((i) => i.seq),
        true,
      ))
    )
      return false;
    this.tenure.settled();
    return true;
  }

  /** `/new`: asks the extensions, starts a fresh session (fenced) and builds its agent. */
  private async newSession(items: InboxItem[]): Promise<void> {
    const { session } = this;
    if (!(await this.begin(NEW_SESSION))) return;
    await session.flush();
    const previous = session.entry;
    const verdict = await emitSessionEvent(
      previous?.onSessionEvent,
      { type: "session_before_switch", reason: "new" },
      this.env.onError,
    );
    if (verdict?.cancel) {
      if (!(await this.finish(items))) return;
      await postNotice(
        this.env,
        this.threadKey,
        `Kept the current session: ${verdict.reason ?? "an extension cancelled /new"}.`,
        this.logFor,
      );
      return;
    }
    const header = await this.env.store.newSession(this.threadKey, { fence: session.fence() });
    session.forgetAgent();
    session.forgetMeta();
    if (!(await this.finish(items))) return;
    await session.ensureAgent(previous ? { switchedFrom: previous.sessionId } : {});
    await postNotice(
      this.env,
      this.threadKey,
      `Started a new session (${header.id.slice(0, 8)}).`,
      this.logFor,
    );
  }

  /** `/compact [instructions]`: compacts now, whatever the threshold, and says what it did. */
  private async compact(items: InboxItem[]): Promise<void> {
    const { session, compactor } = this;
    const item = items[0] as InboxItem;
    await session.ensureAgent();
    const c = await this.env.state.readControl(this.threadKey);
    const work = new ManualCompaction(c.stops);
    if (!(await this.begin(work))) return;
    const r: CompactOutcome = await compactor.compact("manual", {
      ...(item.instructions !== undefined ? { instructions: item.instructions } : {}),
      signal: work.signal,
    });
    if (r.compacted) compactor.settle();
    await session.flush();
    if (!(await this.finish(items))) return;
    session.recordContextTokens();
    await postNotice(
      this.env,
      this.threadKey,
      r.compacted
        ? `Compacted the conversation: about ${tokenCount(r.tokensBefore)} → ${tokenCount(r.tokensAfter)} tokens.`
        : `Nothing compacted: ${r.reason ?? "there is not enough history yet"}.`,
      this.logFor,
    );
  }
}

function tokenCount(n: number | undefined): string {
  return (n ?? 0).toLocaleString("en-US");
}
