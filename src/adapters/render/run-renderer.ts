/**
 * Shows one agent run in a chat thread, one answer at a time: each answer is a status message with
 * a line per tool call and its text streamed into its own message(s) by throttled edits. When the
 * run takes a new user message (a steer or a follow-up) after an answer has shown something, that
 * answer is finished as it stands and the next output starts a new answer, posted after the earlier
 * one is complete and as a reply to the user's message where the platform shows replies. A typing
 * indicator shows while an answer has nothing on screen yet; a failure is shown once, briefly.
 * Platform-neutral: everything it knows about the platform comes from the adapter's capabilities.
 *
 * It fits the queue worker's `RunSink` shape (`onEvent`, `onNotice`, `close`). `onEvent` never
 * throws and never blocks; platform failures are logged, never thrown into the agent.
 */

import { type Clock, systemClock } from "../../agent/clock.js";
import { redactSecrets } from "../../agent/llm/redact.js";
import { type StructuredLogger, silentLogger } from "../../agent/logger.js";
import type { AgentEvent, AgentMessage } from "../../agent/types.js";
import type { ChannelAdapter, MessageRef, RateLimiter, RenderLog } from "../types.js";
import { Answer, type AnswerState } from "./answer.js";
import { LiveMessage } from "./live-message.js";
import { owedMessage, type RenderSnapshot } from "./owed.js";
import { unlimited } from "./rate-limiter.js";
import { TypingIndicator } from "./typing.js";

export interface RunRendererOptions {
  adapter: ChannelAdapter;
  threadKey: string;
  clock?: Clock;
  /** Shared per-channel budget; use one limiter for every renderer of a process (or the Redis one). */
  limiter?: RateLimiter;
  logger?: StructuredLogger;
  /** Show the tool status message (default true). */
  showTools?: boolean;
  /** Override the edit interval (default: from the adapter). */
  editIntervalMs?: number;
  /**
   * The chat message a user message of the run came from (the one to reply to), when known. The
   * agent events carry the very message objects the runtime's formatter built, so a map kept by the
   * formatter answers this.
   */
  replyTargetOf?: (message: AgentMessage) => MessageRef | undefined;
  /**
   * The run's render-journal log (given by the lease holder): what the run has shown and still owes
   * the chat is recorded there as it goes (each new message id, each reply that ended, each tool
   * line, the final texts), and cleared once the chat shows the final state.
   */
  log?: RenderLog;
  /**
   * After this long without a word from the model (no first byte yet, or none since the last), the
   * answer shows "⏳ still waiting for the model… (N s)" under its text, refreshed as the silence
   * lasts and removed when the model speaks. Absent or 0: never.
   */
  waitNoticeMs?: number;
  /**
   * A reply that is exactly this text (trimmed) is not shown: nothing to post (a scheduled prompt's
   * "nothing to report" answer). While the streamed text could still become it, nothing is shown
   * either, so the marker never flashes up in the chat. Absent or empty: every reply is shown.
   */
  quietMarker?: string;
}

/** How a run ended, as far as the caller knows (the events usually say it already). */
export interface RunOutcome {
  /** A failure to show (once, first line only). */
  error?: string;
  aborted?: boolean;
}

/** Longest error text shown in chat. */
const MAX_ERROR_CHARS = 200;

export class RunRenderer {
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly log: StructuredLogger;
  private readonly typing: TypingIndicator;
  private readonly answers: Answer[] = [];
  private error: string | undefined;
  private aborted = false;
  private finishing: Promise<void> | undefined;
  private notices = 0;
  /** Assistant replies that ended, and how many of them the session is known to hold. */
  private ended = 0;
  private savedUpTo = 0;
  /** Notices and the error note: messages of the run outside its answers, in posting order. */
  private readonly extras: { message: LiveMessage; text: string }[] = [];
  /** When the model last spoke, while the run waits on it (undefined: it does not, e.g. a tool runs). */
  private heardAt: number | undefined;
  /** Stops the silence watch (`waitNoticeMs`) when the run is over. */
  private silence: AbortController | undefined;

  constructor(private readonly o: RunRendererOptions) {
    this.clock = o.clock ?? systemClock;
    this.limiter = o.limiter ?? unlimited;
    this.log = o.logger ?? silentLogger;
    this.typing = new TypingIndicator(o.adapter, o.threadKey, this.clock, this.log);
    this.answers.push(this.newAnswer(undefined));
  }

  /** Feed one agent event. Never throws. */
  onEvent(event: AgentEvent): void {
    try {
      this.handle(event);
    } catch (err) {
      this.log.error({ err, type: event.type }, "renderer failed");
    }
  }

