/**
 * The channel seam: what every chat platform adapter (Slack, Discord, Telegram, web chat) turns its
 * platform's events into, and the outbound operations the rest of Switchboard uses to talk back.
 *
 * Rules every adapter follows:
 * - Platform SDK types never leave `src/adapters/<platform>/` (a test checks the imports).
 * - Ids crossing this seam are opaque strings the adapter encodes and decodes itself (`threadKey`,
 *   `messageId`/`MessageRef`, `eventId`); nobody else parses them.
 * - Outbound methods work without `start()`: a worker process creates the adapter in outbound-only
 *   mode and posts and edits without holding the inbound connection.
 * - Platform failures are thrown as `ChannelError` with a small `code`, so callers (the renderer)
 *   handle rate limits and "not modified" without SDK knowledge.
 * - Bad input from the platform (malformed updates) is logged and dropped, never thrown to the caller.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Env, Hono } from "hono";
import { SwitchboardError } from "../agent/errors.js";

/** The chat platforms Switchboard speaks. */
export type Platform = "slack" | "discord" | "telegram" | "web";

/**
 * An opaque reference to one message a platform holds, usable for `edit`, `delete`, `react`,
 * `unreact`. It names the conversation as well as the message (e.g. `telegram:-1001:42`), so callers
 * need nothing else to address it.
 */
export type MessageRef = string;

/** Who wrote a message or reacted. `id` is the platform's user id, as a string. */
export interface ChatUser {
  id: string;
  name?: string;
  isBot: boolean;
}

/**
 * A file or media item attached to an inbound message, by reference only (no bytes): the consumer
 * downloads it through the adapter or platform when it needs it.
 */
export interface AttachmentRef {
  /** Platform file id (Telegram `file_id`, Slack file id, Discord attachment id). */
  id: string;
  kind: "image" | "audio" | "video" | "file" | "other";
  name?: string;
  mimeType?: string;
  sizeBytes?: number;
  /** A direct URL when the platform gives one (Slack, Discord); Telegram needs `getFile` first. */
  url?: string;
}

/**
 * One chat message delivered to the bot, normalised.
 *
 * Adapters deliver only messages addressed to the bot (`mentioned` true: a mention, a reply to the
 * bot, a DM) unless the platform's rules make a non-addressed message part of a bot conversation
 * (e.g. Slack replies in a thread the bot is in); consumers may still check `mentioned`.
 */
export interface InboundMessage {
  platform: Platform;
  /**
   * The conversation this message belongs to; one agent session per thread key. Encoded by the
   * adapter: `telegram:<chat>:<topic|0>:<reply root|0>`, `slack:<team>:<channel>:<thread_ts>`,
   * `discord:<guild|dm>:<channel>:<thread|root message>`, `web:<conversation>`.
   */
  threadKey: string;
  /** Namespaced platform event id for dedupe, e.g. `telegram:update:123`. Same event → same id. */
  eventId: string;
  /** Reference to this message (react to it, e.g. the 👀 acknowledgement). */
  messageId: MessageRef;
  /** Platform channel/chat id (for access checks and per-channel config). */
  channelId: string;
  user: ChatUser;
  /** The text with the bot's mention removed and surrounding whitespace trimmed. */
  text: string;
  attachments: AttachmentRef[];
  /** True when the bot was addressed: mentioned, replied to, or written to in a DM. */
  mentioned: boolean;
  /** True in a one-to-one conversation with the bot. */
  isDirect: boolean;
  /** The message this one replies to, when it is a reply. */
  replyTo?: MessageRef;
  /** When the platform says the message was sent, in ms since the epoch. */
  timestamp: number;
}

/**
 * A reaction added to or removed from a message. `emoji` is normalised to the Unicode emoji
 * ("✅", "❌", "♾️", "👀"); custom platform emoji are passed as `:name:`.
 */
export interface InboundReaction {
  platform: Platform;
  threadKey: string;
  eventId: string;
  /** The message reacted to; equal to the `MessageRef` returned by `post` for the bot's own messages. */
  messageId: MessageRef;
  channelId: string;
  emoji: string;
  user: ChatUser;
  added: boolean;
  timestamp: number;
}

/**
 * A native command (Telegram `/model@bot`, Slack slash command, Discord application command).
 * Commands typed as text after a mention arrive as an `InboundMessage` instead; the command layer
 * parses both.
 */
