/**
 * Files in the fake Slack, as the real one serves and takes them:
 *
 * - a file people posted is at its `url_private` (`/files-pri/<team>-<id>/<name>`), which answers
 *   only `Authorization: Bearer <bot token>`; without it Slack redirects to a sign-in page (HTML,
 *   HTTP 200 after the redirect), which is what a client that drops the token gets;
 * - the external upload flow: `files.getUploadURLExternal` (refused with `file_too_large` past
 *   `maxUploadBytes`) hands out `/upload/v1/<ticket>`, which takes the bytes (HTTP 413 past the
 *   length the ticket was made for); `files.completeUploadExternal` shares the file into a channel
 *   or thread as a message of the bot, with the caption as its text;
 * - `files.info` shows a file with its `shares` (the messages it is shared in).
 */
import { BOT_ID, BOT_USER_ID, type SlackWorld, TEAM_ID } from "./world.js";

type Json = Record<string, unknown>;

/** A file in the workspace. */
export interface FakeSlackFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  bytes: Buffer;
  user: string;
  /** channel → the messages sharing it. */
  shares: Map<string, Array<{ ts: string; threadTs?: string }>>;
}

export class SlackFiles {
  readonly files = new Map<string, FakeSlackFile>();
  private readonly tickets = new Map<
    string,
    { fileId: string; length: number; name: string; received?: Buffer }
  >();
  private seq = 0;
  /** Largest upload `files.getUploadURLExternal` accepts (Slack's: 1 GB). */
  maxUploadBytes = 1024 ** 3;
  /** Set by the server: its origin, for the addresses it hands out. */
  origin = "";

  constructor(
    private readonly world: SlackWorld,
    private readonly botToken: string,
  ) {}

  /** A file a user posts: its event shape (`files[]` of a `message` event). */
  userFile(opts: { name: string; bytes: Buffer; mimetype?: string; user: string }): Json {
    const id = `F${String(++this.seq).padStart(8, "0")}`;
    const file: FakeSlackFile = {
      id,
      name: opts.name,
      title: opts.name,
      mimetype: opts.mimetype ?? "application/octet-stream",
      bytes: opts.bytes,
      user: opts.user,
      shares: new Map(),
    };
    this.files.set(id, file);
    return this.wire(file);
  }

  /** A file as the Web API shows it. */
  wire(f: FakeSlackFile): Json {
    const shares: Json = {};
    for (const [channel, list] of f.shares) {
      const scope = channel.startsWith("C") ? "public" : "private";
      shares[scope] = {
        ...((shares[scope] as Json | undefined) ?? {}),
        [channel]: list.map((s) => ({ ts: s.ts, ...(s.threadTs ? { thread_ts: s.threadTs } : {}) })),
      };
    }
    return {
      id: f.id,
      name: f.name,
      title: f.title,
      mimetype: f.mimetype,
      size: f.bytes.length,
      user: f.user,
      url_private: `${this.origin}/files-pri/${TEAM_ID}-${f.id}/${encodeURIComponent(f.name)}`,
      url_private_download: `${this.origin}/files-pri/${TEAM_ID}-${f.id}/download/${encodeURIComponent(f.name)}`,
      shares,
    };
  }

  /** The files the bot shared into `channel`, in order. */
  botFiles(channel: string): FakeSlackFile[] {
    return [...this.files.values()].filter((f) => f.user === BOT_USER_ID && f.shares.has(channel));
  }

