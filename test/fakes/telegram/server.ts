/**
 * A fake Telegram Bot API server for tests: grammY talks to it through `client.apiRoot`.
 *
 * Wire: `POST [/<prefix>]/bot<token>/<method>` with a JSON body, answered `{ok:true,result}` or
 * `{ok:false,error_code,description,parameters?}` as the real API does. The optional path prefix
 * lets a test tell two processes of the same bot apart (`blackhole(prefix)` makes one look dead).
 *
 * Real limits enforced: 4096 characters of visible text, HTML entity parsing ("can't parse
 * entities"), "message is not modified", per-chat flood control (429 with `parameters.retry_after`),
 * the reaction emoji whitelist, and 409 Conflict for concurrent `getUpdates` (the older request is
 * terminated, as Telegram does) or `getUpdates` while a webhook is set. `allowed_updates` defaults
 * exclude `message_reaction`, as in the real API.
 *
 * Test API: `userMessage`, `command`, `reaction` inject updates (delivered by getUpdates or POSTed
 * to the webhook); `chat(chatId)` shows a chat as a user sees it; `calls` records every request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TelegramFiles } from "./files.js";
import { parseTelegramHtml } from "./html.js";

export const BOT_ID = 7000;
export const BOT_USERNAME = "switchboard_bot";
const FAKE_TOKEN = `${BOT_ID}:FAKE-TOKEN-for-tests`;

/** Emoji a bot may set as a reaction (Telegram's standard reaction list). */
const ALLOWED_REACTIONS = new Set(
  "👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡".split(
    " ",
  ),
);

type Json = Record<string, unknown>;
/** What the request handlers return once they have answered (or `undefined` when answered later). */
type Answered = true | undefined;

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

export interface FakeChat {
  id: number;
  type: "private" | "group" | "supergroup";
  title?: string;
  is_forum?: boolean;
}

/** A message as stored: what a user would see. */
export interface StoredMessage {
  message_id: number;
  chat: FakeChat;
  from: TgUser;
  date: number;
  text: string;
  entities?: Json[];
  message_thread_id?: number;
  reply_to_message_id?: number;
  deleted?: boolean;
  edits: number;
  /** Reactions by the bot. */
  botReactions: string[];
  /** For the service message that opened a forum topic: the topic's name. */
  topicCreated?: string;
  /** A photo or document (its caption is `text`). */
  file?: { fileId: string; kind: "photo" | "document" };
}

export interface RecordedCall {
  method: string;
  params: Json;
  /** Time by the fake's clock (ms). */
  at: number;
  status: number;
  prefix?: string;
  /** For successful sends and edits: the text as the user sees it. */
  visibleText?: string;
  /** For a successful `sendMessage`: the id of the message it made. */
  messageId?: number;
}

export interface RateRule {
  limit: number;
  windowMs: number;
}

export interface FakeTelegramOptions {
  token?: string;
  /** The fake's clock for flood control and `date` fields (default `Date.now`). */
  now?: () => number;
  /** Per-chat flood limit for sends and edits (default: groups 20/min, private 30 per 30 s; `null`: off). */
  groupRule?: RateRule | null;
  privateRule?: RateRule | null;
  /** Answer `getUpdates` at once, ignoring its `timeout` (as some proxies and test servers do). */
  ignorePollTimeout?: boolean;
}

/** How long one `sendChatAction` keeps "typing…" visible, unless the bot sends a message first. */
const TYPING_MS = 5000;

const DEFAULT_ALLOWED = [
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "callback_query",
];

interface PendingPoll {
  res: ServerResponse;
  timer: NodeJS.Timeout;
  offset: number;
  limit: number;
  allowed: string[];
}

export class FakeTelegram {
  readonly token: string;
  readonly calls: RecordedCall[] = [];
  readonly bot: TgUser = { id: BOT_ID, is_bot: true, first_name: "Switchboard", username: BOT_USERNAME };
  /** Number of 409 Conflict answers sent. */
  conflicts = 0;
  webhook: { url: string; secret?: string; allowed: string[] } | undefined;
  /** Responses of webhook deliveries (status codes), in order. */
  readonly webhookResponses: number[] = [];
  readonly commands: Array<{ command: string; description: string }>[] = [];
  /** Files people sent and the bot sent (files.ts). */
  readonly files = new TelegramFiles();
  /** The file of the multipart request being handled. */
  private upload: { part: string; name: string; bytes: Buffer; type: string } | undefined;