export interface InboundCommand {
  platform: Platform;
  threadKey: string;
  eventId: string;
  /** Command name without the slash and without a `@botname` suffix, lower case: `model`. */
  name: string;
  /** Everything after the name, trimmed (may be empty). */
  args: string;
  user: ChatUser;
  channelId: string;
  /** The message carrying the command, where there is one (Telegram). */
  messageId?: MessageRef;
  isDirect: boolean;
  timestamp: number;
  /**
   * Present on platforms that require an acknowledgement of the command itself (Slack, Discord
   * interactions). Call it once, quickly; the text is shown to the invoking user or the channel.
   * Where absent, answer by `post` into `threadKey`.
   */
  respond?(text: string, opts?: { ephemeral?: boolean }): Promise<void>;
}

/**
 * Callbacks an adapter calls for inbound events. A handler that throws or rejects is logged by the
 * adapter and does not stop the connection; the event is not retried by the adapter (durability is
 * the consumer's job: write to the inbox before returning).
 */
export interface InboundHandlers {
  onMessage(message: InboundMessage): Promise<void> | void;
  onReaction(reaction: InboundReaction): Promise<void> | void;
  onCommand(command: InboundCommand): Promise<void> | void;
}

/** The markdown dialect a platform renders. Outbound text is CommonMark; adapters convert it. */
export type MarkdownDialect = "telegram-html" | "slack-mrkdwn" | "discord" | "plain";

/** What a platform can do, as data, so the renderer and core never branch on the platform name. */
export interface AdapterCapabilities {
  /** Longest message the platform accepts, in characters of visible text. */
  maxMessageLength: number;
  /**
   * Minimum interval between edits of one message, in ms (default 1000). The adapter may return a
   * slower value for some threads (Telegram groups) through `editIntervalFor`.
   */
  editIntervalMs: number;
  markdown: MarkdownDialect;
  /** Commands can be registered natively (`registerCommands`). */
  nativeCommands: boolean;
  /** Reactions can be added and are delivered as `InboundReaction`. */
  reactions: boolean;
  /** Messages can be edited (false: the renderer posts only final text). */
  edits: boolean;
  /** How long one `typing()` call stays visible, in ms; 0 when the platform has no typing indicator. */
  typingDurationMs: number;
  /** The adapter can return earlier thread messages (`fetchHistory`). */
  history: boolean;
  /**
   * A post repeated with the same `idempotencyKey` within minutes returns the first message instead
   * of making a second (Discord's enforced nonce). Absent: false.
   */
  idempotentPosts?: boolean;
  /**
   * The platform's own limits on files (docs/channels.md, "Files"), in bytes: the largest file the
   * bot can fetch (`download`) and the largest it can post (`uploadFile`). Absent: no files.
   */
  files?: FileLimits;
}

/** A platform's hard limits on one file, in bytes. */
export interface FileLimits {
  maxDownloadBytes: number;
  maxUploadBytes: number;
}

/** Options of `download`. */
export interface DownloadOptions {
  /** Aborts the request (a stopped run, a timeout). */
  signal?: AbortSignal;
}

/**
 * One attachment's bytes, as the platform serves them to the bot. `body` is read once, in order;
 * `sizeBytes` is what the platform says before sending them (the reader still counts).
 */
export interface DownloadedFile {
  body: AsyncIterable<Uint8Array>;
  sizeBytes?: number;
}

/** A file in the worker's file system to post into a thread. */
export interface OutgoingFile {
  /** Absolute path of a regular file (read when the upload happens). */
  path: string;
  /** The name people see (`report.pdf`). */
  name: string;
  sizeBytes: number;
  /** Its type, sniffed from the bytes (`image/png`); absent: a generic file. */
  mimeType?: string;
}

/** Options of `uploadFile`. */
export interface UploadOptions {
  /** Text shown with the file (markdown). */
  caption?: string;
  /** As `PostOptions.replyTo`. */
  replyTo?: MessageRef;
  /**
   * As `PostOptions.idempotencyKey`: where the platform can, an upload repeated with the same key
   * finds the first one (Discord's nonce, Slack's file shares, the web chat's store) instead of
   * showing the file twice.
   */
  idempotencyKey?: string;
  /**
   * Called with a platform token for the upload (Slack's file id) once the bytes are on the platform
   * and before the file is shared into the thread, which waits for it. Recorded in the render
   * journal, it lets `findUploaded` tell a share that happened from one that did not.
   */
  onStaged?: (token: string) => void | Promise<void>;
}

