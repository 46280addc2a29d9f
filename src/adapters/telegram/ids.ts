/**
 * Encoding of Telegram ids into the opaque strings that cross the adapter seam.
 *
 * - Thread key `telegram:<chat>:<topic>:<root>`: `topic` is the forum topic id (0 outside topics);
 *   `root` is the message that started the reply chain (0 in DMs, where the whole chat is one thread).
 * - Message ref `telegram:<chat>:<message_id>`.
 * - Event id `telegram:update:<update_id>` (suffixed per reaction when one update carries several).
 */

export interface TelegramThread {
  chatId: number;
  topic: number;
  root: number;
}

export interface TelegramMessageRef {
  chatId: number;
  messageId: number;
}

const INT = /^-?\d+$/;

export function threadKeyOf(t: TelegramThread): string {
  return `telegram:${t.chatId}:${t.topic}:${t.root}`;
}

/** Decode a thread key; throws for a key this adapter did not make (a programmer error). */
export function parseThreadKey(key: string): TelegramThread {
  const [p, chat, topic, root, ...rest] = key.split(":");
  if (
    p !== "telegram" ||
    rest.length ||
    !chat ||
    !topic ||
    !root ||
    ![chat, topic, root].every((x) => INT.test(x))
  ) {
    throw new Error(`Not a Telegram thread key: "${key}". Expected telegram:<chat>:<topic|0>:<root|0>.`);
  }
  return { chatId: Number(chat), topic: Number(topic), root: Number(root) };
}

export function messageRefOf(chatId: number, messageId: number): string {
  return `telegram:${chatId}:${messageId}`;
}

/** Decode a message ref; throws for a ref this adapter did not make (a programmer error). */
export function parseMessageRef(ref: string): TelegramMessageRef {
  const [p, chat, id, ...rest] = ref.split(":");
  if (p !== "telegram" || rest.length || !chat || !id || !INT.test(chat) || !INT.test(id)) {
    throw new Error(`Not a Telegram message reference: "${ref}". Expected telegram:<chat>:<message_id>.`);
  }
  return { chatId: Number(chat), messageId: Number(id) };
}

export function eventIdOf(updateId: number, suffix?: string): string {
  return suffix ? `telegram:update:${updateId}:${suffix}` : `telegram:update:${updateId}`;
}

/**
 * The bot id of a BotFather token (`<bot id>:<secret>`), or undefined when the token does not have
 * that shape. The one rule for a token's shape: the config refuses a token without it (so `check`
 * and `start` agree), and the adapter's constructor relies on it.
 */
export function botIdOfToken(token: string): number | undefined {
  const m = /^(\d+):[\w-]+$/.exec(token);
  const id = m ? Number(m[1]) : Number.NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}
