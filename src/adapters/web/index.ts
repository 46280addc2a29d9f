/**
 * The web chat channel: a page served by the gateway where a person chats with the agent. Mount it
 * with `server.mount(config.path, adapter.app())` (or `createWebChatApp(adapter)`). See
 * docs/web-chat.md.
 */
export { createWebChatAdapter, WebChatAdapter, type WebChatConfig } from "./adapter.js";
export { TOKEN_COOKIE } from "./auth.js";
export { WebInputError } from "./errors.js";
export { conversationOf, messageRefOf, parseMessageRef, threadKeyOf } from "./ids.js";
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
