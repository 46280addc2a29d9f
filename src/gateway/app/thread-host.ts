/**
 * The `ExtensionHost` of one thread, over the runtime, the session store and the thread's channel
 * adapter. The gateway binds one per command or reaction (its `reply` answers the invoker, through
 * the platform's acknowledgement where it has one); the worker binds one per thread agent (its
 * `thread.user` follows whoever triggered the current run).
 */
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { journaledMessage } from "../../adapters/render/durable-message.js";
import { journaledUpload } from "../../adapters/render/durable-upload.js";
import type { ChannelAdapter, InboundMessage, Platform, RenderLog } from "../../adapters/types.js";
import type { ThinkingLevel } from "../../agent/llm/types.js";
import { newEntryId } from "../../agent/session/entries.js";
import type { CustomMessage } from "../../agent/session/messages.js";
import type { SessionEntry } from "../../agent/session/types.js";
import type {
  CompactOutcome,
  ControlOutcome,
  DeliverAs,
  DurableMessage,
  ExtensionHost,
  HostPostOptions,
  SentFile,
  ThreadSettings,
  ThreadStatusView,
  ThreadUser,
  ThreadView,
} from "../../extensions/types.js";
import { sniffType } from "../../queue/attachments/sniff.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { Runtime } from "../../queue/types.js";
import type { Logger } from "../log.js";

/** What every thread host of a process shares. */
export interface ThreadHostDeps {
  runtime: Runtime;
  store: SessionStore;
  /** The adapter of the thread's platform (undefined: the platform is not enabled here). */
  adapterOf(platform: Platform): ChannelAdapter | undefined;
  /** `provider/id` of the deployment's default model, when there is one. */
  defaultModel(): string | undefined;
  /** Where the store keeps a session (a Redis key, a file path), for `/status`. */
  sessionLocation?(threadKey: string, sessionId: string): string;
  /** The largest file the agent may send into a thread of `platform` (0: none; absent: none). */
  maxUploadBytes?(platform: Platform): number;
  logger: Logger;
}

export interface ThreadHostOptions {
  threadKey: string;
  platform: Platform;
  channelId?: string;
  isDirect?: boolean;
  /** Where settings made here apply in a channel (see `ThreadView.settingsScope`); undefined in DMs. */
  settingsScope?: "thread" | "channel";
  /** Who issued the command, or who triggered the current run (read at every use). */
  user(): ThreadUser | undefined;
  /** How to answer the invoker of a command; default: a post into the thread. */
  reply?: (text: string) => Promise<void>;
  /** The runtime's fenced append of the agent's holder (worker side); default: an unfenced append. */
  appendEntry?: (customType: string, data?: unknown) => Promise<void>;
  /**
   * The render-journal log of the tenure driving the thread's agent (worker side, see
   * `AgentFactoryContext.renderLog`); given, the host offers `durableMessage`.
   */
  renderLog?: (id: string) => RenderLog | undefined;
}

export class ThreadHost implements ExtensionHost {
  /** Present on the worker side when the runtime keeps a render journal (see `ExtensionHost`). */
  readonly durableMessage?: (id: string) => DurableMessage | undefined;

  constructor(
    private readonly deps: ThreadHostDeps,
    private readonly o: ThreadHostOptions,
  ) {
    const logOf = o.renderLog;
    if (logOf)
      this.durableMessage = (id) => {
        const log = logOf(id);
        return log ? journaledMessage(this.adapter(), this.o.threadKey, log) : undefined;
      };
  }

  /** The largest file `sendFile` posts here: the channel's limit, 0 where it takes no files. */
  maxFileBytes(): number {
    const adapter = this.deps.adapterOf(this.o.platform);
    if (!adapter?.uploadFile) return 0;
    return this.deps.maxUploadBytes?.(this.o.platform) ?? 0;
  }

  /**
   * Posts a workspace file into the thread (`send_file`), its type sniffed from the bytes; through
   * the render journal when the tenure driving the agent keeps one (worker side), so the next
   * holder finishes an upload this worker began.
   */
  async sendFile(
    file: { path: string; name: string },
    options: { caption?: string } = {},
  ): Promise<SentFile> {
    const adapter = this.adapter();
    const max = this.maxFileBytes();
    const { size } = await stat(file.path);
    if (size > max) throw new Error(`${file.name} is larger than the ${max} bytes this channel takes.`);
    const { mimeType } = await sniffType(file.path, file.name, size);
    const outgoing = { path: file.path, name: file.name, sizeBytes: size, mimeType };
    const caption = options.caption ? { caption: options.caption } : {};
    const log = this.o.renderLog?.(`file:${randomUUID()}`);
    const upload = adapter.uploadFile?.bind(adapter);
    if (!upload) throw new Error(`The ${this.o.platform} channel cannot post files.`);
    const ref = log
      ? await journaledUpload(adapter, this.o.threadKey, log, outgoing, caption)
      : await upload(this.o.threadKey, outgoing, caption);
    return { ref, sizeBytes: size, mimeType };
  }

  get thread(): ThreadView {
    const user = this.o.user();
    return {
      threadKey: this.o.threadKey,
      platform: this.o.platform,
      ...(this.o.channelId !== undefined ? { channelId: this.o.channelId } : {}),
      ...(this.o.isDirect !== undefined ? { isDirect: this.o.isDirect } : {}),
      ...(this.o.settingsScope ? { settingsScope: this.o.settingsScope } : {}),
      ...(user ? { user } : {}),
    };
  }