/** Options of `post`. */
export interface PostOptions {
  /** `markdown` (default): CommonMark converted to the platform dialect; `plain`: sent as is. */
  format?: "markdown" | "plain";
  /**
   * The message (of the same thread) this one answers, instead of the thread's default anchor. Shown
   * as a reply where the platform threads replies (Telegram quote, Discord message reference); on
   * Slack the post goes into that message's thread (a DM's top level stays the top level). The
   * post always stays in `threadKey`'s conversation.
   */
  replyTo?: MessageRef;
  /** Ask the platform not to notify (Telegram `disable_notification`). */
  silent?: boolean;
  /**
   * A key naming this post (at most 25 characters of [0-9a-z]), recorded in the render journal before
   * the post. Where the platform can, a post with the same key finds the first one instead of showing
   * a second copy: Discord sends it as the `nonce` with `enforce_nonce` (a repeat within minutes
   * returns the first message); Slack attaches it as message metadata, which `findPosted` looks up.
   * Telegram has no such key: it is ignored there.
   */
  idempotencyKey?: string;
}

/** Options of `edit`. */
export interface EditOptions {
  format?: "markdown" | "plain";
}

/** A message from a thread's past, for the context of a session that starts mid-thread. */
export interface HistoryMessage {
  messageId: MessageRef;
  user: ChatUser;
  text: string;
  timestamp: number;
  /** True for messages the bot itself wrote. */
  fromBot: boolean;
}

/** A command to show in the platform's command menu. */
export interface CommandSpec {
  /** Lower-case name without slash: `model`. */
  name: string;
  description: string;
}

/** State of one inbound connection, for `/readyz`. */
export interface ConnectionStatus {
  /** What the connection is: `telegram:polling`, `telegram:webhook`, `discord:shard:0`, … */
  name: string;
  state: "idle" | "connecting" | "connected" | "standby" | "stopped" | "failed";
  /** For `standby`: another process holds the connection lease. For `failed`: the last error. */
  detail?: string;
  /** When the state last changed, ms since the epoch. */
  since: number;
}

/**
 * A chat platform, both directions.
 *
 * Inbound: `start(handlers)` opens the connection (or registers the webhook route) and calls the
 * handlers; `stop()` closes it and resolves when no handler will be called any more. Outbound methods
 * work before, during and after `start()`. Outbound methods throw `ChannelError` on platform failure;
 * an `edit` whose text equals the current text resolves (never throws `not_modified`).
 */
export interface ChannelAdapter {
  readonly platform: Platform;
  readonly capabilities: AdapterCapabilities;

  start(handlers: InboundHandlers): Promise<void>;
  stop(): Promise<void>;
  /** Current state of each inbound connection this adapter manages (empty before `start`). */
  connections(): ConnectionStatus[];

  /** Post a new message into a thread; returns its reference. */
  post(threadKey: string, text: string, opts?: PostOptions): Promise<MessageRef>;
  /**
   * Optional: the message a post with `idempotencyKey` `key` made in `threadKey`, if the platform
   * shows one (Slack: by its metadata, in the thread's replies or the channel's recent history);
   * undefined when there is none. Recovery asks it before posting again what a dead worker may have
   * posted already. Rejects when the platform cannot be asked (the post is then tried later).
   */
  findPosted?(
    threadKey: string,
    key: string,
    opts?: { replyTo?: MessageRef },
  ): Promise<MessageRef | undefined>;
  edit(ref: MessageRef, text: string, opts?: EditOptions): Promise<void>;
  delete(ref: MessageRef): Promise<void>;
  react(ref: MessageRef, emoji: string): Promise<void>;
  unreact(ref: MessageRef, emoji: string): Promise<void>;
  /**
   * Optional (with `capabilities.files`): the bytes of an attachment of an inbound message, fetched
   * with the bot's credentials (Slack's `url_private` with the bot token, Discord's signed
   * attachment URL, Telegram's `getFile` then the file path, the web chat's file store). Rejects
   * with a `ChannelError` when the platform refuses (`forbidden`, `not_found`, `too_long` for a file
   * over the platform's own limit, `network`); the message says why, without credentials. The
   * caller enforces its own limits while reading `body`, and stops reading (which must end the
   * request) when a limit is hit.
   */
  download?(file: AttachmentRef, opts?: DownloadOptions): Promise<DownloadedFile>;
  /**
   * Optional (with `capabilities.files`): posts `file` into the thread as a message people can open
   * or download (Slack's external upload, a Discord attachment, Telegram `sendPhoto` /
   * `sendDocument`, a web chat download), with `caption`. Rejects with a `ChannelError` (`too_long`
   * for a file over the platform's limit).
   */
  uploadFile?(threadKey: string, file: OutgoingFile, opts?: UploadOptions): Promise<MessageRef>;
  /**
   * Optional: the message an upload with `idempotencyKey` `key` made in `threadKey` (as `findPosted`
   * does for posts); `staged` is the token `onStaged` gave, when the journal has it. Undefined when
   * the platform shows no such upload; rejects when it cannot be asked.
   */
  findUploaded?(
    threadKey: string,
    key: string,
    opts?: { replyTo?: MessageRef; staged?: string },
  ): Promise<MessageRef | undefined>;
  /**
   * Show a typing indicator in the thread for about `capabilities.typingDurationMs`. Where the
   * platform ends the indicator when the bot posts a message (Telegram, Discord), a post ends it.
   */
  typing(threadKey: string): Promise<void>;
  /**
   * End the typing indicator now, on platforms that can (the web chat). Absent where only a new
   * message from the bot ends it; the renderer ends it before posting either way.
   */
  stopTyping?(threadKey: string): Promise<void>;