  /** Post a short separate message into the thread (e.g. "inbox full"). Resolves when it is sent or failed. */
  async onNotice(text: string): Promise<void> {
    this.notices++;
    const note = this.extra(text);
    await this.record();
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
    return this.answers.some((a) => a.busy) || this.notices > 0;
  }

  /** What each answer of the run has shown and ends with, oldest first. */
  state(): AnswerState[] {
    return this.answers.map((a) => a.state());
  }

  /** Platform references of the reply messages of every answer, in order. */
  get replyRefs(): string[] {
    return this.answers.flatMap((a) => a.state().replyRefs);
  }

  /** Platform reference of the first answer's status message, once posted. */
  get statusRef(): string | undefined {
    return this.answers.map((a) => a.state().statusRef).find((r) => r !== undefined);
  }

  /**
   * What the run owes the chat if it dies now (see `Answer.owed`), in posting order. Plain data, for
   * the render journal.
   */
  snapshot(): RenderSnapshot {
    const now = this.clock.now();
    return {
      v: 1,
      messages: [
        ...this.answers.flatMap((a) => a.owed(now)),
        ...this.extras.map((e) => owedMessage(e.message.refs, e.text, undefined, e.message.posting)),
      ],
    };
  }

  /**
   * Resolves once the session holds every assistant reply that ended so far (at once when none
   * ended since the last check, or without a journal): what a request is about to show in full is
   * then in the session, so a crash cannot leave a shown answer the session lacks. Never rejects.
   */
  private async sessionHoldsEnded(): Promise<void> {
    const log = this.o.log;
    if (!log) return;
    while (this.savedUpTo < this.ended) {
      const upTo = this.ended;
      await log.saved();
      this.savedUpTo = Math.max(this.savedUpTo, upTo);
    }
  }

  /** Records the snapshot in the render journal (no-op without one). Never rejects. */
  private record(): Promise<void> {
    return this.o.log?.owe(this.snapshot()) ?? Promise.resolve();
  }

  /** A message of the run outside its answers (a notice, the error note). */
  private extra(text: string): LiveMessage {
    const message = this.live(undefined);
    this.extras.push({ message, text });
    return message;
  }

  private get current(): Answer {
    return this.answers[this.answers.length - 1] as Answer;
  }

  /**
   * A live message of the run. `owner` is the answer it belongs to (none for notices): its first
   * post waits for `after` (the earlier answer, complete) and ends the typing indicator.
   */
  private live(
    replyTo: MessageRef | undefined,
    owner?: () => Answer | undefined,
    after?: Promise<unknown>,
  ): LiveMessage {
    return new LiveMessage({
      adapter: this.o.adapter,
      threadKey: this.o.threadKey,
      clock: this.clock,
      limiter: this.limiter,
      logger: this.log,
      afterChange: () => this.record(),
      onPosted: (key, ref) => this.o.log?.posted(key, ref),
      beforeSend: () => this.sessionHoldsEnded(),
      ...(this.o.log ? { mayContinue: this.o.log.held } : {}),
      ...(this.o.editIntervalMs !== undefined ? { editIntervalMs: this.o.editIntervalMs } : {}),
      ...(replyTo ? { replyTo } : {}),
      ...(owner
        ? {
            beforePost: async () => {
              await after?.catch(() => {});
              const answer = owner();
              if (!answer) return;
              answer.posted = true;
              if (answer === this.current) await this.typing.stop();
            },
          }
        : {}),
    });
  }

  private newAnswer(replyTo: MessageRef | undefined): Answer {
    const previous = this.answers.at(-1);
    const after = previous ? previous.finish(this.clock.now(), this.aborted) : undefined;
    let self: Answer | undefined;
    const answer = new Answer(replyTo, (to) => this.live(to, () => self, after), this.o.showTools !== false);
    self = answer;
    return answer;
  }

  /** A user message the run took: a new answer starts once the current one has shown something. */
  private userMessage(message: AgentMessage): void {
    if (!this.current.shown) return;
    const replyTo = this.o.replyTargetOf?.(message);
    this.answers.push(this.newAnswer(replyTo));
  }

