/**
 * Files in the fake Bot API, as Telegram serves and takes them:
 *
 * - `getFile` turns a `file_id` into a `file_path` ("Bad Request: file is too big" past 20 MB,
 *   "Bad Request: invalid file_id" for an unknown one); the bytes are at
 *   `/file/bot<token>/<file_path>` (404 with a wrong token);
 * - `sendPhoto` / `sendDocument` are multipart requests (the file in the `photo` / `document` part,
 *   the other fields as form fields); a photo over 10 MB or a document over 50 MB is refused with
 *   413 "Request Entity Too Large".
 */

type Json = Record<string, unknown>;

/** A file Telegram holds. */
export interface FakeTelegramFile {
  fileId: string;
  path: string;
  name?: string;
  mimeType?: string;
  bytes: Buffer;
}

const MB = 1024 * 1024;

export class TelegramFiles {
  readonly files = new Map<string, FakeTelegramFile>();
  private seq = 0;

  /** Stores a file; returns it (its `file_id` goes into a message's `document` or `photo`). */
  add(
    bytes: Buffer,
    opts: { name?: string; mimeType?: string; kind?: "photos" | "documents" } = {},
  ): FakeTelegramFile {
    const n = ++this.seq;
    const ext = opts.name?.includes(".") ? opts.name.slice(opts.name.lastIndexOf(".")) : "";
    const file: FakeTelegramFile = {
      fileId: `BQACAgIAAx${n}file${Math.random().toString(36).slice(2, 10)}`,
      path: `${opts.kind ?? "documents"}/file_${n}${ext}`,
      bytes,
      ...(opts.name ? { name: opts.name } : {}),
      ...(opts.mimeType ? { mimeType: opts.mimeType } : {}),
    };
    this.files.set(file.fileId, file);
    return file;
  }

  /** A message's `document` field for `file`. */
  document(f: FakeTelegramFile): Json {
    return {
      file_id: f.fileId,
      file_unique_id: `u${f.fileId.slice(-8)}`,
      file_size: f.bytes.length,
      ...(f.name ? { file_name: f.name } : {}),
      ...(f.mimeType ? { mime_type: f.mimeType } : {}),
    };
  }

  /** A message's `photo` field for `file` (one size). */
  photo(f: FakeTelegramFile): Json[] {
    return [
      {
        file_id: f.fileId,
        file_unique_id: `u${f.fileId.slice(-8)}`,
        file_size: f.bytes.length,
        width: 100,
        height: 100,
      },
    ];
  }

  /** `getFile`: the result, or the failure Telegram answers. */
  getFile(p: Json): { result: Json } | { code: number; description: string } {
    const f = this.files.get(String(p.file_id ?? ""));
    if (!f) return { code: 400, description: "Bad Request: invalid file_id" };
    if (f.bytes.length > 20 * MB) return { code: 400, description: "Bad Request: file is too big" };
    return {
      result: {
        file_id: f.fileId,
        file_unique_id: `u${f.fileId.slice(-8)}`,
        file_size: f.bytes.length,
        file_path: f.path,
      },
    };
  }

  /** `GET /file/bot<token>/<path>`. */
  download(path: string, tokenOk: boolean): { status: number; body: Buffer | string } {
    const f = [...this.files.values()].find((x) => x.path === path);
    if (!tokenOk || !f)
      return { status: 404, body: JSON.stringify({ ok: false, error_code: 404, description: "Not Found" }) };
    return { status: 200, body: f.bytes };
  }

  /**
   * The parameters and file of a multipart request; `part` names the file's field (`photo`,
   * `document`). A file past the method's limit gives `tooLarge`.
   */
  async multipart(
    raw: Buffer,
    contentType: string,
  ): Promise<{ params: Json; upload?: { part: string; name: string; bytes: Buffer; type: string } }> {
    const params: Json = {};
    let upload: { part: string; name: string; bytes: Buffer; type: string } | undefined;
    for (const part of parseMultipart(raw, contentType)) {
      if (part.filename === undefined) {
        const value = part.body.toString("utf8");
        params[part.name] = /^[[{]/.test(value) ? JSON.parse(value) : value;
        continue;
      }
      upload = { part: part.name, name: part.filename, bytes: part.body, type: part.type ?? "" };
    }
    // grammY sends the file as `attach://<id>` in the field and the bytes under that id.
    for (const [key, value] of Object.entries(params)) {
      if (typeof value === "string" && value.startsWith("attach://") && upload) {
        upload = { ...upload, part: key };
        delete params[key];
      }
    }
    return { params, ...(upload ? { upload } : {}) };
  }

  /** Whether a sent file is over the method's limit. */
  tooLarge(method: string, bytes: number): boolean {
    return bytes > (method === "sendPhoto" ? 10 * MB : 50 * MB);
  }
}

/**
 * The parts of a `multipart/form-data` body. Lenient as Telegram is: grammY writes its headers
 * without spaces and file names without quotes, which a strict parser refuses.
 */
function parseMultipart(
  raw: Buffer,
  contentType: string,
): Array<{ name: string; filename?: string; type?: string; body: Buffer }> {
  const boundary = /boundary=("?)([^";]+)\1/i.exec(contentType)?.[2];
  if (!boundary) throw new Error("multipart body without a boundary");
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Array<{ name: string; filename?: string; type?: string; body: Buffer }> = [];
  let at = raw.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (raw.subarray(start, start + 2).toString() === "--") break;
    const next = raw.indexOf(delimiter, start);
    if (next < 0) break;
    const chunk = raw.subarray(start + 2, next - 2);
    const split = chunk.indexOf("\r\n\r\n");
    const head = chunk.subarray(0, split).toString("utf8");
    const body = chunk.subarray(split + 4);
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(head)?.[1] ?? "";
    const field = (key: string) => new RegExp(`${key}=("([^"]*)"|([^;\\s]*))`, "i").exec(disposition);
    const name = field("name");
    const filename = /filename=/i.test(disposition) ? field("filename") : null;
    const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim();
    parts.push({
      name: name?.[2] ?? name?.[3] ?? "",
      ...(filename ? { filename: filename[2] ?? filename[3] ?? "" } : {}),
      ...(type ? { type } : {}),
      body,
    });
    at = next;
  }
  return parts;
}
