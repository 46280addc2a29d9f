/**
 * The state of a fake Discord: one guild with text channels and threads, DM channels, users and
 * messages (current content, edit count, replies, reactions), plus snowflake ids. REST handlers
 * (rest.ts), the gateway (gateway.ts) and the test API (server.ts) share it; no I/O here.
 */

const DISCORD_EPOCH = 1_420_070_400_000n;
export const BOT_USER_ID = "900000000000000001";
export const APPLICATION_ID = "900000000000000002";
export const GUILD_ID = "900000000000000010";

/** Discord's limit on `content`. */
export const CONTENT_LIMIT = 2000;

export const ChannelType = { GuildText: 0, DM: 1, PublicThread: 11 } as const;

export interface DUser {
  id: string;
  username: string;
  bot?: boolean;
}

export interface DChannel {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  /** Threads: the channel they live in. */
  parentId?: string;
  ownerId?: string;
  /** Text channels: whether the bot may start threads (false → 50013 Missing Permissions). */
  threadsAllowed?: boolean;
  /** DMs: the other person. */
  recipient?: DUser;
}

export interface DMessage {
  id: string;
  channelId: string;
  author: DUser;
  content: string;
  /** Every version of the content, oldest first. */
  contents: string[];
  timestamp: number;
  mentions: DUser[];
  reference?: { messageId: string; channelId: string };
  /** A thread started on this message (same id as the message). */
  threadId?: string;
  /** Ephemeral follow-ups are seen only by the invoking user. */
  ephemeral?: boolean;
  interactionId?: string;
  deleted: boolean;
  /** emoji → user ids. */
  reactions: Map<string, Set<string>>;
  attachments?: Array<Record<string, unknown>>;
}

export class DiscordWorld {
  readonly users = new Map<string, DUser>();
  readonly channels = new Map<string, DChannel>();
  private readonly messages = new Map<string, DMessage[]>();
  private seq = 0n;
  readonly bot: DUser = { id: BOT_USER_ID, username: "switchboard", bot: true };

  constructor(private readonly now: () => number) {
    this.users.set(this.bot.id, this.bot);
  }

  /** A new snowflake from the fake clock. */
  snowflake(): string {
    this.seq = (this.seq + 1n) % 4096n;
    return String(((BigInt(Math.floor(this.now())) - DISCORD_EPOCH) << 22n) + this.seq);
  }

  addUser(user: DUser): DUser {
    this.users.set(user.id, user);
    return user;
  }

  addChannel(channel: DChannel): DChannel {
    this.channels.set(channel.id, channel);
    if (!this.messages.has(channel.id)) this.messages.set(channel.id, []);
    return channel;
  }

  add(
    m: Omit<DMessage, "id" | "contents" | "deleted" | "reactions" | "timestamp"> & { id?: string },
  ): DMessage {
    const list = this.messages.get(m.channelId);
    if (!list) throw new Error(`fake discord: unknown channel ${m.channelId}`);
    const msg: DMessage = {
      ...m,
      id: m.id ?? this.snowflake(),
      contents: [m.content],
      timestamp: this.now(),
      deleted: false,
      reactions: new Map(),
    };
    list.push(msg);
    return msg;
  }

  find(channelId: string, id: string): DMessage | undefined {
    return this.messages.get(channelId)?.find((m) => m.id === id && !m.deleted);
  }

  /** Live messages of a channel, oldest first. */
  all(channelId: string): DMessage[] {
    return (this.messages.get(channelId) ?? []).filter((m) => !m.deleted);
  }

  userWire(u: DUser): Record<string, unknown> {
    return {
      id: u.id,
      username: u.username,
      discriminator: "0",
      global_name: u.username,
      avatar: null,
      ...(u.bot ? { bot: true } : {}),
    };
  }

  channelWire(c: DChannel): Record<string, unknown> {
    if (c.type === ChannelType.DM) {
      return {
        id: c.id,
        type: c.type,
        last_message_id: null,
        recipients: c.recipient ? [this.userWire(c.recipient)] : [],
      };
    }
    const base = {
      id: c.id,
      type: c.type,
      guild_id: c.guildId,
      name: c.name ?? c.id,
      position: 0,
      permission_overwrites: [],
      nsfw: false,
      rate_limit_per_user: 0,
      last_message_id: null,
    };
    if (c.type === ChannelType.PublicThread) {
      return {
        ...base,
        parent_id: c.parentId,
        owner_id: c.ownerId,
        message_count: this.all(c.id).length,
        member_count: 2,
        total_message_sent: this.all(c.id).length,
        thread_metadata: {
          archived: false,
          auto_archive_duration: 1440,
          archive_timestamp: new Date(this.now()).toISOString(),
          locked: false,
        },
      };
    }
    return { ...base, parent_id: null, topic: null };
  }

  messageWire(m: DMessage): Record<string, unknown> {
    const channel = this.channels.get(m.channelId);
    const ref = m.reference ? this.find(m.reference.channelId, m.reference.messageId) : undefined;
    return {
      id: m.id,
      channel_id: m.channelId,
      ...(channel?.guildId ? { guild_id: channel.guildId } : {}),
      author: this.userWire(m.author),
      content: m.content,
      timestamp: new Date(m.timestamp).toISOString(),
      edited_timestamp: m.contents.length > 1 ? new Date(this.now()).toISOString() : null,
      tts: false,
      mention_everyone: false,
      mentions: m.mentions.map((u) => this.userWire(u)),
      mention_roles: [],
      attachments: m.attachments ?? [],
      embeds: [],
      pinned: false,
      type: m.reference ? 19 : 0,
      flags: m.ephemeral ? 64 : 0,
      ...(m.reference
        ? {
            message_reference: {
              type: 0,
              message_id: m.reference.messageId,
              channel_id: m.reference.channelId,
              ...(channel?.guildId ? { guild_id: channel.guildId } : {}),
            },
            referenced_message: ref ? this.messageWireShallow(ref) : null,
          }
        : {}),
      ...(m.threadId && this.channels.get(m.threadId)
        ? { thread: this.channelWire(this.channels.get(m.threadId) as DChannel) }
        : {}),
      ...(m.reactions.size
        ? {
            reactions: [...m.reactions].map(([name, users]) => ({
              emoji: { id: null, name },
              count: users.size,
              me: users.has(BOT_USER_ID),
              burst_colors: [],
              count_details: { burst: 0, normal: users.size },
              me_burst: false,
            })),
          }
        : {}),
    };
  }

  private messageWireShallow(m: DMessage): Record<string, unknown> {
    const { referenced_message: _r, thread: _t, ...rest } = this.messageWire({ ...m, reference: undefined });
    return {
      ...rest,
      ...(m.reference
        ? { message_reference: { message_id: m.reference.messageId, channel_id: m.reference.channelId } }
        : {}),
    };
  }
}
