/**
 * One conversation in the web chat, driven through its HTTP API as the browser does: signed in
 * with the process's sign-in link, a new conversation, messages sent, the bot's texts read back.
 */
import type { Gateway } from "../../../src/gateway/app/index.js";
import { WebClient } from "../../adapters/web/client.js";

export interface WebConversation {
  readonly id: string;
  /** Sends `text` as the signed-in person (commands too: `/approve abc123`). */
  say(text: string): Promise<void>;
  /** The bot's messages, current text, oldest first. */
  botTexts(): Promise<string[]>;
}

/** Signs in to `app`'s web chat and opens a new conversation there. */
export async function openWebConversation(app: Gateway): Promise<WebConversation> {
  const web = app.web;
  if (!web || !app.webUrl) throw new Error("the web chat did not start");
  const client = await WebClient.open(await web.signInLink(app.webUrl));
  const api = <T>(path: string, body?: unknown): Promise<T> =>
    client.call<T>(body === undefined ? "GET" : "POST", path, body);
  const { conversation } = await api<{ conversation: { id: string } }>("api/conversations", {});
  const path = `api/conversations/${conversation.id}/messages`;
  return {
    id: conversation.id,
    async say(text) {
      await api(path, { text });
    },
    async botTexts() {
      const { messages } = await api<{ messages: { from: { isBot: boolean }; text: string }[] }>(path);
      return messages.filter((m) => m.from.isBot).map((m) => m.text);
    },
  };
}
