/**
 * Keeps a tenure's lease alive: renews it every third of its TTL on the worker's clock until the
 * tenure ends. The tenure decides what a reply means (a refusal, or no confirmed renewal for a
 * whole TTL, is a loss). The session writes are fenced by the lease anyway; renewing on time only
 * keeps the lease, and finding a loss early makes the holder stop early.
 */
import type { Clock } from "../../agent/clock.js";
import type { Tenure } from "./tenure.js";

export class LeaseRenewer {
  constructor(
    private readonly tenure: Tenure,
    private readonly clock: Clock,
    private readonly leaseTtlMs: number,
  ) {}

  /** Renews until the tenure ends; resolves then. Never throws. */
  async run(): Promise<void> {
    const every = Math.max(10, Math.floor(this.leaseTtlMs / 3));
    const ended = this.tenure.endSignal;
    while (!ended.aborted) {
      try {
        await this.clock.sleep(every, ended);
      } catch {
        return;
      }
      this.tenure.renew();
    }
  }
}
