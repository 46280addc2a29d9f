/**
 * An in-memory `ChannelAdapter` for renderer tests: records every outbound call with the clock's
 * time, keeps the chat as a user would see it, and fails calls on demand (429s, not modified, …).
 */

import {
  type AdapterCapabilities,
  type ChannelAdapter,
  ChannelError,
  type ChannelErrorCode,
  type MessageRef,
  type PostOptions,
  type RateRule,
} from "../../../src/adapters/types.js";
import type { Clock } from "../../../src/agent/clock.js";

export interface RecordedCall {
  op: "post" | "edit" | "delete" | "react" | "unreact" | "typing" | "stop_typing";
  at: number;
  ref?: string;
  text?: string;
  /** For posts: the message replied to. */
  replyTo?: string;
  ok: boolean;
}

export class RecordingAdapter implements ChannelAdapter {
  readonly platform = "web" as const;
  readonly capabilities: AdapterCapabilities;
  readonly calls: RecordedCall[] = [];
  /** Current text of each message, in posting order. */
  readonly chat = new Map<MessageRef, string>();
  private seq = 0;
  private failures: Array<{ ops: RecordedCall["op"][]; code: ChannelErrorCode; retryAfterMs?: number }> = [];
  private inFlight = 0;
  /** Largest number of concurrent requests seen. */
  maxInFlight = 0;
  rule: RateRule | undefined;
  /** Present when built with `{ stopTyping: true }` (a platform that can end the indicator). */
  stopTyping?: (threadKey: string) => Promise<void>;
  /** Each post's idempotency key → the message it made. */
  readonly keys = new Map<string, MessageRef>();
  /** Present when built with `{ findPosted: true }` (a platform that finds a post by its key, as Slack's metadata). */
  findPosted?: (threadKey: string, key: string) => Promise<MessageRef | undefined>;

  constructor(
    private readonly clock: Clock,
    caps: Partial<AdapterCapabilities> = {},
    opts: { stopTyping?: boolean; findPosted?: boolean } = {},
  ) {
    if (opts.stopTyping) this.stopTyping = () => this.call("stop_typing", undefined, undefined, () => {});
    if (opts.findPosted) this.findPosted = async (_t, key) => this.keys.get(key);
    this.capabilities = {
      maxMessageLength: 4096,
      editIntervalMs: 1000,
      markdown: "plain",
      nativeCommands: false,
      reactions: true,
      edits: true,
      typingDurationMs: 5000,
      history: false,
      ...caps,
    };
  }

  /** The next `count` calls of the given kinds fail with `code`. */
  failNext(
    count: number,
    code: ChannelErrorCode,
    ops: RecordedCall["op"][] = ["post", "edit"],
    retryAfterMs?: number,
  ) {
    for (let i = 0; i < count; i++)
      this.failures.push({ ops, code, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }

  messages(): string[] {
    return [...this.chat.values()];
  }

  edits(ref: MessageRef): RecordedCall[] {
    return this.calls.filter((c) => c.op === "edit" && c.ref === ref && c.ok);
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  connections() {
    return [];
  }
  /** Every thread of this fake lives in one channel, so threads share its budget. */
  channelOf(): string {
    return "web:channel";
  }
  rateRuleFor(): RateRule {
    return this.rule ?? { limit: 1000, windowMs: 1000 };
  }

  private async call<T>(
    op: RecordedCall["op"],
    ref: string | undefined,
    text: string | undefined,
    fn: () => T,
    replyTo?: string,
  ): Promise<T> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const at = this.clock.now();
    try {
      await Promise.resolve();
      const idx = this.failures.findIndex((f) => f.ops.includes(op));
      if (idx >= 0) {
        const f = this.failures.splice(idx, 1)[0];
        this.calls.push({
          op,
          at,
          ok: false,
          ...(ref ? { ref } : {}),
          ...(text !== undefined ? { text } : {}),
        });
        if (f) throw new ChannelError(f.code, `fake ${f.code}`, "web", f.retryAfterMs);
      }
      const result = fn();
      this.calls.push({
        op,
        at,
        ok: true,
        ...(ref ? { ref } : {}),
        ...(typeof result === "string" && op === "post" ? { ref: result } : {}),
        ...(text !== undefined ? { text } : {}),
        ...(replyTo ? { replyTo } : {}),
      });
      return result;
    } finally {
      this.inFlight--;
    }
  }

  post(_threadKey: string, text: string, opts: PostOptions = {}): Promise<MessageRef> {
    return this.call(
      "post",
      undefined,
      text,
      () => {
        if (text.length > this.capabilities.maxMessageLength)
          throw new ChannelError("too_long", "too long", "web");
        const ref = `m${++this.seq}`;
        this.chat.set(ref, text);
        if (opts.idempotencyKey) this.keys.set(opts.idempotencyKey, ref);
        return ref;
      },
      opts.replyTo,
    );
  }
  edit(ref: MessageRef, text: string): Promise<void> {
    return this.call("edit", ref, text, () => {
      if (!this.chat.has(ref)) throw new ChannelError("not_found", "no such message", "web");
      if (text.length > this.capabilities.maxMessageLength)
        throw new ChannelError("too_long", "too long", "web");
      if (this.chat.get(ref) === text)
        throw new ChannelError("not_modified", "message is not modified", "web");
      this.chat.set(ref, text);
    });
  }
  delete(ref: MessageRef): Promise<void> {
    return this.call("delete", ref, undefined, () => {
      this.chat.delete(ref);
    });
  }
  react(ref: MessageRef): Promise<void> {
    return this.call("react", ref, undefined, () => {});
  }
  unreact(ref: MessageRef): Promise<void> {
    return this.call("unreact", ref, undefined, () => {});
  }
  typing(): Promise<void> {
    return this.call("typing", undefined, undefined, () => {});
  }
}
