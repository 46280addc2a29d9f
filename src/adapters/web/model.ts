/**
 * The web chat's data as the browser sees it: conversations, messages with their reactions, and the
 * live events the page receives over Server-Sent Events. Everything here is plain JSON.
 */

/** `direct`: every message goes to the bot. `group`: the bot answers only when @mentioned (or a command). */
export type ConversationKind = "direct" | "group";

export interface WebConversation {
  id: string;
  /** `web:<id>`: the agent session's thread key. */
  threadKey: string;
  title: string;
  kind: ConversationKind;
  createdAt: number;
  /** Time of the last message or change; the list is sorted by it, newest first. */
  updatedAt: number;
}

export interface WebAuthor {
  id: string;
  name: string;
  isBot: boolean;
}

/** One emoji on a message: whether the bot put it there, and which users did. */
export interface WebReaction {
  emoji: string;
  bot: boolean;
  /** User ids, in the order they reacted. */
  users: string[];
}

export interface WebMessage {
  /** `m<n>`, unique within its conversation (numbered in posting order). */
  id: string;
  /** The `MessageRef` the rest of Switchboard uses: `web:<conversation>:<id>`. */
  ref: string;
  conversationId: string;
  from: WebAuthor;
  /** CommonMark (`format: "markdown"`) rendered by the page, or text shown as is. */
  text: string;
  format: "markdown" | "plain";
  createdAt: number;
  editedAt?: number;
  /** Grows with every change (edit, reaction), so a client keeps the newest copy whatever the order. */
  version: number;
  reactions: WebReaction[];
  /** The id of the message this one answers (a bot reply posted as a reply), in the same conversation. */
  replyTo?: string;
  /** Files sent with the message (by the person, or by the bot's `send_file`), in order. */
  files?: WebFile[];
}

/**
 * A file of a message, kept in the upload store (`WebUploadStore`) and served at
 * `api/conversations/<conversation>/files/<id>`.
 */
export interface WebFile {
  /** Unique within the conversation. */
  id: string;
  name: string;
  size: number;
  /** Its type, from its bytes. */
  type: string;
  /** The bot's upload key (`UploadOptions.idempotencyKey`), so a repeated upload finds this one. */
  key?: string;
}

/**
 * A change, pushed to every connected page and to in-process listeners. `message` carries the whole
 * message after the change (`posted`, `edited`, `reactions`), so applying events is idempotent.
 */
export type WebChatEvent =
  | { type: "conversation"; conversation: WebConversation }
  | { type: "conversation_removed"; conversationId: string }
  | { type: "message"; change: "posted" | "edited" | "reactions"; message: WebMessage }
  | { type: "message_deleted"; conversationId: string; messageId: string }
  | { type: "typing"; conversationId: string; durationMs: number };

/** A command shown in the page's command help (from `registerCommands`). */
export interface WebCommand {
  name: string;
  description: string;
}

/** Who the page's user is, and whether their approval reactions decide anything. */
export interface WebIdentity {
  id: string;
  name: string;
  isAdmin: boolean;
  /** The bot's name; `@name` addresses it in group conversations. */
  botName: string;
}

/** The first event of every event stream: the state to show, so a reconnect never misses a change. */
export interface WebSnapshot {
  me: WebIdentity;
  conversations: WebConversation[];
  commands: WebCommand[];
  /** The conversation asked for with `?conversation=`, with its messages, oldest first. */
  conversationId?: string;
  messages?: WebMessage[];
  /** Conversations where the bot is typing now, with the time left. */
  typing: Array<{ conversationId: string; durationMs: number }>;
}
