/**
 * A `RunSink` that records everything, for tests and debugging: every run's events, notices and
 * whether it was closed, per thread. `waitFor` resolves when a condition over the records holds.
 */
import type { AgentEvent } from "../agent/types.js";
import type { RunSink, RunSinkFactory } from "./types.js";

export interface RecordedRun {
  threadKey: string;
  runId: string;
  events: AgentEvent[];
  notices: string[];
  closed: boolean;
}

export class RecordingSinks {
  readonly runs: RecordedRun[] = [];
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];

  /** The factory to give a runtime. */
  readonly factory: RunSinkFactory = (threadKey, runId) => {
    const run: RecordedRun = { threadKey, runId, events: [], notices: [], closed: false };
    this.runs.push(run);
    const sink: RunSink = {
      onEvent: (event) => {
        run.events.push(event);
        this.changed();
      },
      onNotice: (text) => {
        run.notices.push(text);
        this.changed();
      },
      close: () => {
        run.closed = true;
        this.changed();
      },
    };
    return sink;
  };

  /** Runs of a thread (not notice-only sinks), in creation order. */
  runsOf(threadKey: string): RecordedRun[] {
    return this.runs.filter((r) => r.threadKey === threadKey && !r.runId.startsWith("notice:"));
  }

  /** Every notice posted to a thread, in order. */
  noticesOf(threadKey: string): string[] {
    return this.runs.filter((r) => r.threadKey === threadKey).flatMap((r) => r.notices);
  }

  /**
   * Resolves when `check()` is true, checked now and after every recorded change. It has no
   * timeout of its own: it waits on what the runtime records, and the test runner's timeout applies.
   */
  waitFor(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ check, resolve });
    });
  }

  private changed(): void {
    for (const w of [...this.waiters]) {
      if (w.check()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
}
