/**
 * Attachments in the fake Discord, as the real one serves and takes them:
 *
 * - an attachment's `url` is on the CDN (`/attachments/<channel>/<id>/<name>`) and signed: `ex`
 *   (when it expires, hex seconds), `is` (when it was issued) and `hm` (the signature). A URL without
 *   a valid signature, or past `ex`, answers 404 "This content is no longer available." (Discord's
 *   answer to an expired link); `POST /attachments/refresh-urls` (bot token) signs them again;
 * - a message with files is a `multipart/form-data` POST (`payload_json` plus `files[n]`), refused
 *   with 413 / code 40005 past `maxUploadBytes` per file (Discord's 10 MB for bots in servers
 *   without boosts).
 */
import { createHmac } from "node:crypto";

type Json = Record<string, unknown>;

/** A file attached to a message. */
export interface FakeAttachment {
  id: string;
  channelId: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** How long a signed link lasts (Discord: 24 hours). */
const LINK_MS = 24 * 3600_000;

export class DiscordCdn {
  readonly attachments = new Map<string, FakeAttachment>();
  /** Largest file a bot may attach (Discord: 10 MB without boosts). */
  maxUploadBytes = 10 * 1024 * 1024;
  origin = "";
  private readonly secret = `cdn-${Math.random().toString(36).slice(2)}`;

  constructor(private readonly now: () => number) {}

  /** Stores a file and returns its attachment object for a message. */
  add(a: FakeAttachment): Json {
    this.attachments.set(a.id, a);
    return this.wire(a);
  }

  wire(a: FakeAttachment): Json {
    const url = this.signed(
      `${this.origin}/attachments/${a.channelId}/${a.id}/${encodeURIComponent(a.filename)}`,
    );
    return {
      id: a.id,
      filename: a.filename,
      size: a.bytes.length,
      url,
      proxy_url: url,
      content_type: a.contentType,
    };
  }

  /** `url` (without a query) signed from now. */
  private signed(base: string): string {
    const ex = Math.floor((this.now() + LINK_MS) / 1000).toString(16);
    const is = Math.floor(this.now() / 1000).toString(16);
    return `${base}?ex=${ex}&is=${is}&hm=${this.mac(new URL(base).pathname, ex)}&`;
  }

  private mac(path: string, ex: string): string {
    return createHmac("sha256", this.secret).update(`${path}|${ex}`).digest("hex");
  }

  /** `POST /attachments/refresh-urls`: each URL signed again. */
  refresh(body: Json | undefined): Json {
    const urls = Array.isArray(body?.attachment_urls) ? (body.attachment_urls as string[]) : [];
    return {
      refreshed_urls: urls.map((original) => {
        const u = new URL(original);
        return { original, refreshed: this.signed(`${u.origin}${u.pathname}`) };
      }),
    };
  }

  /** `GET /attachments/…`: the bytes, or Discord's answer to a link that is no longer valid. */
  get(
    path: string,
    query: URLSearchParams,
  ): { status: number; body: Buffer | string; headers: Record<string, string> } {
    const m = /^\/attachments\/(\d+)\/(\d+)\//.exec(path);
    const a = m ? this.attachments.get(m[2] ?? "") : undefined;
    const ex = query.get("ex") ?? "";
    const valid =
      a !== undefined &&
      query.get("hm") === this.mac(path, ex) &&
      Number.parseInt(ex, 16) * 1000 > this.now();
    if (!a || !valid)
      return {
        status: 404,
        body: "This content is no longer available.",
        headers: { "content-type": "text/plain" },
      };
    return {
      status: 200,
      body: a.bytes,
      headers: { "content-type": a.contentType, "content-length": String(a.bytes.length) },
    };
  }

  /** The files of a multipart message body, or the error Discord answers. */
  async filesOf(
    raw: Buffer,
    contentType: string,
  ): Promise<
    | { payload: Json; files: Array<{ filename: string; contentType: string; bytes: Buffer }> }
    | { error: Json; status: number }
  > {
    const form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
    const payload = JSON.parse(String(form.get("payload_json") ?? "{}")) as Json;
    const files: Array<{ filename: string; contentType: string; bytes: Buffer }> = [];
    for (const [key, value] of form.entries()) {
      if (!key.startsWith("files[") || typeof value === "string") continue;
      const bytes = Buffer.from(await value.arrayBuffer());
      if (bytes.length > this.maxUploadBytes)
        return { status: 413, error: { code: 40005, message: "Request entity too large" } };
      files.push({ filename: value.name, contentType: value.type || "application/octet-stream", bytes });
    }
    return { payload, files };
  }
}
