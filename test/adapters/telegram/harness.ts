/** The Telegram side of the adapter contract: grammY against the fake Bot API server. */

import { toTelegramReaction } from "../../../src/adapters/telegram/emoji.js";
import { TelegramAdapter, type TelegramAdapterConfig } from "../../../src/adapters/telegram/index.js";
import type { MessageRef } from "../../../src/adapters/types.js";
import { type FakeChat, FakeTelegram, type StoredMessage, type TgUser } from "../../fakes/telegram/server.js";
import { ManualClock } from "../../support/manual-clock.js";
import { type ContractHarness, Received, type UserMessage, type VisibleMessage } from "../contract.js";

export const GROUP: FakeChat = { id: -1001234, type: "supergroup", title: "Team" };
export const USERS: Record<string, TgUser> = {
  alice: { id: 501, is_bot: false, first_name: "Alice", username: "alice" },
  bob: { id: 502, is_bot: false, first_name: "Bob", username: "bob" },
  carol: { id: 503, is_bot: false, first_name: "Carol", username: "carol" },
};
export const dmWith = (u: TgUser): FakeChat => ({ id: u.id, type: "private" });

/** Follow reply links to the first message of a reply chain. */
function chainRoot(fake: FakeTelegram, chatId: number, m: StoredMessage): number {
  let cur = m;
  for (let i = 0; i < 1000 && cur.reply_to_message_id !== undefined; i++) {
    const next = fake.message(chatId, cur.reply_to_message_id);
    if (!next) break;
    cur = next;
  }
  return cur.message_id;
}

export interface TelegramHarness extends ContractHarness {
  readonly fake: FakeTelegram;
  readonly adapter: TelegramAdapter;
}

export async function createTelegramHarness(
  extra: Partial<TelegramAdapterConfig> = {},
): Promise<TelegramHarness> {
  const clock = new ManualClock();
  const fake = await new FakeTelegram({ now: () => clock.now() }).start();
  const adapter = new TelegramAdapter({
    token: fake.token,
    apiRoot: fake.apiRoot(),
    pollTimeoutSeconds: 5,
    ...extra,
  });
  const received = new Received();
  await adapter.start(received);
  const handles = new Map<string, StoredMessage>();
  let lastUpdate: number | undefined;
  const track = (m: StoredMessage): UserMessage => {
    const id = `${m.chat.id}:${m.message_id}`;
    handles.set(id, m);
    return { id };
  };

  const harness: TelegramHarness = {
    platform: "telegram",
    adapter,
    received,
    clock,
    fake,
    async groupMessage(o) {
      const replyTo = o.replyTo ? handles.get(o.replyTo.id)?.message_id : undefined;
      const m = fake.userMessage({
        chat: GROUP,
        from: USERS[o.user ?? "alice"] ?? (USERS.alice as TgUser),
        text: o.text,
        ...(o.mention ? { mention: true } : {}),
        ...(replyTo !== undefined ? { replyTo } : {}),
      });
      lastUpdate = fake.lastUpdateId;
      return track(m);
    },
    async fileMessage(o) {
      const m = fake.userMessage({
        chat: GROUP,
        from: USERS.alice as TgUser,
        text: o.text,
        mention: true,
        file: { bytes: o.bytes, name: o.name, mimeType: o.mimeType },
      });
      lastUpdate = fake.lastUpdateId;
      return track(m);
    },
    botFiles(threadKey: string) {
      const [, chat, , root] = threadKey.split(":").map(Number);
      const chatId = chat as number;
      return fake
        .botFiles(chatId)
        .filter((f) => {
          const m = fake.message(chatId, f.messageId);
          return root === 0 || (m !== undefined && chainRoot(fake, chatId, m) === root);
        })
        .map(({ name, bytes, caption }) => ({ name, bytes, caption }));
    },
    async directMessage(text) {
      const alice = USERS.alice as TgUser;
      const m = fake.userMessage({ chat: dmWith(alice), from: alice, text });
      lastUpdate = fake.lastUpdateId;
      return track(m);
    },
    async react(ref: MessageRef, emoji: string) {
      const [, chat, id] = ref.split(":");
      const chatObj = Number(chat) === GROUP.id ? GROUP : dmWith(USERS.alice as TgUser);
      lastUpdate = fake.reaction({
        chat: chatObj,
        from: USERS.bob as TgUser,
        messageId: Number(id),
        emoji: toTelegramReaction(emoji),
      });
    },
    async command(name, args) {
      fake.command(GROUP, USERS.alice as TgUser, name, args, { addressed: true });
      lastUpdate = fake.lastUpdateId;
    },
    async redeliverLast() {
      if (lastUpdate === undefined) throw new Error("nothing delivered yet");
      fake.redeliver(lastUpdate);
    },
    thread(threadKey: string): VisibleMessage[] {
      const [, chat, topic, root] = threadKey.split(":").map(Number);
      const chatId = chat as number;
      return fake
        .chat(chatId)
        .filter((m) => (m.message_thread_id ?? 0) === topic || !topic)
        .filter((m) => root === 0 || chainRoot(fake, chatId, m) === root)
        .map((m) => ({ text: m.text, fromBot: m.from.is_bot }));
    },
    edits(ref: MessageRef) {
      const [, chat, id] = ref.split(":").map(Number);
      return fake.calls
        .filter(
          (c) =>
            c.method === "editMessageText" &&
            c.status === 200 &&
            Number(c.params.chat_id) === chat &&
            Number(c.params.message_id) === id,
        )
        .map((c) => ({ at: c.at, text: c.visibleText ?? "" }));
    },
    rateLimitStorm(count, retryAfterMs) {
      fake.rateLimitNext(count, Math.ceil(retryAfterMs / 1000));
    },
    rateLimited() {
      return fake.calls.filter((c) => c.status === 429).length;
    },
    async close() {
      await adapter.stop();
      await fake.close();
    },
  };
  return harness;
}
