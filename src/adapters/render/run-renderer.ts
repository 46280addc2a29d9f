/**
 * Shows one agent run in a chat thread: a status message with a line per tool call, the reply text
 * streamed into its own message(s) by throttled edits, a typing indicator while the agent works, and
 * a failure shown once, briefly. Platform-neutral: everything it knows about the platform comes
 * from the adapter's capabilities.
 *
 * It fits the queue worker's `RunSink` shape (`onEvent`, `onNotice`, `close`). `onEvent` never
 * throws and never blocks; platform failures are logged, never thrown into the agent.
 */
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import type { AdapterLogger, ChannelAdapter, RateLimiter } from "../types.js";
import { type Clock, systemClock } from "./clock.js";
import { LiveMessage, type LiveMessageOutcome } from "./live-message.js";
import { unlimited } from "./rate-limiter.js";
import { formatToolStatus, type ToolLine } from "./tool-status.js";

export interface RunRendererOptions {
  adapter: ChannelAdapter;
  threadKey: string;
  clock?: Clock;
  /** Shared per-channel budget; use one limiter for every renderer of a process (or the Redis one). */
  limiter?: RateLimiter;
  logger?: AdapterLogger;
  /** Show the tool status message (default true). */
  showTools?: boolean;
  /** Override the edit interval (default: from the adapter). */
  editIntervalMs?: number;
}

/** How a run ended, as far as the caller knows (the events usually say it already). */
export interface RunOutcome {
  /** A failure to show (once, first line only). */
  error?: string;
  aborted?: boolean;
}

const silent: AdapterLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** Longest error text shown in chat. */
const MAX_ERROR_CHARS = 200;

export class RunRenderer {
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly log: AdapterLogger;
  private readonly reply: LiveMessage;
  private status: LiveMessage | undefined;
  private readonly tools: ToolLine[] = [];
  private readonly doneTexts: string[] = [];
  private currentText = "";
  private error: string | undefined;
  private aborted = false;
  private typingStop: AbortController | undefined;
  private typingLoop: Promise<void> | undefined;
  private finishing: Promise<void> | undefined;
  private notices = 0;

  constructor(private readonly o: RunRendererOptions) {
    this.clock = o.clock ?? systemClock;
    this.limiter = o.limiter ?? unlimited;
    this.log = o.logger ?? silent;
    this.reply = this.live();
  }

  /** Feed one agent event. Never throws. */
  onEvent(event: AgentEvent): void {
    try {
      this.handle(event);
    } catch (err) {
      this.log.error(
        { err: err instanceof Error ? err.message : String(err), type: event.type },
        "renderer failed",
      );
    }
  }

  /** Post a short separate message into the thread (e.g. "inbox full"). Resolves when it is sent or failed. */
  async onNotice(text: string): Promise<void> {
    this.notices++;
    const note = this.live();
    note.set(text);
    await note.finish(text);
    this.notices--;
  }

  /**
   * The run is over (ended, failed or aborted): stop typing, send the final status and text exactly,
   * show an error once. Resolves when the chat shows the final state (or delivery failed for good).
   * Safe to call more than once.
   */
  async close(outcome: RunOutcome = {}): Promise<void> {
    if (outcome.error && !this.error) this.error = outcome.error;
    if (outcome.aborted) this.aborted = true;
    await this.finish();
  }

  /** True while a platform request is being made (tests wait for this to go false). */
  get busy(): boolean {
    return this.reply.busy || (this.status?.busy ?? false) || this.notices > 0;
  }

  /** Platform references of the reply's messages. */
  get replyRefs(): string[] {
    return this.reply.refs;
  }

  /** Platform reference of the status message, once posted. */
  get statusRef(): string | undefined {
    return this.status?.refs[0];
  }

  private live(): LiveMessage {
    return new LiveMessage({
      adapter: this.o.adapter,
      threadKey: this.o.threadKey,
      clock: this.clock,
      limiter: this.limiter,
      logger: this.log,
      ...(this.o.editIntervalMs !== undefined ? { editIntervalMs: this.o.editIntervalMs } : {}),
    });
  }

