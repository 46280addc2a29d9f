/**
 * One assistant answer of a run, as chat shows it: the text of the assistant messages that answer
 * the same user message(s), streamed into its own chat message(s), and the status message with a
 * line per tool call those messages made. A run that takes a new user message (a steer or a
 * follow-up) finishes its answer and starts the next one, so two answers never share a message.
 */
import type { MessageRef } from "../types.js";
import type { LiveMessage, LiveMessageOutcome } from "./live-message.js";
import { type OwedMessage, owedMessage } from "./owed.js";
import { formatToolStatus, type ToolLine } from "./tool-status.js";

/**
 * What an answer has shown and must end with, in plain data: the platform references of its
 * messages and their final texts. Serializable, so what a run still owes the chat can be recorded.
 */
export interface AnswerState {
  /** The user message this answer replies to (undefined: the thread's default anchor). */
  replyTo?: MessageRef;
  /** The answer's text as it stands (final once `finished`). */
  text: string;
  /** Platform references of the text's messages, in order. */
  replyRefs: MessageRef[];
  /** The tool status lines as they stand (empty: no tool was called). */
  status: string;
  statusRef?: MessageRef;
  finished: boolean;
}

/** Builds the live messages of an answer (the renderer owns throttling, order and typing). */
export type LiveMessageMaker = (replyTo: MessageRef | undefined) => LiveMessage;

export class Answer {
  /** One of its messages was posted (the typing indicator has ended for it). */
  posted = false;
  private readonly tools: ToolLine[] = [];
  private readonly texts: string[] = [];
  /** The assistant message whose text ended last: its time stamp (how the session knows it) and index in `texts`. */
  private lastEnded: { timestamp: number; index: number } | undefined;
  private current = "";
  /** A line shown after the text while the model is silent; never part of the answer's text. */
  private note: string | undefined;
  private readonly reply: LiveMessage;
  private status: LiveMessage | undefined;
  private done: Promise<LiveMessageOutcome[]> | undefined;

  constructor(
    readonly replyTo: MessageRef | undefined,
    private readonly make: LiveMessageMaker,
    private readonly showTools: boolean,
  ) {
    this.reply = make(replyTo);
  }

  /** Something of this answer is (or is about to be) on screen: text or a tool line. */
  get shown(): boolean {
    return this.text().trim() !== "" || this.tools.length > 0;
  }

  get busy(): boolean {
    return this.reply.busy || (this.status?.busy ?? false);
  }

  /** Resolves once the final state is on the platform (or failed for good); undefined before `finish`. */
  get finished(): Promise<LiveMessageOutcome[]> | undefined {
    return this.done;
  }

  /** The text of the assistant message being streamed (the whole text so far). */
  streaming(text: string): void {
    this.current = text;
    this.note = undefined;
    this.reply.set(this.text());
  }

  /** An assistant message of this answer ended with `text`. */
  messageEnded(text: string, timestamp?: number): void {
    if (text) {
      this.texts.push(text);
      if (timestamp !== undefined) this.lastEnded = { timestamp, index: this.texts.length - 1 };
    }
    this.current = "";
    this.note = undefined;
    this.reply.set(this.text());
  }

  /**
   * Shows `note` under the text while the model is silent ("still waiting for the model…"), or
   * removes it (undefined). The note is never part of the answer's text: not owed, not final.
   */
  waiting(note: string | undefined): void {
    if (this.done || note === this.note) return;
    this.note = note;
    const text = this.text();
    this.reply.set(note ? (text ? `${text}\n\n${note}` : note) : text);
  }

  toolStarted(line: ToolLine): void {
    this.tools.push(line);
    this.showStatus();
  }

  toolEnded(toolCallId: string, at: number, isError: boolean): void {
    const line = this.tools.find((t) => t.toolCallId === toolCallId && t.endedAt === undefined);
    if (line) {
      line.endedAt = at;
      line.isError = isError;
    }
    this.showStatus();
  }

  /**
   * The answer is complete as it stands: tools still running are marked (cancelled when the run was
   * stopped, failed otherwise) and the final texts are sent. Idempotent.
   */
  finish(at: number, aborted: boolean): Promise<LiveMessageOutcome[]> {
    if (this.done) return this.done;
    if (this.current) {
      this.texts.push(this.current);
      this.current = "";
    }
    for (const t of this.tools) {
      if (t.endedAt !== undefined) continue;
      t.endedAt = at;
      if (aborted) t.cancelled = true;
      else t.isError = true;
    }
    const outcomes: Promise<LiveMessageOutcome>[] = [];
    if (this.status) outcomes.push(this.status.finish(formatToolStatus(this.tools)));
    outcomes.push(this.reply.finish(this.text()));
    this.done = Promise.all(outcomes);
    return this.done;
  }

  state(): AnswerState {
    const statusRef = this.status?.refs[0];
    return {
      ...(this.replyTo ? { replyTo: this.replyTo } : {}),
      text: this.text(),
      replyRefs: this.reply.refs,
      status: formatToolStatus(this.tools),
      ...(statusRef ? { statusRef } : {}),
      finished: this.done !== undefined,
    };
  }

  /**
   * What this answer owes the chat if its run dies now: the status message with every tool still
   * running marked failed, and the reply with the text of the assistant messages that ended (the
   * session holds them; one still streaming does not count), or the final text once `finish`ed.
   * Messages with nothing to show, nothing sent and no post under way are left out.
   */
  owed(at: number): OwedMessage[] {
    const out: OwedMessage[] = [];
    if (this.status) {
      const lines = this.tools.map((t) =>
        t.endedAt === undefined ? { ...t, endedAt: at, isError: true } : t,
      );
      out.push(owedMessage(this.status.refs, formatToolStatus(lines), this.replyTo, this.status.posting));
    }
    const join = (texts: string[]) => texts.filter((t) => t.trim() !== "").join("\n\n");
    const reply = owedMessage(
      this.reply.refs,
      this.done ? this.text() : join(this.texts),
      this.replyTo,
      this.reply.posting,
    );
    const last = this.lastEnded;
    if (last)
      // The session saves a reply just after this is recorded: a worker that dies in between leaves
      // a session without it, and the reply is answered again; then its text must not stay.
      reply.ifUnsaved = {
        timestamp: last.timestamp,
        text: join(this.texts.filter((_, i) => i !== last.index)),
      };
    out.push(reply);
    // A post about to go out counts as sent: recovery finds it (or finds that it never arrived).
    return out.filter((m) => m.refs.length > 0 || m.text.trim() !== "" || m.posting !== undefined);
  }

  private text(): string {
    return [...this.texts, this.current].filter((t) => t.trim() !== "").join("\n\n");
  }

  private showStatus(): void {
    if (!this.showTools) return;
    // The status message replies to the same user message as the text (it belongs to this answer).
    this.status ??= this.make(this.replyTo);
    this.status.set(formatToolStatus(this.tools));
  }
}
