/**
 * An in-memory `ExtensionHost` for tests: records every chat operation, persisted entry, setting
 * and runtime call, and answers `getSettings`/`status` from its own fields.
 */
import type { ThinkingLevel } from "../../../src/agent/llm/types.js";
import type { CustomMessage } from "../../../src/agent/session/messages.js";
import type {
  CompactOutcome,
  ControlOutcome,
  DeliverAs,
  DeliveryMode,
  ExtensionHost,
  ThreadSettings,
  ThreadStatusView,
  ThreadView,
} from "../../../src/extensions/types.js";

export interface RecordedMessage {
  ref: string;
  /** Every text the message had, the posted one first. */
  versions: string[];
  reactions: string[];
}

export class MemoryHost implements ExtensionHost {
  readonly messages: RecordedMessage[] = [];
  readonly replies: string[] = [];
  readonly entries: { customType: string; data: unknown }[] = [];
  readonly sent: { message: CustomMessage; deliverAs: DeliverAs }[] = [];
  readonly delivered: { text: string; mode: "steer" | "followUp" }[] = [];
  readonly compactions: (string | undefined)[] = [];
  readonly calls: string[] = [];
  settings: ThreadSettings = { model: undefined, thinkingLevel: undefined };
  running = false;
  queueMode: DeliveryMode = "steer";
  inboxDepth = 0;
  contextTokens: number | undefined = 12_000;
  session: ThreadStatusView["session"] = undefined;
  usage = { input: 1200, output: 340, cacheRead: 0, cacheWrite: 0, cost: 0.0123 };
  compactOutcome: CompactOutcome = { compacted: true, tokensBefore: 50_000, tokensAfter: 8_000 };
  /** Set to make every runtime method reject (a backend that is down); chat methods keep working. */
  failing: Error | undefined;
  /** Set to make the chat methods (post, edit, react, reply) reject. */
  chatFailing: Error | undefined;
  private seq = 0;

  constructor(
    readonly thread: ThreadView = {
      threadKey: "test:T1",
      platform: "slack",
      user: { id: "U1", name: "alice" },
    },
  ) {}

  /** The same host state seen by another user (a command issued by someone else). */
  as(user: { id: string; name?: string }): MemoryHost {
    const view = Object.create(this) as MemoryHost;
    Object.defineProperty(view, "thread", { value: { ...this.thread, user } });
    return view;
  }

  message(ref: string): RecordedMessage | undefined {
    return this.messages.find((m) => m.ref === ref);
  }

  /** The current text of the last posted message. */
  lastText(): string {
    return this.messages.at(-1)?.versions.at(-1) ?? "";
  }

  lastReply(): string {
    return this.replies.at(-1) ?? "";
  }

  private check(call: string): void {
    this.calls.push(call);
    const chat = ["post", "edit", "react", "reply"].includes(call);
    const failure = chat ? this.chatFailing : this.failing;
    if (failure) throw failure;
  }

  async post(text: string): Promise<string> {
    this.check("post");
    const ref = `${this.thread.threadKey}:m${++this.seq}`;
    this.messages.push({ ref, versions: [text], reactions: [] });
    return ref;
  }

  async edit(ref: string, text: string): Promise<void> {
    this.check("edit");
    const m = this.message(ref);
    if (!m) throw new Error(`no message ${ref}`);
    m.versions.push(text);
  }

  async react(ref: string, emoji: string): Promise<void> {
    this.check("react");
    this.message(ref)?.reactions.push(emoji);
  }

  async reply(text: string): Promise<void> {
    this.check("reply");
    this.replies.push(text);
  }

  async sendMessage(message: CustomMessage, deliverAs: DeliverAs): Promise<void> {
    this.check("sendMessage");
    this.sent.push({ message, deliverAs });
  }

  async appendEntry(customType: string, data: unknown): Promise<void> {
    this.check("appendEntry");
    this.entries.push({ customType, data });
  }

  async getSettings(): Promise<ThreadSettings> {
    this.check("getSettings");
    return { ...this.settings };
  }

  async setModel(ref: string): Promise<void> {
    this.check("setModel");
    this.settings.model = ref;
  }

  async setThinkingLevel(level: ThinkingLevel): Promise<void> {
    this.check("setThinkingLevel");
    this.settings.thinkingLevel = level;
  }

  async stop(): Promise<ControlOutcome> {
    this.check("stop");
    const wasRunning = this.running;
    const discarded = this.inboxDepth;
    this.running = false;
    this.inboxDepth = 0;
    return { wasRunning, discarded };
  }

  async newSession(): Promise<ControlOutcome> {
    this.check("newSession");
    const wasRunning = this.running;
    this.running = false;
    return { wasRunning, discarded: 0 };
  }

  async deliver(text: string, mode: "steer" | "followUp"): Promise<void> {
    this.check("deliver");
    this.delivered.push({ text, mode });
  }

  async compact(instructions?: string): Promise<CompactOutcome> {
    this.check("compact");
    this.compactions.push(instructions);
    return this.compactOutcome;
  }

  async status(): Promise<ThreadStatusView> {
    this.check("status");
    const view: ThreadStatusView = {
      running: this.running,
      queueMode: this.queueMode,
      inboxDepth: this.inboxDepth,
      usage: { ...this.usage },
    };
    if (this.contextTokens !== undefined) view.contextTokens = this.contextTokens;
    if (this.session) view.session = this.session;
    return view;
  }
}
