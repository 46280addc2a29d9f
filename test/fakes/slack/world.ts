/**
 * The state of a fake Slack workspace: channels, messages with their threads, edits and reactions,
 * as a user would see them. The Web API handlers (web-api.ts) and the test API (server.ts) both
 * read and change it; nothing here speaks HTTP.
 */

export const TEAM_ID = "T0FAKE";
export const APP_ID = "A0FAKE";
export const BOT_USER_ID = "U0BOT";
export const BOT_ID = "B0BOT";
export const BOT_NAME = "switchboard";

/** Slack's hard limit on `text`: longer messages are rejected with `msg_too_long`. */
export const SLACK_TEXT_LIMIT = 40_000;

export type ChannelKind = "channel" | "group" | "im";

export interface FakeChannel {
  id: string;
  name: string;
  kind: ChannelKind;
}

export interface SlackUser {
  id: string;
  name: string;
  isBot?: boolean;
  botId?: string;
}

/** A message as stored. `text` is the current text; `texts` every version, oldest first. */
export interface StoredMessage {
  ts: string;
  channel: string;
  user: string;
  botId?: string;
  text: string;
  texts: string[];
  threadTs?: string;
  deleted: boolean;
  /** Reaction name → user ids. */
  reactions: Map<string, Set<string>>;
  files?: Array<Record<string, unknown>>;
  /** `chat.postMessage`'s `metadata` (`event_type`, `event_payload`), shown with `include_all_metadata`. */
  metadata?: Record<string, unknown>;
}

/** A message in `chatView`: what a user sees. */
export interface ViewMessage {
  ts: string;
  user: string;
  text: string;
  edits: number;
  reactions: string[];
  /** Replies in this message's thread, oldest first (only on thread parents). */
  replies: ViewMessage[];
}

export class SlackWorld {
  readonly channels = new Map<string, FakeChannel>();
  readonly users = new Map<string, SlackUser>();
  /** Every message of a channel, in posting order (parents and replies). */
  private readonly messages = new Map<string, StoredMessage[]>();
  private seq = 0;

  constructor(private readonly now: () => number) {
    this.users.set(BOT_USER_ID, { id: BOT_USER_ID, name: BOT_NAME, isBot: true, botId: BOT_ID });
  }

  addChannel(channel: FakeChannel): FakeChannel {
    const existing = this.channels.get(channel.id);
    if (existing) return existing;
    this.channels.set(channel.id, channel);
    this.messages.set(channel.id, []);
    return channel;
  }

  addUser(user: SlackUser): SlackUser {
    this.users.set(user.id, user);
    return user;
  }

  /** A fresh, strictly increasing Slack timestamp (`seconds.micro`). */
  nextTs(): string {
    this.seq++;
    const secs = Math.floor(this.now() / 1000);
    return `${secs}.${String(this.seq).padStart(6, "0")}`;
  }

  add(msg: Omit<StoredMessage, "ts" | "texts" | "deleted" | "reactions"> & { ts?: string }): StoredMessage {
    const stored: StoredMessage = {
      ...msg,
      ts: msg.ts ?? this.nextTs(),
      texts: [msg.text],
      deleted: false,
      reactions: new Map(),
    };
    const list = this.messages.get(msg.channel);
    if (!list) throw new Error(`fake slack: unknown channel ${msg.channel}`);
    list.push(stored);
    return stored;
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    return this.messages.get(channel)?.find((m) => m.ts === ts && !m.deleted);
  }

  /** Live messages of a channel in posting order. */
  all(channel: string): StoredMessage[] {
    return (this.messages.get(channel) ?? []).filter((m) => !m.deleted);
  }

  /** The parent and replies of the thread rooted at `threadTs`, oldest first. */
  thread(channel: string, threadTs: string): StoredMessage[] {
    return this.all(channel).filter((m) => m.ts === threadTs || m.threadTs === threadTs);
  }

  /** Top-level messages of a channel, oldest first. */
  topLevel(channel: string): StoredMessage[] {
    return this.all(channel).filter((m) => m.threadTs === undefined || m.threadTs === m.ts);
  }

  replyUsers(channel: string, threadTs: string): string[] {
    return [
      ...new Set(
        this.all(channel)
          .filter((m) => m.threadTs === threadTs && m.ts !== threadTs)
          .map((m) => m.user),
      ),
    ];
  }

  /** The message as the Web API returns it. */
  wire(m: StoredMessage): Record<string, unknown> {
    const replies = this.all(m.channel).filter((r) => r.threadTs === m.ts && r.ts !== m.ts);
    return {
      type: "message",
      ts: m.ts,
      user: m.user,
      text: m.text,
      ...(m.botId ? { bot_id: m.botId } : {}),
      ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
      ...(replies.length
        ? {
            thread_ts: m.ts,
            reply_count: replies.length,
            reply_users: this.replyUsers(m.channel, m.ts),
            latest_reply: replies[replies.length - 1]?.ts,
          }
        : {}),
      ...(m.texts.length > 1 ? { edited: { user: m.user, ts: m.ts } } : {}),
      ...(m.reactions.size
        ? {
            reactions: [...m.reactions].map(([name, users]) => ({
              name,
              users: [...users],
              count: users.size,
            })),
          }
        : {}),
      ...(m.files ? { files: m.files } : {}),
    };
  }

  /** A channel as a user sees it: top-level messages with their thread replies. */
  view(channel: string): ViewMessage[] {
    const toView = (m: StoredMessage): ViewMessage => ({
      ts: m.ts,
      user: m.user,
      text: m.text,
      edits: m.texts.length - 1,
      reactions: [...m.reactions.keys()],
      replies: [],
    });
    return this.topLevel(channel).map((m) => ({
      ...toView(m),
      replies: this.all(channel)
        .filter((r) => r.threadTs === m.ts && r.ts !== m.ts)
        .map(toView),
    }));
  }
}