  /** The rate-limit bucket a thread's messages count against (its chat or channel), e.g. `telegram:-1001`. */
  channelOf(threadKey: string): string;
  /**
   * Where the thread's channel keeps its settings for new conversations (`/model`, `/thinking`): the
   * thread key of the channel's top level, which no conversation uses (`slack:T1:C2:0`). Equal to
   * `threadKey` when the event came from that top level itself (a Slack slash command, a Discord
   * command outside a thread, a Telegram command in a group that replies to nothing); undefined
   * where each conversation stands alone (DMs). Absent: no channel defaults on this platform.
   */
  channelDefaultsKey?(threadKey: string): string | undefined;
  /** Edit interval for one thread, when it differs from `capabilities.editIntervalMs` (Telegram groups). */
  editIntervalFor?(threadKey: string): number;
  /**
   * The platform's budget for posts and edits into the thread's channel (`channelOf`), which the
   * renderer spends through a `RateLimiter`. Absent: no per-channel budget beyond the edit interval.
   */
  rateRuleFor?(threadKey: string): RateRule;
  /**
   * Earlier messages of the thread, oldest first, at most `limit`, excluding messages newer than
   * `before` when given. Platforms without a history API return what the adapter saw (documented).
   */
  fetchHistory?(threadKey: string, limit: number, before?: MessageRef): Promise<HistoryMessage[]>;
  /** Register commands in the platform's command menu. */
  registerCommands?(commands: CommandSpec[]): Promise<void>;
  /**
   * The checks `switchboard check` runs against the platform with the configured credentials (who
   * the token belongs to). Works without `start()`. Absent: nothing to check (the web chat).
   */
  probe?(): CredentialProbe[];
  /**
   * HTTP routes the platform calls (webhooks), which the gateway's HTTP server serves publicly and
   * before the web chat; each authenticates its requests itself (a signature, a secret header).
   * Empty or absent when events arrive over a connection the adapter opens.
   */
  routes?(): ChannelRoute[];
  /**
   * Apps the channel serves under a path prefix (the web chat's page, API and event stream), which
   * the gateway's HTTP server mounts publicly, behind every route: each signs its users in itself.
   * Absent for platforms that only call webhooks.
   */
  mounts?(): ChannelMount[];
}

/** One check of `probe()`: `name` as `check` prints it, `check` never throws for a platform's answer. */
export interface CredentialProbe {
  name: string;
  check(): Promise<CredentialCheck>;
}

/**
 * A check's answer: `detail` says what answered (never a token); `refused` when the platform
 * answered and refused the credentials (a config error, with the variable to fix in `detail`).
 */
export interface CredentialCheck {
  ok: boolean;
  detail?: string;
  refused?: boolean;
}

