/**
 * A session brought in by `switchboard import` as a web chat conversation: the page lists it (named
 * after its first user message, as a typed conversation is) and shows its turns, so a conversation
 * exported from one deployment (or from pi) can be read and continued in the web chat of another.
 */
import { isConversationId } from "./ids.js";
import type { WebAuthor, WebConversation } from "./model.js";
import type { WebChatStore } from "./store-types.js";

/** The page's user and the bot as the web chat adapter names them by default. */
export const WEB_USER: WebAuthor = { id: "web:local", name: "you", isBot: false };
export const WEB_BOT: WebAuthor = { id: "web:bot", name: "Switchboard", isBot: true };

/** One turn of an imported session as the page shows it. */
export interface ImportedTurn {
  fromBot: boolean;
  text: string;
}

/**
 * Makes conversation `id` show `turns` (a new conversation, or an existing one without messages;
 * one that has messages already keeps them). Turns with no text (tool calls only) are left out; the
 * store keeps the newest of a long session (its per-conversation limit). Throws for an id the web
 * chat cannot open.
 */
export async function showImportedSession(
  store: WebChatStore,
  id: string,
  turns: readonly ImportedTurn[],
): Promise<WebConversation> {
  if (!isConversationId(id)) throw new Error(`"${id}" is not a web chat conversation id`);
  const conversation = await store.create({ id, kind: "direct" });
  if ((await store.messages(id))?.length) return conversation;
  for (const turn of turns) {
    if (!turn.text.trim()) continue;
    await store.add(id, {
      from: turn.fromBot ? WEB_BOT : WEB_USER,
      text: turn.text,
      format: turn.fromBot ? "markdown" : "plain",
    });
  }
  return (await store.get(id)) ?? conversation;
}
