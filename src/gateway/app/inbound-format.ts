/**
 * From chat messages to the user message the model reads (the runtime's `format`), and back from
 * that user message to the chat message it came from (so an answer can reply to it).
 *
 * What the model reads:
 * - In channels and groups several people share one thread, so each message starts with its
 *   author's display name: `Alice: the deploy failed`. A collect group of several messages gives
 *   each its own line(s). Direct messages stay as typed. The name is plain text inside the user
 *   message's content, so a session exported to pi reads the same (pi has no author field).
 * - Attachments follow their message's text, one line each naming where the file is in the
 *   workspace (`[file: report.pdf (application/pdf, 2 MB) at attachments/…/report.pdf]`) or why it
 *   was not taken; pictures the model can see come after the text as image parts.
 * - Messages that carry thread context (a first mention inside an existing thread) are preceded by
 *   the context block (`contextBlock`), whose lines use the same `Name: text` form.
 */
import type { InboundMessage, MessageRef } from "../../adapters/types.js";
import type { ImageContent, TextContent, UserMessage } from "../../agent/llm/types.js";
import type { AgentMessage } from "../../agent/types.js";
import { attachmentContent } from "../../queue/attachments/content.js";
import type { InboundFormatter } from "../../queue/types.js";

/** One earlier message of the thread, as the model is shown it. */
export interface ContextMessage {
  author: string;
  text: string;
  fromBot: boolean;
}

/** An inbound message carrying the thread's earlier messages. */
export type InboundWithContext = InboundMessage & { threadContext?: ContextMessage[] };

const HEADER = "[Earlier messages in this thread, before you were added to it — context only]";
const FOOTER = "[End of earlier messages. The message to answer:]";

/** The text block that shows `context` to the model. */
function contextBlock(context: readonly ContextMessage[]): string {
  const lines = context.map((c) => `${c.author}: ${c.text}`);
  return [HEADER, ...lines, FOOTER].join("\n");
}

/** Longest author name put in front of a message. */
const MAX_NAME_CHARS = 64;

/** The display name of a message's author, on one line: the platform's name, else its user id. */
export function authorName(user: { id: string; name?: string }): string {
  const name = (user.name ?? "").replace(/\s+/g, " ").trim() || user.id;
  return name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS - 1)}…` : name;
}

/** One chat message as the model reads it: author first in shared threads, its files named. */
function messageText(m: InboundMessage, images: ImageContent[]): string {
  const files = attachmentContent(m);
  images.push(...files.images);
  const body = files.lines.length > 0 ? `${m.text}\n${files.lines.join("\n")}`.trim() : m.text;
  return m.isDirect ? body : `${authorName(m.user)}: ${body}`;
}

/** The runtime's formatter: messages with their authors, after any thread context they carry. */
export const chatFormatter: InboundFormatter = (messages: InboundMessage[]): UserMessage => {
  const images: ImageContent[] = [];
  const text = messages.map((m) => messageText(m, images)).join("\n\n");
  const context = messages.flatMap((m) => (m as InboundWithContext).threadContext ?? []);
  const content: (TextContent | ImageContent)[] = [
    { type: "text", text: context.length > 0 ? `${contextBlock(context)}\n\n${text}` : text },
    ...images,
  ];
  return { role: "user", content, timestamp: messages.at(-1)?.timestamp ?? Date.now() };
};

/**
 * Remembers which chat message each formatted user message came from, by the message object
 * itself: the runtime hands the formatter's result to the agent unchanged, and the agent's events
 * carry that same object, so the renderer can look it up (`replyTargetOf`). Weakly held: nothing
 * outlives the messages. Formatting and rendering of a run happen in the same (worker) process.
 */
export class ReplyTargets {
  private readonly origins = new WeakMap<object, MessageRef>();

  constructor(private readonly inner: InboundFormatter = chatFormatter) {}

  /** The formatter to give the runtime. */
  readonly format: InboundFormatter = (messages) => {
    const message = this.inner(messages);
    const origin = messages.findLast((m) => m.messageId !== "")?.messageId;
    if (origin) this.origins.set(message, origin);
    return message;
  };

  /** The chat message a user message of a run came from (the newest, for a merged group). */
  readonly replyTargetOf = (message: AgentMessage): MessageRef | undefined => this.origins.get(message);
}
