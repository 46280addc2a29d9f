/**
 * The web chat channel: a page served by the gateway where a person chats with the agent. Mount it
 * with `server.mount(config.path, adapter.app())` (or `createWebChatApp(adapter)`). See
 * docs/web-chat.md.
 */
export { createWebChatAdapter, WebChatAdapter, type WebChatConfig } from "./adapter.js";
export {
  CSRF_HEADER,
  isLoopbackHostHeader,
  PAGE_LINK_TTL_MS,
  SESSION_TTL_MS,
  START_LINK_TTL_MS,
  WebAccess,
} from "./auth.js";
export { MemoryWebAuthStore, type WebAuthStore } from "./auth-store.js";
export { WebInputError } from "./errors.js";
export { FileWebChatStore, type FileWebChatStoreOptions } from "./file-store.js";
export { conversationOf, messageRefOf, parseMessageRef, threadKeyOf } from "./ids.js";
export { MemoryWebChatStore } from "./memory-store.js";
export type {
  ConversationKind,
  WebAuthor,
  WebChatEvent,
  WebCommand,
  WebConversation,
  WebIdentity,
  WebMessage,
  WebReaction,
  WebSnapshot,
} from "./model.js";
export { createWebChatApp } from "./routes.js";
export {
  type ClientRecord,
  type NewWebMessage,
  type ReactionBy,
  type WebChatStore,
  WebConversationMissingError,
  type WebStoreEvent,
  type WebStoreListener,
} from "./store-types.js";
