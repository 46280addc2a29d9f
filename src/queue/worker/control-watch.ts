/**
 * A tenure's view of its thread's durable control state: re-read at every checkpoint, on every
 * control notice and every `controlPollMs` on the worker's clock, and applied to the tenure's work
 * (a stop or an interrupt aborts the run or the `/compact` it targets) and to the agent (a changed
 * model or thinking level applies from its next LLM call). Pub/sub notices are only the fast path:
 * a lost notice delays a signal until the next checkpoint or poll, never loses it.
 */

import type { ControlState } from "../state/types.js";
import type { HolderEnv } from "./holder-env.js";
import type { Tenure } from "./tenure.js";
import type { ThreadSession } from "./thread-session.js";

export class ControlWatch {
  private seenVer = -1;
  private checking: Promise<void> | undefined;
  private recheck = false;

  constructor(
    private readonly tenure: Tenure,
    private readonly session: ThreadSession,
    private readonly env: HolderEnv,
  ) {}

  /** Re-reads the control state now; concurrent calls share one read (and re-read once more). */
  check(): Promise<void> {
    if (this.checking) {
      this.recheck = true;
      return this.checking;
    }
    this.checking = (async () => {
      try {
        do {
          this.recheck = false;
          await this.applyRead(await this.env.state.readControl(this.tenure.threadKey));
        } while (this.recheck);
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  /**
   * Applies a control state read elsewhere (a take reads it in the same step): a stop or an
   * interrupt reaches the work, a new version's settings reach the agent.
   */
  async apply(c: ControlState): Promise<void> {
    await this.applyRead(c);
    // A check under way may be applying this version's settings: they must be on the agent too.
    await this.checking;
  }

  private async applyRead(c: ControlState): Promise<void> {
    this.tenure.work?.onControl(c);
    if (c.ver !== this.seenVer) {
      this.seenVer = c.ver;
      await this.session.applyStoredSettings(c.ver);
    }
  }

  /** A control notice arrived: check now, reporting a failure instead of throwing. */
  notify(): void {
    void this.check().catch((e: unknown) => this.env.onError(e, "reading control state"));
  }

  /** Checks every `controlPollMs` until the tenure ends; resolves then. */
  async poll(): Promise<void> {
    const ended = this.tenure.endSignal;
    const every = Math.max(20, this.env.controlPollMs);
    while (!ended.aborted) {
      try {
        await this.env.clock.sleep(every, ended);
      } catch {
        return;
      }
      this.notify();
    }
  }
}