  private handle(event: AgentEvent): void {
    if (this.finishing) return;
    if (event.type === "message_start" && event.message.role === "user") this.userMessage(event.message);
    const answer = this.current;
    if (event.type !== "agent_end" && !answer.posted) this.typing.start();
    switch (event.type) {
      case "turn_start":
        this.waitOnModel(true);
        return;
      case "message_start":
        if (isAssistant(event.message)) this.waitOnModel(true);
        return;
      case "message_update":
        this.waitOnModel(true);
        answer.streaming(this.shownText(textOf(event.message)));
        return;
      case "message_end": {
        const m = event.message;
        if (!isAssistant(m)) return;
        this.waitOnModel(false);
        answer.messageEnded(this.shownText(textOf(m)), m.timestamp);
        this.ended++;
        // Queued before the runtime saves this reply in the session, so a session that holds it
        // implies a journal that owes it.
        void this.record();
        if (m.stopReason === "error" && m.errorMessage) this.error ??= m.errorMessage;
        if (m.stopReason === "error" && !m.errorMessage) this.error ??= "The model request failed.";
        if (m.stopReason === "aborted") this.aborted = true;
        return;
      }
      case "tool_execution_start":
        this.waitOnModel(false);
        answer.toolStarted({
          toolCallId: event.toolCallId,
          name: event.toolName,
          args: event.args,
          startedAt: this.clock.now(),
        });
        void this.record();
        return;
      case "tool_execution_end":
        answer.toolEnded(event.toolCallId, this.clock.now(), event.isError);
        void this.record();
        return;
      case "agent_end":
        void this.finish();
        return;
      default:
        return;
    }
  }

  /** `text` as the chat shows it: "" while it is (or could still become) the quiet marker. */
  private shownText(text: string): string {
    const marker = this.o.quietMarker;
    return marker?.startsWith(text.trim()) ? "" : text;
  }

  private finish(): Promise<void> {
    this.silence?.abort();
    this.finishing ??= this.doFinish();
    return this.finishing;
  }

  /**
   * The model spoke, or the run starts waiting on it (`true`), or it stops waiting (`false`: the
   * model's message ended, a tool runs). Cheap, called on every delta: the watch reads `heardAt`.
   */
  private waitOnModel(waiting: boolean): void {
    this.heardAt = waiting ? this.clock.now() : undefined;
    this.current.waiting(undefined);
    const ms = this.o.waitNoticeMs ?? 0;
    if (waiting && ms > 0 && !this.silence) {
      this.silence = new AbortController();
      void this.watchSilence(ms, this.silence.signal);
    }
  }

  /** Every `ms` of silence from the model, the current answer shows how long it has been waiting. */
  private async watchSilence(ms: number, stop: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const heard = this.heardAt;
        const now = this.clock.now();
        await this.clock.sleep(heard === undefined ? ms : Math.max(1, ms - ((now - heard) % ms)), stop);
        const since = this.heardAt;
        const quiet = since === undefined ? 0 : this.clock.now() - since;
        if (quiet >= ms)
          this.current.waiting(`⏳ still waiting for the model… (${Math.round(quiet / 1000)} s)`);
      }
    } catch {
      // Stopped: the run is over.
    }
  }

  /**
   * The final state: every answer's final text goes out, the final snapshot is recorded as owed
   * (before the platform confirms it), the error note follows, and once the platform confirmed all
   * of it nothing is owed any more. What failed stays owed for the thread's next holder.
   */
  private async doFinish(): Promise<void> {
    await this.typing.close();
    const now = this.clock.now();
    const finishing = Promise.all(this.answers.map((a) => a.finish(now, this.aborted)));
    const errorText = this.error ? `⚠️ ${briefError(this.error)}` : undefined;
    const note = errorText ? this.extra(errorText) : undefined;
    await this.record();
    const results = (await finishing).flat();
    if (note && errorText) results.push(await note.finish(errorText));
    if (results.includes("failed")) {
      this.log.warn({ threadKey: this.o.threadKey }, "final reply not fully delivered");
      return;
    }
    await this.o.log?.done();
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
  logger?: StructuredLogger;
  showTools?: boolean;
  replyTargetOf?: (message: AgentMessage) => MessageRef | undefined;
}): (threadKey: string, runId: string) => RunRenderer {
  return (threadKey) =>
    new RunRenderer({
      adapter: typeof opts.adapter === "function" ? opts.adapter(threadKey) : opts.adapter,
      threadKey,
      ...(opts.limiter ? { limiter: opts.limiter } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.showTools !== undefined ? { showTools: opts.showTools } : {}),
      ...(opts.replyTargetOf ? { replyTargetOf: opts.replyTargetOf } : {}),
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

/** The first meaningful line of an error, without stack frames or secrets, at most 200 characters. */
export function briefError(message: string): string {
  const line =
    message
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l && !/^at\s/.test(l)) ?? "Something went wrong.";
  const text = redactSecrets(line);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}
