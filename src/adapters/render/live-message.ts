/**
 * A message that follows a growing text: the reply being streamed, or a run's tool status lines.
 *
 * Guarantees, per `LiveMessage`:
 * - at most one platform request in flight;
 * - at most one edit of each platform message per edit interval (measured between request starts);
 * - only the latest text is sent: intermediate frames that were superseded while waiting are skipped;
 * - the final text is always sent exactly, split into several platform messages when longer than the
 *   limit; a rate limit (429) delays it by the platform's retry-after and never drops it;
 * - "not modified" counts as sent; an edit of a message someone deleted posts it again;
 * - no secret is shown (src/agent/llm/redact.ts), not even the start of one still streaming.
 * Requests also spend the channel's shared budget through the `RateLimiter`.
 */

import { randomBytes } from "node:crypto";
import type { Clock } from "../../agent/clock.js";
import { redactGrowingText, redactSecrets } from "../../agent/llm/redact.js";
import { type StructuredLogger, silentLogger } from "../../agent/logger.js";
import {
  type ChannelAdapter,
  isChannelError,
  type MessageRef,
  type RateLimiter,
  type RateRule,
} from "../types.js";
import { splitMessage } from "./split.js";

export interface LiveMessageOptions {
  adapter: ChannelAdapter;
  threadKey: string;
  clock: Clock;
  limiter: RateLimiter;
  /** Defaults: the adapter's `editIntervalFor(threadKey)`, else `capabilities.editIntervalMs`, else 1000. */
  editIntervalMs?: number;
  format?: "markdown" | "plain";
  logger?: StructuredLogger;
  /** Attempts for the final text on failures other than rate limits (default 5, with backoff). */
  maxFinalAttempts?: number;
  /** The message the first part answers: posted as a reply to it where the platform shows replies. */
  replyTo?: MessageRef;
  /**
   * Awaited before every new platform message (never before an edit): the renderer uses it to keep
   * answers in order and to end the typing indicator before text appears. Must not reject.
   */
  beforePost?: () => Promise<void>;
  /**
   * Awaited when what the message owes the chat changed, before the next request: a new platform
   * message is about to be posted (`posting` names it), was posted (its ref is in `refs`), or a
   * superseded part was deleted. The renderer records the run's snapshot in the render journal here,
   * so a post's intent is stored before the post. Must not reject.
   */
  afterChange?: () => Promise<void>;
  /**
   * Called the instant the platform answered a post (no await in between) with the post's
   * idempotency key and its ref: the renderer sends the id to the render journal at once. Must not throw.
   */
  onPosted?: (key: string, ref: MessageRef) => void;
  /**
   * Awaited before every request (post or edit): the renderer waits here, once a reply ended, until
   * the session holds it, so the chat never shows a reply's full text that a worker killed next
   * would leave out of the session (its successor would remove it and answer again). Must not reject.
   */
  beforeSend?: () => Promise<void>;
  /** Checked before every request: false stops the message for good ("cancelled"), e.g. the lease is lost. */
  mayContinue?: () => boolean;
}

/** What happened to the final text. */
export type LiveMessageOutcome = "delivered" | "failed" | "cancelled";

/** A post about to go out (or whose answer never came): the part it makes and its idempotency key. */
export interface PostIntent {
  part: number;
  key: string;
}

/** A fresh idempotency key: 20 characters of [0-9a-z] (Discord nonces take at most 25). */
export function newPostKey(): string {
  return randomBytes(13).toString("hex").slice(0, 20);
}

export class LiveMessage {
  /** The text as last `set`, and what of it may show while it still grows. */
  private raw = "";
  private latest = "";
  private final: string | undefined;
  private readonly sent: (string | undefined)[] = [];
  private readonly refList: (MessageRef | undefined)[] = [];
  private readonly lastStart: number[] = [];
  private wake: (() => void) | undefined;
  private running: Promise<LiveMessageOutcome> | undefined;
  private readonly abort = new AbortController();
  private failures = 0;
  private working = false;
  /** The post in flight, or the last one that failed (retried with the same key). */
  private intent: PostIntent | undefined;
  private readonly interval: number;
  private readonly channel: string;
  private readonly rule: RateRule | undefined;
  private readonly log: StructuredLogger;

