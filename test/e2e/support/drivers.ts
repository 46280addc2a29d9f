/**
 * One conversation with the bot on each platform, driven the way people do it there, so the same
 * command and approval scenarios run on all three:
 *
 * - Telegram: a mention in a group starts a reply chain; later messages and commands
 *   (`/model@bot …`, native) reply to the bot's last message.
 * - Slack: a mention starts a thread; later messages and commands are mentions in that thread
 *   (`@bot /model …`, text after a mention).
 * - Discord: a mention gets a thread; later messages are mentions in it, commands are application
 *   commands run in the thread (native, deferred).
 */
import { fromTelegramReaction, toTelegramReaction } from "../../../src/adapters/telegram/emoji.js";
import { BOT_USER_ID as DISCORD_BOT, type DUser } from "../../fakes/discord/server.js";
import { BOT_USER_ID as SLACK_BOT } from "../../fakes/slack/server.js";
import { BOT_USERNAME, type FakeChat } from "../../fakes/telegram/server.js";
import { GENERAL_ID, SLACK_ADMIN, SLACK_OTHER, TG_USERS, until, type World } from "./world.js";

export type PlatformName = "telegram" | "slack" | "discord";

/** A bot message as the test sees it. */
export interface BotMessage {
  id: string;
  text: string;
}

export interface Conversation {
  /** The first message: a mention that starts the thread. */
  start(text: string): Promise<void>;
  /** A later message to the bot in the same thread. */
  say(text: string): Promise<void>;
  /** A command in the thread, the platform's usual way (by the admin). */
  command(name: string, args?: string): Promise<void>;
  /** Telegram only: the command in the thread by someone who is no admin. */
  commandByOther?(name: string, args?: string): Promise<void>;
  /** Telegram only: the chat the conversation is in. */
  readonly telegramChat?: FakeChat;
  /** The bot's messages in the thread, current text, oldest first. */
  botMessages(): BotMessage[];
  /** The emoji the bot itself added to one of its messages (normalised: ✅ ❌ ♾️ 👀). */
  botReactions(messageId: string): string[];
  /** A reaction on a bot message, by the admin or by someone else. */
  react(messageId: string, emoji: "✅" | "❌", by: "admin" | "other"): Promise<void>;
  /** The admin's display name as the bot records decisions. */
  readonly adminName: RegExp;
  /** A later message with a file in the same thread (the first message when none came yet). */
  attach(text: string, file: AttachedFile): Promise<void>;
  /** The files the bot posted in the thread, as people download them. */
  botFiles(): Array<{ name: string; bytes: Buffer; caption: string }>;
  /** Makes the platform lose the files posted so far (their downloads fail from now on). */
  loseFiles(): void;
}

/** A file a person posts. */
export interface AttachedFile {
  name: string;
  bytes: Buffer;
  mimeType: string;
}

const SLACK_NAMES: Record<string, string> = {
  "✅": "white_check_mark",
  "❌": "x",
  "♾️": "infinity",
  "👀": "eyes",
};
const fromSlack = (name: string) =>
  Object.entries(SLACK_NAMES).find(([, n]) => n === name)?.[0] ?? `:${name}:`;

let chatSeq = 0;

export function conversation(world: World, platform: PlatformName): Conversation {
  if (platform === "telegram") return telegramConversation(world);
  if (platform === "slack") return slackConversation(world);
  return discordConversation(world);
}

/**
 * Waits for the approval request and for the bot's own ✅ ❌ ♾️ on it: they are added once the
 * request is stored with its message, so reactions from then on find it.
 */
export async function waitForRequest(c: Conversation, test: (m: BotMessage) => boolean): Promise<BotMessage> {
  const request = await waitForBot(c, test, "the approval request");
  await until(() => c.botReactions(request.id).includes("♾️"), "the bot's reactions on the request");
  return request;
}

/** Waits for a bot message matching `test` and returns it. */
export function waitForBot(c: Conversation, test: (m: BotMessage) => boolean, what: string, ms?: number) {
  return until(() => c.botMessages().find(test), what, ms);
}

function telegramConversation(world: World): Conversation {
  const tg = world.telegram;
  const chat: FakeChat = { id: -100900000 - ++chatSeq, type: "supergroup", title: `Team ${chatSeq}` };
  const lastBot = () => tg.botMessages(chat.id).at(-1)?.message_id;
  const command = (from: (typeof TG_USERS)["alice"], name: string, args: string) => {
    const replyTo = lastBot();
    const head = `/${name}@${BOT_USERNAME}`;
    tg.userMessage({ chat, from, text: args ? `${head} ${args}` : head, ...(replyTo ? { replyTo } : {}) });
  };
  return {
    adminName: /alice/,
    async start(text) {
      tg.userMessage({ chat, from: TG_USERS.alice, text, mention: true });
    },
    async say(text) {
      const replyTo = lastBot();
      tg.userMessage({ chat, from: TG_USERS.alice, text, ...(replyTo ? { replyTo } : { mention: true }) });
    },
    async attach(text, file) {
      const replyTo = lastBot();
      tg.userMessage({
        chat,
        from: TG_USERS.alice,
        text,
        ...(replyTo ? { replyTo } : { mention: true }),
        file: { bytes: file.bytes, name: file.name, mimeType: file.mimeType },
      });
    },
    botFiles: () => tg.botFiles(chat.id).map(({ name, bytes, caption }) => ({ name, bytes, caption })),
    loseFiles: () => tg.files.files.clear(),
    async command(name, args = "") {
      command(TG_USERS.alice, name, args);
    },
    async commandByOther(name, args = "") {
      command(TG_USERS.bob, name, args);
    },
    telegramChat: chat,
    botMessages: () => tg.botMessages(chat.id).map((m) => ({ id: String(m.message_id), text: m.text })),
    botReactions: (id) => (tg.message(chat.id, Number(id))?.botReactions ?? []).map(fromTelegramReaction),
    async react(messageId, emoji, by) {
      tg.reaction({
        chat,
        from: by === "admin" ? TG_USERS.alice : TG_USERS.bob,
        messageId: Number(messageId),
        emoji: toTelegramReaction(emoji),
      });
    },
  };
}

