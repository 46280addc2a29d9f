/**
 * The holder's loop over one tenure (see tenure.ts for its states): recover what a predecessor
 * left, take the inbox in order and hand message items to the run driver and `/new` / `/compact`
 * items to the session commands, and release the lease only when nothing is left. Around it, the
 * tenure's lease renewals and the control watch run on the worker's clock until the tenure ends.
 * Every part receives the tenure and asks it what it may do; none calls back into the holder.
 */

import type { TakeOutcome } from "../state/types.js";
import { LeaseLostError } from "../store/errors.js";
import { ThreadCompactor } from "./compaction-step.js";
import { ControlWatch } from "./control-watch.js";
import type { HolderEnv } from "./holder-env.js";
import { type NextTake, RunDriver } from "./run-driver.js";
import { SessionCommands } from "./session-commands.js";
import type { FirstRound, Tenure, TenureState } from "./tenure.js";
import { ThreadSession } from "./thread-session.js";

export class ThreadHolder {
  private readonly session: ThreadSession;
  private readonly compactor: ThreadCompactor;
  private readonly control: ControlWatch;
  private readonly runs: RunDriver;
  private readonly commands: SessionCommands;

  constructor(
    readonly tenure: Tenure,
    private readonly env: HolderEnv,
  ) {
    this.session = new ThreadSession(tenure, env);
    this.compactor = new ThreadCompactor(tenure, this.session, env);
    this.control = new ControlWatch(tenure, this.session, env);
    this.runs = new RunDriver(tenure, this.session, this.compactor, this.control, env);
    this.commands = new SessionCommands(tenure, this.session, this.compactor, env);
    this.session.bind(this.runs);
  }

  /**
   * Runs the tenure (acquired, with what its acquire read: `first`) to its end and returns its
   * terminal state. Never throws.
   */
  async hold(first: FirstRound): Promise<TenureState> {
    const { tenure } = this;
    const background = [tenure.renewals, this.control.poll()];
    try {
      await this.loop(first);
    } catch (e) {
      if (e instanceof LeaseLostError) tenure.lose();
      else tenure.fail(e, `working on thread ${tenure.threadKey}`);
    }
    await this.session.flush();
    if (tenure.state === "released") {
      this.session.parkAgent();
    } else {
      // The agent may be ahead of the session (or stopped mid-run): never reuse it.
      this.session.forgetAgent();
    }
    const outcome = await tenure.end();
    await Promise.all(background);
    return outcome;
  }

  /** A control notice for this thread arrived: re-read the durable state now. */
  notify(): void {
    this.control.notify();
  }

  /** Shutdown: stop at the next checkpoint (`checkpoint`) or at once (`now`); another worker resumes. */
  beginHandoff(mode: "checkpoint" | "now"): void {
    this.tenure.handOff(mode);
  }

  private async loop(first: FirstRound): Promise<void> {
    const { tenure } = this;
    // What a predecessor may have left is asked for now, beside the meta read the control check
    // makes (one round trip for both), unless the wake acquire read it with the lease.
    const leftovers = this.runs.readLeftovers(first.leftovers);
    // Control first: the meta read it makes (after the lease was taken) is fresh for the control
    // version it saw, and the agent is built or reused from that one read.
    if (first.control) await this.control.apply(first.control);
    else await this.control.check();
    // The take that starts the next run: the one the acquire made, else (with nothing left
    // inflight) one sent now beside the agent's build (a new session's create, or the branch read):
    // one round trip less before the first model call.
    let ahead: Promise<TakeOutcome> | undefined = first.firstTake && Promise.resolve(first.firstTake);
    if (!ahead && (await this.runs.nothingInflight(leftovers))) ahead = this.takeNow();
    await this.session.ensureAgent();
    let next: NextTake = await this.runs.recover(leftovers, ahead);
    while (tenure.active) {
      const t = next ?? (await tenure.take("next"));
      next = undefined;
      if (t.status === "lost") return;
      if (t.status === "wait") {
        // A collect group inside its window; a hand-over or a loss wakes the sleep early.
        await this.env.clock.sleep(t.waitMs, tenure.stopSignal).catch(() => {});
        continue;
      }
      if (t.items.length === 0) {
        // Released or lost: the loop ends. Busy: something arrived (or a predecessor's items).
        if ((await tenure.release()) === "busy" && tenure.mayBegin) next = await this.runs.recover();
        continue;
      }
      if (t.items[0]?.kind === "message") next = await this.runs.runItems(t.items, t.control);
      else await this.commands.run(t.items);
    }
  }

  /** A `take("next")` sent now and awaited later; until then a failure must not count as unhandled. */
  private takeNow(): Promise<TakeOutcome> {
    const p = this.tenure.take("next");
    p.catch(() => {});
    return p;
  }
}
