/**
 * The thread-level values the extension API passes around: who is in a chat, a thread's settings,
 * status, delivery modes, and what stop, new-session and compaction requests found. Plain data with
 * no behaviour; `types.ts` re-exports them as part of the extension API.
 */
import type { ImageContent, TextContent, ThinkingLevel } from "../agent/llm/types.js";
/** Someone in a chat, as extensions see them. */
export interface ThreadUser {
  id: string;
  name?: string;
}

/**
 * A read-only view of the thread an extension works for. `user` is who triggered the current run
 * (agent hooks and tools) or who issued the command (commands, reactions).
 */
export interface ThreadView {
  readonly threadKey: string;
  /** `slack`, `discord`, `telegram`, `web`, … */
  readonly platform: string;
  readonly channelId?: string;
  readonly user?: ThreadUser;
  readonly isDirect?: boolean;
  /**
   * Where settings (`setModel`, `setThinkingLevel`) made here apply, in a channel or group:
   * `thread` (the conversation it was typed in) or `channel` (the channel's default for new
   * threads: a command typed at the channel's top level). Undefined in DMs (one conversation).
   */
  readonly settingsScope?: "thread" | "channel";
}

/** A message an extension injects into the conversation. The model sees `content`; `details` never. */
export interface ExtensionMessage {
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Whether chat renderers show it. */
  display: boolean;
  details?: unknown;
}

/**
 * When an injected message reaches the model: `steer` before the next LLM call of the run in
 * progress, `followUp` after the run would otherwise stop, `nextTurn` together with the next user
 * message that starts a run.
 */
export type DeliverAs = "steer" | "followUp" | "nextTurn";

/**
 * How a chat message reaches a thread whose agent is busy (and, for `collect`, an idle one); the
 * runtime implements it (src/queue), the commands and the parser name it:
 * - `steer`: injected before the agent's next LLM call; tool calls not yet started are skipped.
 * - `followUp`: runs after the agent would otherwise stop.
 * - `collect`: messages arriving within the debounce window merge into one follow-up.
 * - `interrupt`: aborts the run and runs this message; messages queued before it are discarded.
 */
export type DeliveryMode = "steer" | "followUp" | "collect" | "interrupt";

/** The thread's persisted settings. `undefined` means the deployment's default. */
export interface ThreadSettings {
  /** `provider/modelId` of the thread, or of the default model when the thread has none. */
  model: string | undefined;
  thinkingLevel: ThinkingLevel | undefined;
}

/** What `/status` shows. Tokens and cost are summed over every session of the thread. */
export interface ThreadStatusView {
  /** A run is active (or about to start). */
  running: boolean;
  /** Delivery mode for messages that arrive while busy. */
  queueMode: DeliveryMode;
  /** Messages waiting for the agent. */
  inboxDepth: number;
  /**
   * The last estimate of the context the model sees (tokens: the last reply's reported usage plus
   * ~4 characters per token after it), recorded after every run and compaction; undefined before
   * the thread's first run.
   */
  contextTokens?: number;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; cost: number };
  /**
   * The current session and where it is stored (a Redis key, a file path), for `switchboard export`
   * and people who look at the store; undefined before the thread's first message.
   */
  session?: { id: string; location: string };
}

/** What a compaction did. */
export interface CompactOutcome {
  compacted: boolean;
  /**
   * The compaction was handed to the thread's runtime, which runs it in order with the thread's
   * messages and posts the result as a notice; nothing is compacted yet when this is true.
   */
  queued?: boolean;
  /** Why nothing was compacted (too little history, a run holds the thread, …). */
  reason?: string;
  tokensBefore?: number;
  tokensAfter?: number;
}

/** What a stop or new-session request found. */
export interface ControlOutcome {
  /** A run was active and was aborted. */
  wasRunning: boolean;
  /** Queued messages that were discarded. */
  discarded: number;
  /** What extensions did in response (`thread_stop` handlers), e.g. "Cancelled approval a7k2qx." */
  notes?: string[];
}
