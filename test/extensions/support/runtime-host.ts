/**
 * An `ExtensionHost` over the queue runtime (`Runtime` + `SessionStore`), as the gateway wiring
 * would build it, with chat operations recorded in memory instead of a platform adapter. It is the
 * reference for the real host: settings and control go through `runtime.control`, text through
 * `runtime.deliver`, status from `runtime.status` and the thread's metadata.
 */
import type { InboundMessage } from "../../../src/adapters/types.js";
import type { ThinkingLevel } from "../../../src/agent/llm/types.js";
import type { CustomMessage } from "../../../src/agent/session/messages.js";
import type {
  CompactOutcome,
  ControlOutcome,
  DeliverAs,
  ExtensionHost,
  ThreadSettings,
  ThreadStatusView,
  ThreadView,
} from "../../../src/extensions/types.js";
import type { SessionStore } from "../../../src/queue/store/types.js";
import type { Runtime } from "../../../src/queue/types.js";

let seq = 0;

export class RuntimeHost implements ExtensionHost {
  readonly replies: string[] = [];
  readonly posts: { ref: string; text: string }[] = [];
  readonly entries: { customType: string; data: unknown }[] = [];

  constructor(
    readonly thread: ThreadView,
    private readonly runtime: Runtime,
    private readonly store: SessionStore,
    private readonly defaultModel: string,
  ) {}

  async post(text: string): Promise<string> {
    const ref = `${this.thread.threadKey}:bot:${++seq}`;
    this.posts.push({ ref, text });
    return ref;
  }

  async edit(ref: string, text: string): Promise<void> {
    this.posts.push({ ref, text });
  }

  async react(): Promise<void> {}

  async reply(text: string): Promise<void> {
    this.replies.push(text);
  }

  async sendMessage(message: CustomMessage, deliverAs: DeliverAs): Promise<void> {
    const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
    await this.deliver(text, deliverAs === "steer" ? "steer" : "followUp");
  }

  async appendEntry(customType: string, data: unknown): Promise<void> {
    this.entries.push({ customType, data });
  }

  async getSettings(): Promise<ThreadSettings> {
    const meta = await this.store.getThreadMeta(this.thread.threadKey);
    return {
      model: meta?.model ?? this.defaultModel,
      thinkingLevel: meta?.thinkingLevel as ThinkingLevel | undefined,
    };
  }

  async setModel(ref: string): Promise<void> {
    await this.runtime.control(this.thread.threadKey, { type: "setModel", model: ref });
  }

  async setThinkingLevel(level: ThinkingLevel): Promise<void> {
    await this.runtime.control(this.thread.threadKey, { type: "setThinkingLevel", level });
  }

  async stop(): Promise<ControlOutcome> {
    const r = await this.runtime.control(this.thread.threadKey, { type: "stop" });
    return { wasRunning: r.wasRunning, discarded: r.discarded.length };
  }

  async newSession(): Promise<ControlOutcome> {
    const r = await this.runtime.control(this.thread.threadKey, { type: "newSession" });
    return { wasRunning: r.wasRunning, discarded: r.discarded.length };
  }

  async deliver(text: string, mode: "steer" | "followUp"): Promise<void> {
    await this.runtime.deliver(inboundFor(this.thread, text), mode);
  }

  async compact(): Promise<CompactOutcome> {
    return { compacted: false, reason: "this runtime has no compaction command yet" };
  }

  async status(): Promise<ThreadStatusView> {
    const s = await this.runtime.status(this.thread.threadKey);
    const u = s.meta?.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
    return { running: s.active, queueMode: "steer", inboxDepth: s.inboxDepth, usage: { ...u } };
  }
}

/** A chat message in `thread` from its user. */
export function inboundFor(thread: ThreadView, text: string): InboundMessage {
  seq++;
  return {
    platform: "web",
    threadKey: thread.threadKey,
    eventId: `web:event:${thread.threadKey}:${seq}`,
    messageId: `web:${thread.threadKey}:${seq}`,
    channelId: thread.channelId ?? "web",
    user: { id: thread.user?.id ?? "u1", name: thread.user?.name ?? "Ada", isBot: false },
    text,
    attachments: [],
    mentioned: true,
    isDirect: true,
    timestamp: Date.now(),
  };
}
