/**
 * Who may start a run: a pure function of the per-platform access config and one inbound event.
 * The bot's own messages and other bots' are ignored; in groups the bot answers only when addressed
 * (`requireMention`, default on), in allowed channels, to allowed users (admins always count as
 * allowed); direct messages follow the DM policy (`allowlist` by default).
 */

/** Access rules of one platform. Ids are the platform's own user and channel ids. */
export interface PlatformAccessConfig {
  /** Users who may use the bot in groups (and DM it under `allowlist`). Undefined: everyone in groups. */
  allowedUsers?: readonly string[];
  /** Channels (chats) the bot answers in. Undefined: every channel. */
  allowedChannels?: readonly string[];
  /** Admins: always allowed as users, and the only ones whose approval decisions count. */
  admins?: readonly string[];
  /** In groups, answer only messages that address the bot (mention, reply). Default true. */
  requireMention?: boolean;
  /**
   * Direct messages: `allowlist` (default) lets `allowedUsers` and admins in (only admins when
   * `allowedUsers` is undefined), `open` lets anyone in, `disabled` nobody.
   */
  dmPolicy?: "allowlist" | "open" | "disabled";
  /**
   * Who may change a thread's model and thinking level: `admins` or `everyone`. Undefined: admins
   * in channels and groups, everyone in direct messages.
   */
  settings?: "admins" | "everyone";
}

/** Access config by platform name (`slack`, `discord`, `telegram`, `web`). A missing platform gets the defaults. */
export type AccessConfig = Readonly<Record<string, PlatformAccessConfig | undefined>>;

/** What the policy looks at; `InboundMessage` and `InboundCommand` fit (commands count as addressed). */
export interface AccessSubject {
  platform: string;
  channelId: string;
  user: { id: string; isBot: boolean };
  isDirect: boolean;
  /** Whether the bot was addressed. Default true (native commands are). */
  mentioned?: boolean;
}

/** Why a message gets no run. */
export type AccessDenial =
  | "own_message"
  | "bot"
  | "not_mentioned"
  | "channel_not_allowed"
  | "user_not_allowed"
  | "dm_disabled"
  | "dm_not_allowed";

export type AccessDecision = { allow: true } | { allow: false; reason: AccessDenial; notify: boolean };

/** Reasons that earn the sender a short notice (once per thread); the others are silent. */
const NOTIFY: Readonly<Record<AccessDenial, boolean>> = {
  own_message: false,
  bot: false,
  not_mentioned: false,
  channel_not_allowed: true,
  user_not_allowed: true,
  dm_disabled: true,
  dm_not_allowed: true,
};

/** The short notice for a denial that gets one. */
export const ACCESS_NOTICES: Readonly<Partial<Record<AccessDenial, string>>> = {
  channel_not_allowed: "I am not enabled in this channel, so I will not answer here.",
  user_not_allowed: "Sorry, you are not on the list of people who can use this bot. Ask an admin to add you.",
  dm_disabled: "Direct messages to this bot are turned off. Mention me in a channel instead.",
  dm_not_allowed: "Sorry, you cannot message this bot directly. Ask an admin to add you.",
};

function deny(reason: AccessDenial): AccessDecision {
  return { allow: false, reason, notify: NOTIFY[reason] };
}

/** Whether `userId` is an admin of `platform` under `config`. */
export function isAdmin(config: AccessConfig, platform: string, userId: string): boolean {
  return config[platform]?.admins?.includes(userId) ?? false;
}

/**
 * Whether `userId` may change the settings (model, thinking level) of a thread on `platform`:
 * always under `everyone`, admins only under `admins`; the default is `admins` in channels and
 * groups and `everyone` in direct messages.
 */
export function mayChangeSettings(
  config: AccessConfig,
  platform: string,
  userId: string,
  isDirect: boolean,
): boolean {
  const policy = config[platform]?.settings ?? (isDirect ? "everyone" : "admins");
  return policy === "everyone" || isAdmin(config, platform, userId);
}

/**
 * Decides whether `subject` may start a run. `botUserId` is the bot's own user id on that platform
 * (its messages are ignored even where the platform does not flag them as a bot's).
 */
export function checkAccess(
  config: AccessConfig,
  subject: AccessSubject,
  botUserId?: string,
): AccessDecision {
  const rules = config[subject.platform] ?? {};
  const userId = subject.user.id;
  if (botUserId !== undefined && userId === botUserId) return deny("own_message");
  if (subject.user.isBot) return deny("bot");
  const admin = rules.admins?.includes(userId) ?? false;
  if (subject.isDirect) {
    const policy = rules.dmPolicy ?? "allowlist";
    if (policy === "disabled") return deny("dm_disabled");
    if (policy === "open" || admin || (rules.allowedUsers?.includes(userId) ?? false)) return { allow: true };
    return deny("dm_not_allowed");
  }
  if ((rules.requireMention ?? true) && subject.mentioned === false) return deny("not_mentioned");
  if (rules.allowedChannels && !rules.allowedChannels.includes(subject.channelId))
    return deny("channel_not_allowed");
  if (admin || !rules.allowedUsers || rules.allowedUsers.includes(userId)) return { allow: true };
  return deny("user_not_allowed");
}
