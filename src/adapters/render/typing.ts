/**
 * The typing indicator of one run: shown while the answer in progress has nothing on screen yet,
 * ended before that answer's first message is posted.
 *
 * Why not until the final text: Telegram and Discord keep an indicator visible for a fixed time
 * after each call (5 s, 10 s) and end it early only when the bot posts a new message; an edit does
 * not end it. An indicator renewed while a posted answer is being edited would outlive the final
 * text by seconds. So the indicator is renewed only while nothing of the answer is visible, and the
 * post that makes the answer visible ends it (platforms with an explicit stop, the web chat, get
 * `stopTyping`). A later answer of the same run (after a new user message) shows it again.
 */

import type { Clock } from "../../agent/clock.js";
import type { StructuredLogger } from "../../agent/logger.js";
import type { ChannelAdapter } from "../types.js";

/** Longest wait for a typing call in flight before the answer is posted anyway. */
const MAX_CALL_WAIT_MS = 2000;

export class TypingIndicator {
  private stopper: AbortController | undefined;
  private loop: Promise<void> | undefined;
  /** A `typing()` call went out since the last stop. */
  private shown = false;
  private closed = false;
  /** The stop in progress: concurrent callers wait for the same one. */
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly adapter: ChannelAdapter,
    private readonly threadKey: string,
    private readonly clock: Clock,
    private readonly log: StructuredLogger,
  ) {}

  /** True while the indicator is being renewed. */
  get active(): boolean {
    return this.loop !== undefined;
  }

  /** Shows the indicator and keeps renewing it until `stop`. No-op while active, after `close`, or without typing support. */
  start(): void {
    const duration = this.adapter.capabilities.typingDurationMs;
    if (this.loop || this.closed || duration <= 0) return;
    const stopper = new AbortController();
    this.stopper = stopper;
    // Renew a second before it would fade, but never more than once a second.
    const every = Math.max(1000, duration - 1000);
    this.loop = (async () => {
      while (!stopper.signal.aborted) {
        try {
          await this.adapter.typing(this.threadKey);
          this.shown = true;
        } catch (err) {
          this.log.debug({ err }, "typing indicator failed");
        }
        if (stopper.signal.aborted) return;
        try {
          await this.clock.sleep(every, stopper.signal);
        } catch {
          return;
        }
      }
    })();
  }

  /**
   * Stops renewing and resolves once no `typing()` call is in flight (so none lands after what the
   * caller posts next), ending the indicator where the platform can (`stopTyping`).
   */
  stop(): Promise<void> {
    if (!this.loop && this.stopping) return this.stopping;
    const loop = this.loop;
    this.stopper?.abort();
    this.stopper = undefined;
    this.loop = undefined;
    const stopping = (async () => {
      if (loop) await this.settled(loop);
      if (!this.shown) return;
      this.shown = false;
      try {
        await this.adapter.stopTyping?.(this.threadKey);
      } catch (err) {
        this.log.debug({ err }, "could not end the typing indicator");
      }
    })();
    this.stopping = stopping;
    return stopping;
  }

  /**
   * Waits for the loop's call in flight, but not for long: a typing call that hangs must not hold
   * back the answer (it would then land after the post, which only costs a lingering indicator).
   */
  private async settled(loop: Promise<void>): Promise<void> {
    const done = new AbortController();
    const waited = this.clock.sleep(MAX_CALL_WAIT_MS, done.signal).catch(() => {});
    await Promise.race([loop, waited]);
    done.abort();
  }

  /** Stops for good: later `start` calls do nothing. */
  close(): Promise<void> {
    this.closed = true;
    return this.stop();
  }
}