function slackConversation(world: World): Conversation {
  const slack = world.slack;
  const channel = `CFLOW${++chatSeq}`;
  slack.channel(channel);
  let root: string | undefined;
  const thread = () => slack.view(channel).find((v) => v.ts === root)?.replies ?? [];
  return {
    adminName: /ada/,
    async start(text) {
      const { message } = await slack.userMessage({ channel, user: SLACK_ADMIN, text, mention: true });
      root = message.ts;
    },
    async say(text) {
      await slack.userMessage({
        channel,
        user: SLACK_ADMIN,
        text,
        mention: true,
        ...(root ? { threadTs: root } : {}),
      });
    },
    async command(name, args = "") {
      await this.say(args ? `/${name} ${args}` : `/${name}`);
    },
    async attach(text, file) {
      const f = slack.files.userFile({
        name: file.name,
        bytes: file.bytes,
        mimetype: file.mimeType,
        user: SLACK_ADMIN,
      });
      const { message } = await slack.userMessage({
        channel,
        user: SLACK_ADMIN,
        text,
        mention: true,
        files: [f],
        ...(root ? { threadTs: root } : {}),
      });
      root ??= message.ts;
    },
    botFiles: () =>
      slack.files.botFiles(channel).flatMap((f) => {
        const ts = f.shares.get(channel)?.[0]?.ts;
        const m = thread().find((r) => r.ts === ts);
        return m ? [{ name: f.name, bytes: f.bytes, caption: m.text }] : [];
      }),
    loseFiles: () => {
      for (const [id, f] of slack.files.files) if (f.user !== SLACK_BOT) slack.files.files.delete(id);
    },
    botMessages: () =>
      thread()
        .filter((r) => r.user === SLACK_BOT)
        .map((r) => ({ id: r.ts, text: r.text })),
    botReactions(id) {
      const m = slack.world.find(channel, id);
      return [...(m?.reactions ?? [])]
        .filter(([, users]) => users.has(SLACK_BOT))
        .map(([name]) => fromSlack(name));
    },
    async react(messageId, emoji, by) {
      await slack.reaction({
        channel,
        ts: messageId,
        user: by === "admin" ? SLACK_ADMIN : SLACK_OTHER,
        name: SLACK_NAMES[emoji] ?? emoji,
      });
    },
  };
}

function discordConversation(world: World): Conversation {
  const discord = world.discord;
  const { alice, bob } = world.discordUsers;
  let root: string | undefined;
  const threadId = async (): Promise<string> =>
    until(
      () => (root ? discord.world.find(GENERAL_ID, root)?.threadId : undefined),
      "the bot's thread on the mention",
    );
  const author = (by: "admin" | "other"): DUser => (by === "admin" ? alice : bob);
  return {
    adminName: /alice/,
    async start(text) {
      root = discord.userMessage({ channelId: GENERAL_ID, author: alice, content: text, mention: true }).id;
    },
    async say(text) {
      discord.userMessage({ channelId: await threadId(), author: alice, content: text, mention: true });
    },
    async command(name, args) {
      discord.interaction({ channelId: await threadId(), user: alice, name, ...(args ? { args } : {}) });
    },
    async attach(text, file) {
      const files = [{ filename: file.name, bytes: file.bytes, contentType: file.mimeType }];
      if (!root) {
        root = discord.userMessage({
          channelId: GENERAL_ID,
          author: alice,
          content: text,
          mention: true,
          files,
        }).id;
        return;
      }
      discord.userMessage({
        channelId: await threadId(),
        author: alice,
        content: text,
        mention: true,
        files,
      });
    },
    botFiles() {
      const id = root ? discord.world.find(GENERAL_ID, root)?.threadId : undefined;
      return id ? discord.botFiles(id).map(({ name, bytes, caption }) => ({ name, bytes, caption })) : [];
    },
    loseFiles: () => {
      for (const [id, a] of discord.cdn.attachments)
        if (!discord.botFiles(a.channelId).some((f) => f.bytes === a.bytes))
          discord.cdn.attachments.delete(id);
    },
    botMessages() {
      const id = root ? discord.world.find(GENERAL_ID, root)?.threadId : undefined;
      if (!id) return [];
      return discord.world
        .all(id)
        .filter((m) => m.author.id === DISCORD_BOT && !m.ephemeral)
        .map((m) => ({ id: m.id, text: m.content }));
    },
    botReactions(id) {
      const thread = root ? discord.world.find(GENERAL_ID, root)?.threadId : undefined;
      const m = thread ? discord.world.find(thread, id) : undefined;
      return [...(m?.reactions ?? [])].filter(([, users]) => users.has(DISCORD_BOT)).map(([emoji]) => emoji);
    },
    async react(messageId, emoji, by) {
      discord.reaction({ channelId: await threadId(), messageId, user: author(by), emoji });
    },
  };
}