  private handle(event: AgentEvent): void {
    if (this.finishing) return;
    if (event.type !== "agent_end") this.startTyping();
    switch (event.type) {
      case "message_update":
        this.currentText = textOf(event.message);
        this.reply.set(this.replyText());
        return;
      case "message_end": {
        const m = event.message;
        if (!isAssistant(m)) return;
        const text = textOf(m);
        if (text) this.doneTexts.push(text);
        this.currentText = "";
        if (m.stopReason === "error" && m.errorMessage) this.error ??= m.errorMessage;
        if (m.stopReason === "error" && !m.errorMessage) this.error ??= "The model request failed.";
        if (m.stopReason === "aborted") this.aborted = true;
        this.reply.set(this.replyText());
        return;
      }
      case "tool_execution_start":
        this.tools.push({
          toolCallId: event.toolCallId,
          name: event.toolName,
          args: event.args,
          startedAt: this.clock.now(),
        });
        this.showStatus();
        return;
      case "tool_execution_end": {
        const line = this.tools.find((t) => t.toolCallId === event.toolCallId && t.endedAt === undefined);
        if (line) {
          line.endedAt = this.clock.now();
          line.isError = event.isError;
        }
        this.showStatus();
        return;
      }
      case "agent_end":
        void this.finish();
        return;
      default:
        return;
    }
  }

  private replyText(): string {
    return [...this.doneTexts, this.currentText].filter((t) => t.trim() !== "").join("\n\n");
  }

  private showStatus(): void {
    if (this.o.showTools === false) return;
    this.status ??= this.live();
    this.status.set(formatToolStatus(this.tools));
  }

  private startTyping(): void {
    if (this.typingLoop || this.o.adapter.capabilities.typingDurationMs <= 0) return;
    const stop = new AbortController();
    this.typingStop = stop;
    const every = Math.max(1000, this.o.adapter.capabilities.typingDurationMs - 1000);
    this.typingLoop = (async () => {
      while (!stop.signal.aborted) {
        try {
          await this.o.adapter.typing(this.o.threadKey);
        } catch (err) {
          this.log.debug(
            { err: err instanceof Error ? err.message : String(err) },
            "typing indicator failed",
          );
        }
        try {
          await this.clock.sleep(every, stop.signal);
        } catch {
          return;
        }
      }
    })();
  }

  private finish(): Promise<void> {
    this.finishing ??= this.doFinish();
    return this.finishing;
  }

  private async doFinish(): Promise<void> {
    this.typingStop?.abort();
    await this.typingLoop;
    if (this.currentText) {
      this.doneTexts.push(this.currentText);
      this.currentText = "";
    }
    for (const t of this.tools) {
      if (t.endedAt === undefined) {
        t.endedAt = this.clock.now();
        if (this.aborted) t.cancelled = true;
        else t.isError = true;
      }
    }
    const outcomes: Promise<LiveMessageOutcome>[] = [];
    if (this.status) outcomes.push(this.status.finish(formatToolStatus(this.tools)));
    outcomes.push(this.reply.finish(this.replyText()));
    const results = await Promise.all(outcomes);
    if (results.includes("failed"))
      this.log.warn({ threadKey: this.o.threadKey }, "final reply not fully delivered");
    if (this.error) {
      const note = this.live();
      await note.finish(`⚠️ ${briefError(this.error)}`);
    }
  }
}

/**
 * A `RunSink` factory for the queue runtime: one `RunRenderer` per run (or per notice), all sharing
 * one limiter and clock. `adapter` may pick the adapter by thread key when several platforms run.
 */
export function createRendererFactory(opts: {
  adapter: ChannelAdapter | ((threadKey: string) => ChannelAdapter);
  limiter?: RateLimiter;
  clock?: Clock;
  logger?: AdapterLogger;
  showTools?: boolean;
}): (threadKey: string, runId: string) => RunRenderer {
  return (threadKey) =>
    new RunRenderer({
      adapter: typeof opts.adapter === "function" ? opts.adapter(threadKey) : opts.adapter,
      threadKey,
      ...(opts.limiter ? { limiter: opts.limiter } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.showTools !== undefined ? { showTools: opts.showTools } : {}),
    });
}

function isAssistant(m: AgentMessage): m is Extract<AgentMessage, { role: "assistant" }> {
  return (m as { role?: string }).role === "assistant";
}

function textOf(m: AgentMessage): string {
  if (!isAssistant(m)) return "";
  let out = "";
  for (const c of m.content) if (c.type === "text") out += c.text;
  return out;
}

/** Patterns of credentials that must never reach a chat, whatever an upstream error says. */
const SECRET_PATTERNS = [
  /\b\d{6,12}:[A-Za-z0-9_-]{30,}\b/g, // Telegram bot token
  /\bxox[abposr]-[A-Za-z0-9-]+/g, // Slack tokens
  /\bxapp-[A-Za-z0-9-]+/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI / Anthropic style keys
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google API keys
  /\b(Bearer|Bot)\s+[A-Za-z0-9._~+/-]{20,}=*/g,
];

/** The first meaningful line of an error, without stack frames or secrets, at most 200 characters. */
export function briefError(message: string): string {
  const line =
    message
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l && !/^at\s/.test(l)) ?? "Something went wrong.";
  let text = line;
  for (const p of SECRET_PATTERNS) text = text.replace(p, "[redacted]");
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}