/** A webhook route of an adapter: a plain Node handler that owns the request body and response. */
export interface ChannelRoute {
  method: "GET" | "POST";
  path: string;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * An app of an adapter under `prefix` (`"/"` for the root): the server takes the requests under it
 * that no route takes, and the app sees its mount point (Hono's `baseRoutePath`). `app` is generic
 * so the server builds it for its own Hono environment.
 */
export interface ChannelMount {
  prefix: string;
  app<E extends Env>(): Hono<E>;
}

/** Normalised kinds of platform failure. */
export type ChannelErrorCode =
  | "rate_limited"
  | "not_modified"
  | "not_found"
  | "forbidden"
  | "bad_request"
  | "too_long"
  | "unauthorized"
  | "network"
  | "other";

/**
 * A platform failure, normalised: `kind` says which, `code` is `channel.<kind>`. `retryAfterMs` is
 * set for `rate_limited` (from the platform's retry-after). The message says what failed and never
 * contains tokens.
 */
export class ChannelError extends SwitchboardError {
  declare readonly code: `channel.${ChannelErrorCode}`;
  constructor(
    readonly kind: ChannelErrorCode,
    message: string,
    readonly platform: Platform,
    readonly retryAfterMs?: number,
  ) {
    super(`channel.${kind}`, message);
  }
}

/** True when `err` is a `ChannelError` with one of the given codes. */
export function isChannelError(err: unknown, ...codes: ChannelErrorCode[]): err is ChannelError {
  return err instanceof ChannelError && (codes.length === 0 || codes.includes(err.kind));
}

/**
 * A shared budget of requests per key (a channel), so several processes posting into one channel
 * stay under the platform's limit together. `acquire` reserves one request and resolves with how long
 * the caller must wait before sending it (0: now). `penalize` records a platform 429 so every
 * process backs off for `retryAfterMs`. Implementations: `MemoryRateLimiter` (one process) and
 * `RedisRateLimiter` (src/gateway, several processes).
 */
export interface RateLimiter {
  acquire(key: string, rule: RateRule): Promise<number>;
  penalize(key: string, retryAfterMs: number): Promise<void>;
}

/** At most `limit` requests per `windowMs` for one key. */
export interface RateRule {
  limit: number;
  windowMs: number;
}

/**
 * Exclusive ownership of a connection that must be unique across gateway processes (Telegram long
 * polling, a Discord shard). `hold` runs `session` only while this process holds the lease: it waits
 * until the lease is free, takes it, calls `session(lost)`, keeps the lease renewed, and aborts
 * `lost` if renewal fails (another process may take over) or `signal` aborts; the session must then
 * stop using the connection promptly. When `session` settles the lease is released (unless it was
 * lost) and, unless `signal` aborted, `hold` waits for the lease again. `hold` resolves once
 * `signal` aborts and the session has ended; it never rejects for lease trouble (it retries).
 * Implementation: `RedisConnectionLease` in src/gateway/connection-lease.ts.
 */
export interface ConnectionLease {
  /** What is leased, e.g. `telegram:polling:<bot id>`. */
  readonly name: string;
  hold(
    session: (lost: AbortSignal) => Promise<void>,
    opts: { signal: AbortSignal; onState?: (state: "standby" | "held") => void },
  ): Promise<void>;
}

/**
 * A small shared key-value store with expiry, for adapter state that several processes need (e.g.
 * which thread a bot message belongs to when the platform cannot say). Values are short strings.
 */
export interface KeyValueStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

/** Default cap on inbound message text, matching the web chat's `maxInputChars`. */
export const DEFAULT_MAX_INBOUND_CHARS = 20_000;

/**
 * Cap inbound text at `max` characters (UTF-16 units, as `String#length` counts; a surrogate pair
 * is never split). Over the cap the text is cut and ends with a visible marker
 * `[… message truncated: N characters over the limit]`, so the model and the person see that it was
 * shortened; at or under the cap the text is returned unchanged. Attachments are not affected.
 */
export function capInboundText(text: string, max: number = DEFAULT_MAX_INBOUND_CHARS): string {
  if (text.length <= max) return text;
  const over = text.length - max;
  let cut = max;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${text.slice(0, cut)}\n\n[… message truncated: ${over} characters over the limit]`;
}

/**
 * Where a renderer records what its run (or notice) has shown and still owes the chat, so that the
 * next holder of the thread can finish it if this worker dies (the render journal, docs/runtime.md).
 * The runtime gives one to each sink its lease holder creates. Writes are fenced by the holder's
 * lease and ordered with its session writes; each resolves once stored, or once it could not be
 * (the lease is gone: the next holder finishes from the last one stored). Never rejects.
 * - `owe(snapshot)`: the run's render state as plain JSON (platform message ids, the final text
 *   each must end with); replaces the previous snapshot of the run.
 * - `posted(key, ref)`: the post whose snapshot carried idempotency key `key` got `ref`. Call it the
 *   instant the platform answered (no await in between): it is sent at once, apart from the queued
 *   snapshots, so a worker killed just after a post leaves the id. Does not wait.
 * - `saved()`: resolves once the session holds every reply the run's events showed as ended (the
 *   writes queued so far are done). The renderer awaits it before each request, so the chat never
 *   shows a reply's full text that the session might lack after a crash. Never rejects.
 * - `done()`: the chat shows the final state: nothing is owed any more.
 */
export interface RenderLog {
  owe(snapshot: unknown): Promise<void>;
  posted(key: string, ref: MessageRef): void;
  saved(): Promise<void>;
  done(): Promise<void>;
  /**
   * False once the lease is lost: the renderer then sends nothing more (another worker holds the
   * thread and finishes the chat from the journal; a lost worker's late posts would show twice).
   */
  held(): boolean;
}