  /** The Web API methods on files; undefined for other methods. */
  api(method: string, p: Json): Json | undefined {
    if (method === "files.info") {
      const f = this.files.get(String(p.file ?? ""));
      return f ? { ok: true, file: this.wire(f) } : { ok: false, error: "file_not_found" };
    }
    if (method === "files.getUploadURLExternal") {
      const length = Number(p.length);
      const name = typeof p.filename === "string" ? p.filename : "";
      if (!name || !Number.isInteger(length) || length <= 0) return { ok: false, error: "invalid_arguments" };
      if (length > this.maxUploadBytes) return { ok: false, error: "file_too_large" };
      const fileId = `F${String(++this.seq).padStart(8, "0")}`;
      const ticket = `t${this.seq}x${Math.random().toString(36).slice(2, 8)}`;
      this.tickets.set(ticket, { fileId, length, name });
      return { ok: true, upload_url: `${this.origin}/upload/v1/${ticket}`, file_id: fileId };
    }
    if (method === "files.completeUploadExternal") return this.complete(p);
    return undefined;
  }

  private complete(p: Json): Json {
    const list = (typeof p.files === "string" ? JSON.parse(p.files) : p.files) as Array<{
      id: string;
      title?: string;
    }>;
    const channel = typeof p.channel_id === "string" ? p.channel_id : undefined;
    if (channel && !this.world.channels.has(channel)) return { ok: false, error: "channel_not_found" };
    const threadTs = typeof p.thread_ts === "string" && p.thread_ts ? p.thread_ts : undefined;
    const done: FakeSlackFile[] = [];
    for (const item of list ?? []) {
      const ticket = [...this.tickets.entries()].find(([, t]) => t.fileId === item.id);
      const received = ticket?.[1].received;
      if (!ticket || !received) return { ok: false, error: "file_not_found" };
      this.tickets.delete(ticket[0]);
      const file: FakeSlackFile = {
        id: item.id,
        name: ticket[1].name,
        title: item.title ?? ticket[1].name,
        mimetype: "application/octet-stream",
        bytes: received,
        user: BOT_USER_ID,
        shares: new Map(),
      };
      this.files.set(file.id, file);
      done.push(file);
    }
    if (channel && done.length > 0) {
      const msg = this.world.add({
        channel,
        user: BOT_USER_ID,
        botId: BOT_ID,
        text: typeof p.initial_comment === "string" ? p.initial_comment : "",
        ...(threadTs ? { threadTs } : {}),
        files: done.map((f) => ({ id: f.id, name: f.name })),
      });
      for (const f of done) f.shares.set(channel, [{ ts: msg.ts, ...(threadTs ? { threadTs } : {}) }]);
    }
    return { ok: true, files: done.map((f) => ({ id: f.id, title: f.title })) };
  }

  /** The HTTP routes outside the Web API; undefined when `path` is none of them. */
  http(
    method: string,
    path: string,
    auth: string | undefined,
    body: Buffer,
  ): { status: number; body: Buffer | string; headers: Record<string, string> } | undefined {
    const download = /^\/files-pri\/[A-Z0-9]+-(F\w+)\//.exec(path);
    if (download && method === "GET") {
      const f = this.files.get(download[1] ?? "");
      if (auth !== `Bearer ${this.botToken}`)
        return {
          status: 302,
          body: "",
          headers: { location: `${this.origin}/signin?redir=${encodeURIComponent(path)}` },
        };
      if (!f) return { status: 404, body: "file not found", headers: { "content-type": "text/plain" } };
      return {
        status: 200,
        body: f.bytes,
        headers: { "content-type": f.mimetype, "content-length": String(f.bytes.length) },
      };
    }
    if (path.startsWith("/signin") && method === "GET")
      return {
        status: 200,
        body: "<html><body>Sign in to Slack</body></html>",
        headers: { "content-type": "text/html" },
      };
    const upload = /^\/upload\/v1\/(\w+)$/.exec(path);
    if (upload && method === "POST") {
      const ticket = this.tickets.get(upload[1] ?? "");
      if (!ticket) return { status: 404, body: "unknown upload", headers: { "content-type": "text/plain" } };
      if (body.length !== ticket.length)
        return {
          status: 413,
          body: `expected ${ticket.length} bytes`,
          headers: { "content-type": "text/plain" },
        };
      ticket.received = body;
      return { status: 200, body: `OK - ${body.length}`, headers: { "content-type": "text/plain" } };
    }
    return undefined;
  }
}