  constructor(private readonly o: LiveMessageOptions) {
    const a = o.adapter;
    this.interval =
      o.editIntervalMs ?? a.editIntervalFor?.(o.threadKey) ?? a.capabilities.editIntervalMs ?? 1000;
    this.channel = a.channelOf(o.threadKey);
    this.rule = a.rateRuleFor?.(o.threadKey);
    this.log = o.logger ?? silentLogger;
  }

  /** Show `text` (the whole text so far). Cheap: call it on every delta. Ignored after `finish`. */
  set(text: string): void {
    if (this.final !== undefined) return;
    // Secrets never reach a chat message, not even the first characters of one still streaming.
    this.raw = text;
    this.latest = redactGrowingText(text);
    this.kick();
  }

  /**
   * The text is complete: send exactly `text` (default: the last `set`) and resolve when every part is
   * on the platform, or when it failed for good ("failed") or was cancelled.
   */
  finish(text?: string): Promise<LiveMessageOutcome> {
    if (this.final === undefined) this.final = redactSecrets(text ?? this.raw);
    this.kick();
    return this.running ?? Promise.resolve("delivered");
  }

  /** Stop sending (the run was discarded). Pending sleeps end at once. */
  cancel(): void {
    this.abort.abort(new Error("live message cancelled"));
    this.wake?.();
  }

  /** References of the platform messages, in order. */
  get refs(): MessageRef[] {
    return this.refList.filter((r): r is MessageRef => r !== undefined);
  }

  /** The post about to go out or in flight whose ref is not known yet. */
  get posting(): PostIntent | undefined {
    return this.intent ? { ...this.intent } : undefined;
  }

  /** True while a request is being prepared or is in flight (tests wait for false). */
  get busy(): boolean {
    return this.working;
  }

