/**
 * What the web chat's HTTP side (the routes and the event stream) uses of the adapter.
 * `WebChatAdapter` implements it; its own module so that the adapter, which builds the routes, and
 * the routes do not import each other.
 */
import type { StructuredLogger } from "../../agent/logger.js";
import type { WebAccess } from "./auth.js";
import type { WebFiles } from "./files.js";
import type {
  ConversationKind,
  WebCommand,
  WebConversation,
  WebFile,
  WebIdentity,
  WebMessage,
} from "./model.js";
import type { WebChatStore, WebStoreListener } from "./store-types.js";

export interface WebChatService {
  readonly store: WebChatStore;
  readonly access: WebAccess;
  readonly config: { readonly heartbeatMs?: number; readonly logger?: StructuredLogger };
  /** The signed-in user as the page shows them. */
  readonly identity: WebIdentity;
  /** The commands the page offers. */
  readonly commands: WebCommand[];
  /** Runs `listener` when the adapter stops; returns the unsubscribe. */
  onStop(listener: () => void): () => void;
  /** Counts an open event stream until the returned release is called. */
  trackStream(): () => void;
  /** Follows the store's changes; resolves with the unsubscribe once following. */
  subscribe(listener: WebStoreListener): Promise<() => void>;
  signInLink(pageUrl: string, ttlMs?: number): Promise<string>;
  createConversation(opts?: { title?: string; kind?: ConversationKind }): Promise<WebConversation>;
  /** Files: uploads from the page, downloads of a message's files. */
  readonly files: WebFiles;
  /** A conversation started by its first message (none is made when the message is refused). */
  startConversation(
    opts: { title?: string; kind?: ConversationKind },
    text: string,
    clientId?: string,
  ): Promise<{ conversation: WebConversation; message: WebMessage }>;
  /**
   * A message the page's user wrote (with files it uploaded first), handed to the gateway like any
   * platform's inbound message.
   */
  receiveText(
    conversationId: string,
    text: string,
    clientId?: string,
    files?: WebFile[],
  ): Promise<WebMessage>;
  receiveReaction(
    conversationId: string,
    messageId: string,
    emoji: string,
    added: boolean,
  ): Promise<WebMessage>;
}