  private adapter(): ChannelAdapter {
    const adapter = this.deps.adapterOf(this.o.platform);
    if (!adapter)
      throw new Error(
        `The ${this.o.platform} channel is not enabled in this process, so nothing can be posted.`,
      );
    return adapter;
  }

  post(text: string, options: HostPostOptions = {}): Promise<string> {
    return this.adapter().post(this.o.threadKey, text, options.format ? { format: options.format } : {});
  }

  edit(ref: string, text: string, options: HostPostOptions = {}): Promise<void> {
    return this.adapter().edit(ref, text, options.format ? { format: options.format } : {});
  }

  react(ref: string, emoji: string): Promise<void> {
    return this.adapter().react(ref, emoji);
  }

  async reply(text: string): Promise<void> {
    if (this.o.reply) return this.o.reply(text);
    await this.post(text);
  }

  async sendMessage(message: CustomMessage, deliverAs: DeliverAs): Promise<void> {
    const text =
      typeof message.content === "string"
        ? message.content
        : message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    await this.deliver(text, deliverAs === "steer" ? "steer" : "followUp");
  }

  /**
   * Appends a `custom` entry to the thread's session. On the worker side this is the holder's
   * fenced append (after the entries of the run in progress). Elsewhere (a gateway handling a
   * command) it is an unfenced append after the current leaf: while a run holds the thread such an
   * entry lands beside the run's entries (kept in the session and its exports, off the branch the
   * model reads, which custom entries never reach anyway).
   */
  async appendEntry(customType: string, data: unknown): Promise<void> {
    if (this.o.appendEntry) return this.o.appendEntry(customType, data);
    const { store } = this.deps;
    const meta = await store.getThreadMeta(this.o.threadKey);
    if (!meta?.currentSessionId) {
      this.deps.logger.warn(
        { threadKey: this.o.threadKey, customType },
        "no session to append a custom entry to",
      );
      return;
    }
    const entry = {
      type: "custom",
      customType,
      data,
      id: newEntryId(),
      parentId: meta.leafId,
      timestamp: new Date().toISOString(),
    } as SessionEntry;
    await store.append(this.o.threadKey, meta.currentSessionId, [entry]);
  }

  /**
   * The thread's settings. A thread without a session yet takes what it has not set from its
   * channel's defaults (as its first message will), then from the deployment's.
   */
  async getSettings(): Promise<ThreadSettings> {
    const { store } = this.deps;
    const meta = await store.getThreadMeta(this.o.threadKey);
    const defaultsKey = this.deps.adapterOf(this.o.platform)?.channelDefaultsKey?.(this.o.threadKey);
    const inherits =
      defaultsKey !== undefined &&
      defaultsKey !== this.o.threadKey &&
      !meta?.currentSessionId &&
      (!meta?.model || !meta.thinkingLevel);
    const channel = inherits ? await store.getThreadMeta(defaultsKey) : undefined;
    return {
      model: meta?.model ?? channel?.model ?? this.deps.defaultModel(),
      thinkingLevel: (meta?.thinkingLevel ?? channel?.thinkingLevel) as ThinkingLevel | undefined,
    };
  }

  async setModel(ref: string): Promise<void> {
    await this.deps.runtime.control(this.o.threadKey, { type: "setModel", model: ref });
  }

  async setThinkingLevel(level: ThinkingLevel): Promise<void> {
    await this.deps.runtime.control(this.o.threadKey, { type: "setThinkingLevel", level });
  }

  async stop(): Promise<ControlOutcome> {
    const r = await this.deps.runtime.control(this.o.threadKey, { type: "stop" });
    return { wasRunning: r.wasRunning, discarded: r.discarded.length };
  }

  async newSession(): Promise<ControlOutcome> {
    const r = await this.deps.runtime.control(this.o.threadKey, { type: "newSession" });
    return { wasRunning: r.wasRunning, discarded: r.discarded.length };
  }

  async deliver(text: string, mode: "steer" | "followUp"): Promise<void> {
    await this.deps.runtime.deliver(this.inbound(text), mode);
  }

  /**
   * Queues a compaction with the runtime: the thread's holder runs it after the turn in progress and
   * posts a notice with the result, so nothing is compacted at the moment this resolves.
   */
  async compact(instructions?: string): Promise<CompactOutcome> {
    await this.deps.runtime.control(this.o.threadKey, {
      type: "compact",
      ...(instructions ? { instructions } : {}),
    });
    return { compacted: false, queued: true };
  }

  async status(): Promise<ThreadStatusView> {
    const s = await this.deps.runtime.status(this.o.threadKey);
    const sessionId = s.meta?.currentSessionId;
    const u = s.meta?.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
    return {
      running: s.active,
      queueMode: s.mode,
      inboxDepth: s.inboxDepth,
      ...(s.contextTokens !== undefined ? { contextTokens: s.contextTokens } : {}),
      usage: { ...u },
      ...(sessionId
        ? {
            session: {
              id: sessionId,
              location: this.deps.sessionLocation?.(this.o.threadKey, sessionId) ?? "",
            },
          }
        : {}),
    };
  }

  /** A chat message from the host's user, as if they had written `text` in the thread. */
  private inbound(text: string): InboundMessage {
    const user = this.o.user();
    return {
      platform: this.o.platform,
      threadKey: this.o.threadKey,
      eventId: `${this.o.platform}:host:${randomUUID()}`,
      messageId: "",
      channelId: this.o.channelId ?? "",
      user: { id: user?.id ?? "unknown", ...(user?.name ? { name: user.name } : {}), isBot: false },
      text,
      attachments: [],
      mentioned: true,
      isDirect: this.o.isDirect ?? false,
      timestamp: Date.now(),
    };
  }
}
