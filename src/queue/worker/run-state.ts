/**
 * One agent run's own state machine, beside the tenure's (tenure.ts): what the run's agent is
 * doing as far as the inbox is concerned, and so which read each of its checkpoints makes. The
 * agent asks for queued messages at two checkpoints (its loop's order): the steering read, before
 * its first model call and after every turn, and the follow-up read, when it would stop. The run
 * driver asks this machine what read to make (`read`), makes it, and tells it what the take found
 * (`afterTake`) and what the agent replied (`replied`); a stop or an interrupt that targets the
 * run aborts it (`abort`). A move not in the table is a bug in the worker and throws.
 *
 * ```
 *   starting ──steering read (none)──► working ◄──reply asks tools──┐
 *                                         │                        │
 *   answeringTail ──reply──► working | closing                     │
 *                                         │ reply asks no tool     │
 *                                         ▼                        │
 *                                      closing ────────────────────┘
 *                                         │ steering read: take by the followUp rule,
 *                                         │ found no steering message
 *                                         ▼
 *                                      holding ──follow-up read (the held take)──► closing
 *
 *   any state but aborted ── abort() ──► aborted (terminal: every read is none)
 * ```
 *
 * | state         | steering read                         | follow-up read           | reply: tools / none  |
 * | ------------- | ------------------------------------- | ------------------------ | -------------------- |
 * | starting      | none (→ working)                      | take `followUp`          | working / closing    |
 * | answeringTail | control only                          | take `followUp`          | working / closing    |
 * | working       | take `steer`                          | take `followUp`          | working / closing    |
 * | closing       | take `followUp`; no steering → holding| take `followUp`          | working / closing    |
 * | holding       | none                                  | the held take (→ closing)| holding / holding    |
 * | aborted       | none                                  | none                     | aborted              |
 *
 * - `starting`: the run began with items the holder took a moment ago (with the control state):
 *   the steering read before the first model call would find only what arrived in that moment, and
 *   the read after the call finds it as well, so it is skipped.
 * - `answeringTail`: a recovery run answering what a dead predecessor left unanswered: until its
 *   first reply ends, steering reads take nothing new (only the control state is re-read), so that
 *   reply answers the question as it stood; newer messages come next.
 * - `closing`: the latest reply asked for no tool, so the steering read after its turn is followed
 *   by the follow-up read with nothing between them: one `TAKE followUp` answers both (its rule
 *   takes the same steer/interrupt messages the steer rule would). What it found that does not
 *   steer (a follow-up message, a collect group, nothing) is held for the follow-up read.
 * - `holding`: a steering read while the take waits (another steering source kept the agent going)
 *   takes nothing: what it took is at the head of the line.
 *
 * Besides the reads, the machine records the run's one compaction-and-retry after a context
 * overflow (`retryOverflow`: never twice).
 */
import type { TakeOutcome, TakeRule } from "../state/types.js";

export type RunPhase = "starting" | "answeringTail" | "working" | "closing" | "holding" | "aborted";

/** The agent's two queue checkpoints. */
export type Checkpoint = "steer" | "followUp";

/**
 * What a checkpoint reads: nothing (`none`), only the control state (`control`), a take by `rule`
 * (`take`, then `afterTake`), or the take held for it (`held`, already taken).
 */
export type CheckpointRead =
  | { read: "none" }
  | { read: "control" }
  | { read: "take"; rule: TakeRule }
  | { read: "held"; take: TakeOutcome };

/** Every allowed transition; `aborted` has none. */
const TRANSITIONS: Readonly<Record<RunPhase, readonly RunPhase[]>> = {
  starting: ["working", "closing", "aborted"],
  answeringTail: ["working", "closing", "aborted"],
  working: ["working", "closing", "aborted"],
  closing: ["working", "closing", "holding", "aborted"],
  holding: ["closing", "aborted"],
  aborted: [],
};

export class RunState {
  private current: RunPhase;
  /** The take held for the follow-up read (`holding`). */
  private held: TakeOutcome | undefined;
  /** The checkpoint whose take is under way (`read` said `take`; `afterTake` answers it). */
  private taking: Checkpoint | undefined;
  private retried = false;

  /** `starting` for a run of items just taken, `answeringTail` for a recovery run. */
  constructor(start: "starting" | "answeringTail") {
    this.current = start;
  }

  get phase(): RunPhase {
    return this.current;
  }

  /** A stop or an interrupt aborted the run: nothing more is taken for it. */
  get aborted(): boolean {
    return this.current === "aborted";
  }

  /** The read checkpoint `which` makes now (and the move it makes: see the table). */
  read(which: Checkpoint): CheckpointRead {
    switch (this.current) {
      case "aborted":
        return { read: "none" };
      case "holding": {
        if (which === "steer") return { read: "none" };
        const take = this.held as TakeOutcome;
        this.held = undefined;
        this.to("closing");
        return { read: "held", take };
      }
      case "starting":
        if (which === "followUp") return this.take(which, "followUp");
        this.to("working");
        return { read: "none" };
      case "answeringTail":
        return which === "steer" ? { read: "control" } : this.take(which, "followUp");
      case "working":
        return this.take(which, which);
      case "closing":
        return this.take(which, "followUp");
    }
  }

  /**
   * What the take `read` asked for found (`steers`: its first item steers the run). `deliver`: its
   * items go to the agent now; `hold`: they wait for the follow-up read (`closing → holding`).
   */
  afterTake(t: TakeOutcome, steers: boolean): "deliver" | "hold" {
    const which = this.taking;
    if (which === undefined) throw new Error("RunState.afterTake() without a take under way; this is a bug.");
    this.taking = undefined;
    if (this.current !== "closing" || which !== "steer" || steers) return "deliver";
    this.held = t;
    this.to("holding");
    return "hold";
  }

  /** The agent's reply ended; `askedTools`: it called a tool (the agent goes on with a turn). */
  replied(askedTools: boolean): void {
    if (this.current === "aborted" || this.current === "holding") return;
    this.to(askedTools ? "working" : "closing");
  }

  /** A stop or an interrupt targets the run; false when it was aborted already. */
  abort(): boolean {
    if (this.current === "aborted") return false;
    this.held = undefined;
    this.to("aborted");
    return true;
  }

  /** The run may still compact and retry once after a context overflow. */
  get mayRetryOverflow(): boolean {
    return !this.retried;
  }

  /** The run's one retry after a context overflow starts; a second one is a bug. */
  retryOverflow(): void {
    if (this.retried)
      throw new Error("RunState.retryOverflow(): the run retried once already; this is a bug.");
    this.retried = true;
  }

  private take(which: Checkpoint, rule: TakeRule): CheckpointRead {
    this.taking = which;
    return { read: "take", rule };
  }

  private to(next: RunPhase): void {
    if (!TRANSITIONS[this.current].includes(next)) {
      throw new Error(`Run: no transition ${this.current} → ${next}; this is a bug in the worker.`);
    }
    this.current = next;
  }
}
