/**
 * The holder's loop over one tenure (see tenure.ts for its states): recover what a predecessor
 * left, take the inbox in order and hand message items to the run driver and `/new` / `/compact`
 * items to the session commands, and release the lease only when nothing is left. Around it, the
 * tenure's lease renewals and the control watch run on the worker's clock until the tenure ends.
 * Every part receives the tenure and asks it what it may do; none calls back into the holder.
 */

import { LeaseLostError } from "../store/errors.js";
import { ThreadCompactor } from "./compaction-step.js";
import { ControlWatch } from "./control-watch.js";
import type { HolderEnv } from "./holder-env.js";
import { RunDriver } from "./run-driver.js";
import { SessionCommands } from "./session-commands.js";
import type { Tenure, TenureState } from "./tenure.js";
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

  /** Runs the tenure (acquired) to its end and returns its terminal state. Never throws. */
  async hold(): Promise<TenureState> {
    const { tenure } = this;
    const background = [tenure.renewals, this.control.poll()];
    try {
      await this.loop();
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

  private async loop(): Promise<void> {
    const { tenure } = this;
    // What a predecessor may have left is asked for now, beside the meta read the control check
    // makes (one round trip for both), unless the wake acquire read it with the lease.
    this.runs.readLeftovers();
    // Control first: the meta read it makes (after the lease was taken) is fresh for the control
    // version it saw, and the agent is built or reused from that one read.
    await this.control.check();
    // With nothing left inflight, the first take goes beside the agent's build (a new session's
    // create, or the branch read): one round trip less before the first model call. A wake
    // acquire usually made it with the lease already; then this does nothing.
    if (await this.runs.nothingInflight()) tenure.takeAhead();
    await this.session.ensureAgent();
    await this.runs.recover();
    while (tenure.active) {
      const t = await tenure.take("next");
      if (t.status === "lost") return;
      if (t.status === "wait") {
        // A collect group inside its window; a hand-over or a loss wakes the sleep early.
        await this.env.clock.sleep(t.waitMs, tenure.stopSignal).catch(() => {});
        continue;
      }
      if (t.items.length === 0) {
        // Released or lost: the loop ends. Busy: something arrived (or a predecessor's items).
        if ((await tenure.release()) === "busy" && tenure.mayBegin) await this.runs.recover();
        continue;
      }
      if (t.items[0]?.kind === "message") await this.runs.runItems(t.items, t.control);
      else await this.commands.run(t.items);
    }
  }
}