  private server: Server | undefined;
  private port = 0;
  private readonly now: () => number;
  private readonly chats = new Map<number, FakeChat>();
  private readonly messages = new Map<number, StoredMessage[]>();
  private updates: Array<{ update_id: number; forced?: boolean } & Json> = [];
  private nextUpdateId = 100;
  private confirmed = 0;
  private poll: PendingPoll | undefined;
  private readonly flood = new Map<number, number>();
  private storm: { remaining: number; retryAfter: number; methods: string[] } | undefined;
  private readonly holes = new Set<string>();
  /** Methods whose calls are recorded but not answered until `releaseMethod`. */
  private readonly heldMethods = new Map<string, Array<() => void>>();
  private readonly held: ServerResponse[] = [];
  private readonly groupRule: RateRule | null;
  private readonly privateRule: RateRule | null;
  private readonly ignorePollTimeout: boolean;
  private readonly rawAnswers: Array<{ method: string; status: number; body: string; type: string }> = [];

  constructor(opts: FakeTelegramOptions = {}) {
    this.token = opts.token ?? FAKE_TOKEN;
    this.now = opts.now ?? Date.now;
    this.groupRule = opts.groupRule === undefined ? { limit: 20, windowMs: 60_000 } : opts.groupRule;
    this.privateRule = opts.privateRule === undefined ? { limit: 30, windowMs: 30_000 } : opts.privateRule;
    this.ignorePollTimeout = opts.ignorePollTimeout ?? false;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Base URL for grammY's `apiRoot`, optionally with a prefix naming one client process. */
  apiRoot(prefix?: string): string {
    return `http://127.0.0.1:${this.port}${prefix ? `/${prefix}` : ""}`;
  }

  async close(): Promise<void> {
    if (this.poll) {
      clearTimeout(this.poll.timer);
      this.poll.res.destroy();
      this.poll = undefined;
    }
    for (const r of this.held) r.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  // ---- test API: the world -------------------------------------------------------------

  /** Register a chat; messages create chats on first use too. */
  addChat(chat: FakeChat): FakeChat {
    const existing = this.chats.get(chat.id);
    if (existing) return existing;
    this.chats.set(chat.id, chat);
    if (!this.messages.has(chat.id)) this.messages.set(chat.id, []);
    return chat;
  }

  /**
   * The bot loses the chat (removed from the group, the group deleted): every method naming it
   * answers 400 "chat not found" until `addChat` (or a message there) brings it back. Its messages
   * are kept, as Telegram keeps them for the people still in it.
   */
  loseChat(chatId: number): FakeChat | undefined {
    const chat = this.chats.get(chatId);
    this.chats.delete(chatId);
    return chat;
  }

  /** Open a forum topic in a forum supergroup; returns the topic id (its service message id). */
  createTopic(chat: FakeChat, from: TgUser, name: string): number {
    const c = this.addChat({ ...chat, is_forum: true });
    const msg = this.store(c, this.userOf(from), "", {});
    msg.topicCreated = name;
    msg.message_thread_id = msg.message_id;
    return msg.message_id;
  }

  /** A user writes a message. `mention` prepends `@bot`; `/cmd` text gets a bot_command entity. */
  userMessage(opts: {
    chat: FakeChat;
    from: TgUser;
    text: string;
    replyTo?: number;
    topic?: number;
    mention?: boolean;
    /** A file sent with the text as its caption (`photo`: as a photo, else a document). */
    file?: { bytes: Buffer; name?: string; mimeType?: string; photo?: boolean };
  }): StoredMessage {
    const chat = this.addChat(opts.chat);
    const text = opts.mention ? `@${BOT_USERNAME} ${opts.text}` : opts.text;
    const entities: Json[] = [];
    if (opts.mention) entities.push({ type: "mention", offset: 0, length: BOT_USERNAME.length + 1 });
    const cmd = /^\/[a-z0-9_]+(@\w+)?/i.exec(text);
    if (cmd) entities.push({ type: "bot_command", offset: 0, length: cmd[0].length });
    const msg = this.store(chat, this.userOf(opts.from), text, {
      ...(entities.length ? { entities } : {}),
      ...(opts.replyTo !== undefined ? { replyTo: opts.replyTo } : {}),
      ...(opts.topic !== undefined ? { topic: opts.topic } : {}),
    });
    if (opts.file) {
      const f = this.files.add(opts.file.bytes, {
        ...(opts.file.name ? { name: opts.file.name } : {}),
        ...(opts.file.mimeType ? { mimeType: opts.file.mimeType } : {}),
        kind: opts.file.photo ? "photos" : "documents",
      });
      msg.file = { fileId: f.fileId, kind: opts.file.photo ? "photo" : "document" };
    }
    this.pushUpdate({ message: this.wire(msg) });
    return msg;
  }

  /** A user sends a command, e.g. `command(chat, user, "model", "gpt")` → "/model gpt". */
  command(
    chat: FakeChat,
    from: TgUser,
    name: string,
    args = "",
    opts: { addressed?: boolean } = {},
  ): StoredMessage {
    const head = opts.addressed ? `/${name}@${BOT_USERNAME}` : `/${name}`;
    return this.userMessage({ chat, from, text: args ? `${head} ${args}` : head });
  }

  /** A user reacts to a message (a `message_reaction` update; needs the bot to be admin in groups). */
  reaction(opts: {
    chat: FakeChat;
    from: TgUser;
    messageId: number;
    emoji: string;
    added?: boolean;
  }): number {
    const added = opts.added ?? true;
    const r = [{ type: "emoji", emoji: opts.emoji }];
    return this.pushUpdate({
      message_reaction: {
        chat: opts.chat,
        message_id: opts.messageId,
        user: opts.from,
        date: Math.floor(this.now() / 1000),
        old_reaction: added ? [] : r,
        new_reaction: added ? r : [],
      },
    });
  }

  /** Queue a raw update (malformed ones too); returns its update_id. */
  pushRaw(update: Json): number {
    return this.pushUpdate(update);
  }

  /** Deliver an update again with the same update_id, as at-least-once delivery may. */
  redeliver(updateId: number): void {
    const original = this.sentUpdates.get(updateId);
    if (!original) throw new Error(`update ${updateId} was never delivered`);
    this.updates.push({ ...original, update_id: updateId, forced: true });
    this.flushPoll();
    void this.deliverWebhook();
  }

  /** The chat as a user sees it: current visible text of each message, in order. */
  chat(chatId: number, opts: { topic?: number } = {}): StoredMessage[] {
    return (this.messages.get(chatId) ?? []).filter(
      (m) =>
        !m.deleted &&
        m.topicCreated === undefined &&
        (opts.topic === undefined || m.message_thread_id === opts.topic),
    );
  }

  /** Messages the bot wrote in a chat. */
  botMessages(chatId: number): StoredMessage[] {
    return this.chat(chatId).filter((m) => m.from.id === BOT_ID);
  }

  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.messages.get(chatId)?.find((m) => m.message_id === messageId);
  }

  /** The id of the newest injected update. */
  get lastUpdateId(): number {
    return this.nextUpdateId - 1;
  }

  /** Updates not yet confirmed by an offset. */
  get pendingUpdates(): number {
    return this.updates.filter((u) => u.update_id >= this.confirmed || u.forced).length;
  }

  /** The next `count` send/edit calls get 429 with `retry_after` seconds. */
  rateLimitNext(count: number, retryAfterSec: number, methods = ["sendMessage", "editMessageText"]): void {
    this.storm = { remaining: count, retryAfter: retryAfterSec, methods };
  }

  /** The next `count` HTML sends/edits fail entity parsing, as Telegram's stricter parser sometimes does. */
  rejectHtmlNext(count: number): void {
    this.htmlRejections = count;
  }

  /**
   * The next call of `method` gets this raw HTTP answer instead of the API's (a proxy's error page,
   * a body without `description`).
   */
  answerNextRaw(method: string, status: number, body: string, type = "application/json"): void {
    this.rawAnswers.push({ method, status, body, type });
  }

  /**
   * When "typing…" showed in a chat, as a user would see it: from each `sendChatAction` until
   * `TYPING_MS` later or until the bot's next message in the chat (edits do not end it), by the
   * fake's clock.
   */
  typingWindows(chatId: number): Array<{ from: number; until: number }> {
    const inChat = this.calls.filter((c) => Number(c.params.chat_id) === chatId && c.status === 200);
    const out: Array<{ from: number; until: number }> = [];
    for (const c of inChat) {
      if (c.method !== "sendChatAction") continue;
      const post = inChat.find(
        (p) => p.method === "sendMessage" && p.at >= c.at && inChat.indexOf(p) > inChat.indexOf(c),
      );
      out.push({ from: c.at, until: Math.min(c.at + TYPING_MS, post?.at ?? Number.POSITIVE_INFINITY) });
    }
    return out;
  }

  /**
   * Calls of `method` are recorded and then left unanswered until `releaseMethod(method)`, so a test
   * can catch a process in the middle of handling an update (e.g. on its 👀 reaction).
   */
  holdMethod(method: string): void {
    if (!this.heldMethods.has(method)) this.heldMethods.set(method, []);
  }

  /** Answers the held calls of `method` (those whose caller still listens) and stops holding it. */
  releaseMethod(method: string): void {
    const waiting = this.heldMethods.get(method) ?? [];
    this.heldMethods.delete(method);
    for (const answer of waiting) answer();
  }

  /** Requests under `prefix` are swallowed: never answered, as if that process had died. */
  blackhole(prefix: string): void {
    this.holes.add(prefix);
    if (this.poll && this.pollPrefix === prefix) {
      clearTimeout(this.poll.timer);
      this.held.push(this.poll.res);
      this.poll = undefined;
    }
  }

  // ---- internals ------------------------------------------------------------------------

  private pollPrefix: string | undefined;
  private htmlRejections = 0;
  private readonly sentUpdates = new Map<number, Json>();
  private readonly messageSeq = new Map<number, number>();
  private readonly users = new Map<number, TgUser>();

  private userOf(u: TgUser): TgUser {
    this.users.set(u.id, u);
    return u;
  }

  private store(
    chat: FakeChat,
    from: TgUser,
    text: string,
    extra: { entities?: Json[]; replyTo?: number; topic?: number },
  ): StoredMessage {
    const id = (this.messageSeq.get(chat.id) ?? 0) + 1;
    this.messageSeq.set(chat.id, id);
    const msg: StoredMessage = {
      message_id: id,
      chat,
      from,
      date: Math.floor(this.now() / 1000),
      text,
      edits: 0,
      botReactions: [],
      ...(extra.entities ? { entities: extra.entities } : {}),
      ...(extra.topic !== undefined ? { message_thread_id: extra.topic } : {}),
      ...(extra.replyTo !== undefined ? { reply_to_message_id: extra.replyTo } : {}),
    };
    this.messages.get(chat.id)?.push(msg);
    return msg;
  }

  /** A stored message in Bot API shape (reply_to_message one level deep, as Telegram does). */
  private wire(m: StoredMessage, depth = 0): Json {
    const out: Json = { message_id: m.message_id, chat: m.chat, from: m.from, date: m.date };
    const file = m.file ? this.files.files.get(m.file.fileId) : undefined;
    if (m.topicCreated !== undefined) out.forum_topic_created = { name: m.topicCreated, icon_color: 7322096 };
    else if (file && m.file) {
      if (m.file.kind === "photo") out.photo = this.files.photo(file);
      else out.document = this.files.document(file);
      if (m.text) out.caption = m.text;
    } else out.text = m.text;
    if (m.entities) out[file ? "caption_entities" : "entities"] = m.entities;
    if (m.message_thread_id !== undefined) {
      out.message_thread_id = m.message_thread_id;
      if (m.chat.is_forum) out.is_topic_message = true;
    }
    const replyId = m.reply_to_message_id ?? (m.chat.is_forum ? m.message_thread_id : undefined);
    if (replyId !== undefined && depth === 0) {
      const target = this.message(m.chat.id, replyId);
      if (target) out.reply_to_message = this.wire(target, 1);
    }
    return out;
  }

  private pushUpdate(body: Json): number {
    const update_id = this.nextUpdateId++;
    const update = { update_id, ...body };
    this.updates.push(update);
    this.flushPoll();
    void this.deliverWebhook();
    return update_id;
  }

  private eligible(offset: number, limit: number, allowed: string[]): Json[] {
    return this.updates
      .filter((u) => (u.forced || u.update_id >= offset) && allowed.some((k) => k in u))
      .slice(0, limit)
      .map(({ forced: _f, ...u }) => u);
  }

  private confirm(offset: number): void {
    if (offset > this.confirmed) this.confirmed = offset;
    this.updates = this.updates.filter((u) => u.update_id >= this.confirmed && !u.forced);
  }

  private flushPoll(): void {
    const p = this.poll;
    if (!p) return;
    const batch = this.eligible(p.offset, p.limit, p.allowed);
    if (!batch.length) return;
    clearTimeout(p.timer);
    this.poll = undefined;
    this.answerUpdates(p.res, batch);
  }

  private answerUpdates(res: ServerResponse, batch: Json[]): void {
    for (const u of batch) this.sentUpdates.set(u.update_id as number, u);
    // Forced redeliveries are handed out once.
    const ids = new Set(batch.map((u) => u.update_id));
    this.updates = this.updates.filter((u) => !(u.forced && ids.has(u.update_id)));
    send(res, 200, { ok: true, result: batch });
  }

  private async deliverWebhook(): Promise<void> {
    const hook = this.webhook;
    if (!hook) return;
    const batch = this.eligible(this.confirmed, 100, hook.allowed);
    for (const u of batch) {
      this.sentUpdates.set(u.update_id as number, u);
      this.updates = this.updates.filter((x) => x.update_id !== u.update_id);
      try {
        const r = await fetch(hook.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(hook.secret ? { "x-telegram-bot-api-secret-token": hook.secret } : {}),
          },
          body: JSON.stringify(u),
        });
        this.webhookResponses.push(r.status);
        await r.arrayBuffer();
      } catch {
        this.webhookResponses.push(0);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = /^(?:\/([^/]+))?\/bot([^/]+)\/(\w+)$/.exec(req.url ?? "");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const fileGet = /^\/file\/bot([^/]+)\/(.+)$/.exec(req.url ?? "");
    if (fileGet && req.method === "GET") {
      const answer = this.files.download(decodeURIComponent(fileGet[2] ?? ""), fileGet[1] === this.token);
      res.writeHead(answer.status);
      res.end(answer.body);
      return;
    }
    if (!m || req.method !== "POST") {
      send(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    const [, prefix, token, method = ""] = m;
    if (prefix && this.holes.has(prefix)) {
      this.held.push(res);
      return;
    }
    let params: Json = {};
    this.upload = undefined;
    try {
      const type = req.headers["content-type"] ?? "";
      if (type.startsWith("multipart/form-data")) {
        const parsed = await this.files.multipart(Buffer.concat(chunks), type);
        params = parsed.params;
        this.upload = parsed.upload;
      } else {
        const raw = Buffer.concat(chunks).toString("utf8");
        params = raw ? (JSON.parse(raw) as Json) : {};
      }
    } catch {
      send(res, 400, { ok: false, error_code: 400, description: "Bad Request: invalid JSON" });
      return;
    }
    const call: RecordedCall = { method, params, at: this.now(), status: 0, ...(prefix ? { prefix } : {}) };
    this.calls.push(call);
    const reply = (status: number, body: Json): true => {
      call.status = status;
      send(res, status, body);
      return true;
    };
    if (token !== this.token) {
      reply(401, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    }
    const raw = this.rawAnswers.findIndex((r) => r.method === method);
    if (raw >= 0) {
      const [r] = this.rawAnswers.splice(raw, 1);
      if (r) {
        call.status = r.status;
        res.writeHead(r.status, { "content-type": r.type, "content-length": Buffer.byteLength(r.body) });
        res.end(r.body);
        return;
      }
    }
    const fail = (code: number, description: string, parameters?: Json): true =>
      reply(code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });
    const ok = (result: unknown): true => reply(200, { ok: true, result });
    const run = () => {
      try {
        this.dispatch(method, params, prefix, res, call, ok, fail);
      } catch (err) {
        fail(400, `Bad Request: ${err instanceof Error ? err.message : String(err)}`);
      }
    };
    const held = this.heldMethods.get(method);
    if (held) {
      held.push(() => {
        if (!res.destroyed && !res.writableEnded) run();
      });
      return;
    }
    run();
  }

  private dispatch(
    method: string,
    p: Json,
    prefix: string | undefined,
    res: ServerResponse,
    call: RecordedCall,
    ok: (r: unknown) => true,
    fail: (code: number, d: string, params?: Json) => true,
  ): Answered {
    switch (method) {
      case "getMe":
        return ok({
          ...this.bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        });
      case "getUpdates":
        return this.getUpdates(p, prefix, res, call, fail);
      case "setWebhook":
        this.webhook = {
          url: String(p.url),
          ...(p.secret_token ? { secret: String(p.secret_token) } : {}),
          allowed: (p.allowed_updates as string[] | undefined) ?? DEFAULT_ALLOWED,
        };
        if (this.poll) this.terminatePoll("Conflict: terminated by setWebhook request");
        ok(true);
        void this.deliverWebhook();
        return;
      case "deleteWebhook":
        this.webhook = undefined;
        if (p.drop_pending_updates) this.updates = [];
        return ok(true);
      case "getWebhookInfo":
        return ok({
          url: this.webhook?.url ?? "",
          has_custom_certificate: false,
          pending_update_count: this.pendingUpdates,
        });
      case "setMyCommands":
        this.commands.push((p.commands as Array<{ command: string; description: string }>) ?? []);
        return ok(true);
      case "sendChatAction":
        return this.chatOf(p, fail) ? ok(true) : undefined;
      case "answerCallbackQuery":
        return ok(true);
      case "sendMessage":
        return this.sendMessage(p, call, ok, fail);
      case "getFile": {
        const r = this.files.getFile(p);
        return "result" in r ? ok(r.result) : fail(r.code, r.description);
      }
      case "sendPhoto":
      case "sendDocument":
        return this.sendFile(method, p, call, ok, fail);
      case "editMessageText":
        return this.editMessageText(p, call, ok, fail);
      case "deleteMessage": {
        const msg = this.message(Number(p.chat_id), Number(p.message_id));
        if (!msg || msg.deleted) return fail(400, "Bad Request: message to delete not found");
        msg.deleted = true;
        return ok(true);
      }
      case "setMessageReaction": {
        const msg = this.message(Number(p.chat_id), Number(p.message_id));
        if (!msg || msg.deleted) return fail(400, "Bad Request: message to react not found");
        const list = (p.reaction as Array<{ type: string; emoji: string }> | undefined) ?? [];
        for (const r of list)
          if (!ALLOWED_REACTIONS.has(r.emoji)) return fail(400, "Bad Request: REACTION_INVALID");
        msg.botReactions = list.map((r) => r.emoji);
        return ok(true);
      }
      default:
        return fail(404, "Not Found");
    }
  }

  private getUpdates(
    p: Json,
    prefix: string | undefined,
    res: ServerResponse,
    call: RecordedCall,
    fail: (code: number, d: string) => true,
  ): Answered {
    if (this.webhook)
      return fail(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    const offset = Number(p.offset ?? 0);
    const limit = Math.min(100, Number(p.limit ?? 100));
    const timeout = Math.min(50, Number(p.timeout ?? 0));
    const allowed = (p.allowed_updates as string[] | undefined) ?? DEFAULT_ALLOWED;
    if (offset > 0) this.confirm(offset);
    if (this.poll)
      this.terminatePoll(
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      );
    const batch = this.eligible(offset, limit, allowed);
    call.status = 200;
    if (batch.length || timeout <= 0 || this.ignorePollTimeout) {
      this.answerUpdates(res, batch);
      return undefined;
    }
    const timer = setTimeout(() => {
      if (this.poll?.res === res) this.poll = undefined;
      send(res, 200, { ok: true, result: [] });
    }, timeout * 1000);
    this.poll = { res, timer, offset, limit, allowed };
    this.pollPrefix = prefix;
    res.on("close", () => {
      if (this.poll?.res === res) {
        clearTimeout(timer);
        this.poll = undefined;
      }
    });
    return undefined;
  }

  private terminatePoll(description: string): void {
    const p = this.poll;
    if (!p) return;
    clearTimeout(p.timer);
    this.poll = undefined;
    this.conflicts++;
    send(p.res, 409, { ok: false, error_code: 409, description });
  }

  private chatOf(p: Json, fail: (code: number, d: string) => true): FakeChat | undefined {
    const chat = this.chats.get(Number(p.chat_id));
    if (!chat) fail(400, "Bad Request: chat not found");
    return chat;
  }

  /** Flood control: GCRA per chat, so a client spacing its requests by the same rule never sees 429. */
  private flooded(
    chat: FakeChat,
    method: string,
    fail: (code: number, d: string, params?: Json) => true,
  ): boolean {
    if (this.storm && this.storm.remaining > 0 && this.storm.methods.includes(method)) {
      this.storm.remaining--;
      const s = this.storm.retryAfter;
      fail(429, `Too Many Requests: retry after ${s}`, { retry_after: s });
      return true;
    }
    const rule = chat.type === "private" ? this.privateRule : this.groupRule;
    if (!rule) return false;
    const now = this.now();
    const interval = rule.windowMs / rule.limit;
    const tat = Math.max(this.flood.get(chat.id) ?? 0, now);
    const allowAt = tat - (rule.windowMs - interval);
    if (allowAt > now) {
      const s = Math.max(1, Math.ceil((allowAt - now) / 1000));
      fail(429, `Too Many Requests: retry after ${s}`, { retry_after: s });
      return true;
    }
    this.flood.set(chat.id, tat + interval);
    return false;
  }

  private render(
    p: Json,
    fail: (code: number, d: string) => true,
  ): { text: string; entities?: Json[] } | undefined {
    const raw = typeof p.text === "string" ? p.text : "";
    let text = raw;
    let entities: Json[] | undefined;
    if (p.parse_mode === "HTML") {
      if (this.htmlRejections > 0) {
        this.htmlRejections--;
        fail(
          400,
          "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0",
        );
        return undefined;
      }
      const parsed = parseTelegramHtml(raw);
      if (!parsed.ok) {
        fail(400, parsed.error);
        return undefined;
      }
      text = parsed.text;
      entities = parsed.entities.length ? (parsed.entities as unknown as Json[]) : undefined;
    } else if (p.parse_mode) {
      fail(400, `Bad Request: unsupported parse_mode ${String(p.parse_mode)} in this fake`);
      return undefined;
    }
    // Telegram drops trailing whitespace (entities never cover it here).
    text = text.trimEnd();
    if (!text.trim()) {
      fail(400, "Bad Request: message text is empty");
      return undefined;
    }
    if (text.length > 4096) {
      fail(400, "Bad Request: message is too long");
      return undefined;
    }
    return entities ? { text, entities } : { text };
  }

  private sendMessage(
    p: Json,
    call: RecordedCall,
    ok: (r: unknown) => true,
    fail: (code: number, d: string, params?: Json) => true,
  ): Answered {
    const chat = this.chatOf(p, fail);
    if (!chat) return undefined;
    const content = this.render(p, fail);
    if (!content) return undefined;
    const rp = p.reply_parameters as
      | { message_id?: number; allow_sending_without_reply?: boolean }
      | undefined;
    let replyTo = rp?.message_id;
    if (replyTo !== undefined && !this.message(chat.id, replyTo)) {
      if (!rp?.allow_sending_without_reply) return fail(400, "Bad Request: message to be replied not found");
      replyTo = undefined;
    }
    const topic = p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
    if (topic !== undefined && !chat.is_forum && chat.type !== "private")
      return fail(400, "Bad Request: message thread not found");
    if (this.flooded(chat, "sendMessage", fail)) return undefined;
    call.visibleText = content.text;
    const msg = this.store(chat, this.bot, content.text, {
      ...(content.entities ? { entities: content.entities } : {}),
      ...(replyTo !== undefined ? { replyTo } : {}),
      ...(topic !== undefined ? { topic } : {}),
    });
    call.messageId = msg.message_id;
    return ok(this.wire(msg));
  }

  /** `sendPhoto` / `sendDocument`: a message with the uploaded file, its caption as the text. */
  private sendFile(
    method: string,
    p: Json,
    call: RecordedCall,
    ok: (r: unknown) => true,
    fail: (code: number, d: string, params?: Json) => true,
  ): Answered {
    const chat = this.chatOf(p, fail);
    if (!chat) return undefined;
    const upload = this.upload;
    const part = method === "sendPhoto" ? "photo" : "document";
    if (!upload || upload.part !== part) return fail(400, `Bad Request: there is no ${part} in the request`);
    if (this.files.tooLarge(method, upload.bytes.length)) return fail(413, "Request Entity Too Large");
    const content = p.caption === undefined ? { text: "" } : this.render({ ...p, text: p.caption }, fail);
    if (!content) return undefined;
    const rp = p.reply_parameters as { message_id?: number } | undefined;
    const replyTo =
      rp?.message_id !== undefined && this.message(chat.id, rp.message_id) ? rp.message_id : undefined;
    const topic = p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
    if (this.flooded(chat, method, fail)) return undefined;
    const file = this.files.add(upload.bytes, {
      name: upload.name,
      ...(upload.type ? { mimeType: upload.type } : {}),
      kind: part === "photo" ? "photos" : "documents",
    });
    call.visibleText = content.text;
    const msg = this.store(chat, this.bot, content.text, {
      ...(content.entities ? { entities: content.entities } : {}),
      ...(replyTo !== undefined ? { replyTo } : {}),
      ...(topic !== undefined ? { topic } : {}),
    });
    msg.file = { fileId: file.fileId, kind: part };
    call.messageId = msg.message_id;
    return ok(this.wire(msg));
  }

  /** The files the bot sent in a chat, with their captions. */
  botFiles(chatId: number): Array<{ messageId: number; name: string; bytes: Buffer; caption: string }> {
    return this.botMessages(chatId).flatMap((m) => {
      const f = m.file ? this.files.files.get(m.file.fileId) : undefined;
      return f ? [{ messageId: m.message_id, name: f.name ?? f.path, bytes: f.bytes, caption: m.text }] : [];
    });
  }

  private editMessageText(
    p: Json,
    call: RecordedCall,
    ok: (r: unknown) => true,
    fail: (code: number, d: string, params?: Json) => true,
  ): Answered {
    const chat = this.chatOf(p, fail);
    if (!chat) return undefined;
    const msg = this.message(chat.id, Number(p.message_id));
    if (!msg || msg.deleted) return fail(400, "Bad Request: message to edit not found");
    if (msg.from.id !== BOT_ID) return fail(400, "Bad Request: message can't be edited");
    const content = this.render(p, fail);
    if (!content) return undefined;
    if (
      content.text === msg.text &&
      JSON.stringify(content.entities ?? []) === JSON.stringify(msg.entities ?? [])
    ) {
      return fail(
        400,
        "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
      );
    }
    if (this.flooded(chat, "editMessageText", fail)) return undefined;
    call.visibleText = content.text;
    msg.text = content.text;
    if (content.entities) msg.entities = content.entities;
    else delete msg.entities;
    msg.edits++;
    return ok(this.wire(msg));
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}
