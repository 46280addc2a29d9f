/**
 * Session entries: an append-only JSONL tree compatible with pi's session format version 3.
 *
 * A session file is one `session` header line followed by entries. Every entry has a short `id`
 * unique within its session, the `parentId` of the entry it follows (null for the first), and an
 * ISO-8601 `timestamp`. The current conversation is the path from a leaf entry to the root, so a
 * branch is nothing more than a new entry whose parent is an older entry.
 */
import type { ImageContent, TextContent } from "../llm/types.js";
import type { AgentMessage } from "../types.js";

/** The format version written in every header; pi's SessionManager opens version 3 without migration. */
export const CURRENT_SESSION_VERSION = 3;

/**
 * First line of a session file. pi requires `cwd`; Switchboard puts the thread key there and
 * repeats it in `threadKey` so tools that know neither field still find it.
 */
export interface SessionHeader {
  type: "session";
  version: number;
  id: string;
  timestamp: string;
  cwd: string;
  threadKey?: string;
  parentSession?: string;
}

export interface SessionEntryBase {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
}

/**
 * Which of a thread's inbox items a user message was made of: the first and last seq and the
 * last item's queue time (ms). Switchboard's own field; pi ignores it.
 */
export interface InboxMark {
  first: number;
  last: number;
  at: number;
}

/** A conversation message (user, assistant, tool result, or a custom agent message kind). */
export interface MessageEntry extends SessionEntryBase {
  type: "message";
  message: AgentMessage;
  /** On user messages made from inbox items: which ones (crash recovery delivers each once). */
  inbox?: InboxMark;
}

export interface ModelChangeEntry extends SessionEntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

/**
 * What compactions store in `CompactionEntry.details`, the same fields as pi's. (Compactions
 * written before settings were resolved over the whole path also hold `model` and
 * `thinkingLevel`; they are ignored, as pi ignores them.)
 */
export interface CompactionDetails {
  /** Files only read by `read` tool calls in the summarised history (and earlier summaries). */
  readFiles: string[];
  /** Files written or edited by `write`/`edit` tool calls. */
  modifiedFiles: string[];
}

/**
 * Replaces everything on the path before `firstKeptEntryId` with `summary` when the context is
 * built. `tokensBefore` is the estimated context size that triggered it.
 */
export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  /** pi marks compactions made by extensions; kept for file compatibility. */
  fromHook?: boolean;
}

/** Summary of a branch the conversation came back from; the model sees it as a user message. */
export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: T;
  fromHook?: boolean;
}

/** Extension state. Never sent to the model. */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
  type: "custom";
  customType: string;
  data?: T;
}

/** A message an extension injects; the model sees `content` as a user message, `details` never. */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: T;
}

/** A bookmark on another entry; `label: undefined` removes it. */
export interface LabelEntry extends SessionEntryBase {
  type: "label";
  targetId: string;
  label: string | undefined;
}

/** pi's session display name entry. Read and kept, never sent to the model. */
export interface SessionInfoEntry extends SessionEntryBase {
  type: "session_info";
  name?: string;
}

export type SessionEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry;

export type SessionEntryType = SessionEntry["type"];

/** One line of a session file. */
export type FileEntry = SessionHeader | SessionEntry;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An entry before it gets its place in the tree: everything but `id`, `parentId` and `timestamp`. */
export type SessionEntryInput = DistributiveOmit<SessionEntry, "id" | "parentId" | "timestamp">;

/** The model and thinking level in force at a point of a branch. */
export interface SessionSettings {
  /** Latest thinking level on the path; `off` when none was recorded. */
  thinkingLevel: string;
  /** Latest model on the path (from a model change or an assistant message); null when none. */
  model: { provider: string; modelId: string } | null;
}

/** What the model sees for one branch, plus the settings in force at its leaf. */
export interface SessionContext extends SessionSettings {
  messages: AgentMessage[];
}
