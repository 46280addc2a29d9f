/**
 * The web chat channel: a page served by the gateway where a person chats with the agent. Mount it
 * with `server.mount(config.path, adapter.app())`. See
 * docs/web-chat.md.
 */
export { WebChatAdapter, type WebChatConfig } from "./adapter.js";
export { START_LINK_TTL_MS } from "./auth.js";
export { MemoryWebAuthStore, type WebAuthStore } from "./auth-store.js";
export { FileWebChatStore } from "./file-store.js";
export { conversationOf, isConversationId, newConversationId, parseMessageRef, threadKeyOf } from "./ids.js";
export { type ImportedTurn, showImportedSession } from "./imported.js";
export { MemoryWebChatStore } from "./memory-store.js";
export type {
  WebChatEvent,
  WebConversation,
  WebMessage,
} from "./model.js";
export {
  type WebChatStore,
  WebConversationMissingError,
  type WebStoreEvent,
  type WebStoreListener,
  type WebUploadStore,
} from "./store-types.js";
export { DirWebUploadStore } from "./upload-store.js";