  private kick(): void {
    if (this.abort.signal.aborted) return;
    if (!this.running) {
      this.working = true;
      this.running = this.pump().finally(() => {
        this.working = false;
      });
    }
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private target(): string[] {
    const text = this.final ?? this.latest;
    if (text.trim() === "") return [];
    return splitMessage(text, this.o.adapter.capabilities.maxMessageLength);
  }

  private async pump(): Promise<LiveMessageOutcome> {
    const { clock } = this.o;
    const signal = this.abort.signal;
    try {
      for (;;) {
        if (signal.aborted || this.o.mayContinue?.() === false) return "cancelled";
        const parts = this.target();
        const now = clock.now();
        let next: { index: number; text: string } | undefined;
        let earliest = Number.POSITIVE_INFINITY;
        for (let i = 0; i < parts.length; i++) {
          const text = parts[i] as string;
          if (this.sent[i] === text && this.refList[i] !== undefined) continue;
          if (this.refList[i] === undefined) {
            next = { index: i, text };
            break;
          }
          const due = (this.lastStart[i] ?? 0) + this.interval;
          if (due <= now) {
            next = { index: i, text };
            break;
          }
          earliest = Math.min(earliest, due);
        }
        if (!next && this.final !== undefined && earliest === Number.POSITIVE_INFINITY) {
          // Final text fewer parts than what was shown: remove the leftovers.
          const extra = this.refList.length - 1;
          if (extra >= parts.length && extra >= 0) {
            await this.removeLast();
            continue;
          }
          return "delivered";
        }
        if (!next) {
          this.working = false;
          if (earliest !== Number.POSITIVE_INFINITY) await clock.sleep(earliest - now, signal);
          else await new Promise<void>((r) => (this.wake = r));
          this.working = true;
          continue;
        }
        const wait = await this.o.limiter.acquire(
          this.channel,
          this.rule ?? { limit: 1_000_000, windowMs: 1000 },
        );
        if (wait > 0) {
          this.working = false;
          await clock.sleep(wait, signal);
          this.working = true;
        }
        // Send the newest text for this part, which may have moved on while waiting.
        const text = this.target()[next.index] ?? next.text;
        const result = await this.send(next.index, text);
        if (result === "failed") return "failed";
      }
    } catch (err) {
      if (signal.aborted) return "cancelled";
      throw err;
    }
  }

  private async send(index: number, candidate: string): Promise<"ok" | "retry" | "failed"> {
    const { adapter, threadKey, clock } = this.o;
    const ref = this.refList[index];
    let text = candidate;
    this.lastStart[index] = clock.now();
    try {
      if (this.o.beforeSend) {
        this.working = false;
        await this.o.beforeSend();
        this.working = true;
        if (this.abort.signal.aborted || this.o.mayContinue?.() === false) return "ok";
        text = this.target()[index] ?? text;
      }
      if (ref === undefined) {
        if (this.o.beforePost) {
          // Waiting on others (an earlier answer still being delivered) is not work of this message.
          this.working = false;
          await this.o.beforePost();
          this.working = true;
          if (this.abort.signal.aborted || this.o.mayContinue?.() === false) return "ok";
          text = this.target()[index] ?? text;
          this.lastStart[index] = clock.now();
        }
        const replyTo = index === 0 ? this.o.replyTo : undefined;
        // The intent first (a retry of a post whose answer never came keeps its key), then the post.
        let intent = this.intent;
        if (intent?.part !== index) {
          intent = { part: index, key: newPostKey() };
          this.intent = intent;
          await this.o.afterChange?.();
          if (this.abort.signal.aborted || this.o.mayContinue?.() === false) return "ok";
        }
        const key = intent.key;
        const posted = await adapter.post(threadKey, text, {
          format: this.o.format ?? "markdown",
          idempotencyKey: key,
          ...(replyTo ? { replyTo } : {}),
        });
        // Same tick as the platform's answer: the id is on its way to the journal before anything else runs.
        this.o.onPosted?.(key, posted);
        this.refList[index] = posted;
        this.intent = undefined;
        await this.o.afterChange?.();
      } else {
        await adapter.edit(ref, text, { format: this.o.format ?? "markdown" });
      }
      this.sent[index] = text;
      this.failures = 0;
      return "ok";
    } catch (err) {
      if (isChannelError(err, "not_modified")) {
        this.sent[index] = text;
        return "ok";
      }
      if (isChannelError(err, "rate_limited")) {
        const retry = err.retryAfterMs ?? 1000;
        this.log.debug({ threadKey, retryAfterMs: retry }, "rate limited; waiting");
        await this.o.limiter.penalize(this.channel, retry);
        return "retry";
      }
      if (ref !== undefined && isChannelError(err, "not_found")) {
        // Someone deleted the message: post the part again.
        this.refList[index] = undefined;
        this.sent[index] = undefined;
        return "retry";
      }
      this.failures++;
      const fatal = isChannelError(err, "forbidden", "unauthorized");
      const attempts = this.o.maxFinalAttempts ?? 5;
      this.log.warn({ threadKey, err, attempt: this.failures }, "could not update chat message");
      if (fatal || (this.final !== undefined && this.failures >= attempts)) return "failed";
      this.working = false;
      await clock.sleep(Math.min(30_000, 500 * 2 ** (this.failures - 1)), this.abort.signal);
      this.working = true;
      return "retry";
    }
  }

  private async removeLast(): Promise<void> {
    const ref = this.refList.pop();
    this.sent.pop();
    this.lastStart.pop();
    if (ref === undefined) return;
    try {
      await this.o.adapter.delete(ref);
    } catch (err) {
      if (!isChannelError(err, "not_found")) this.log.warn({ err }, "could not delete a superseded part");
    }
    await this.o.afterChange?.();
  }
}
