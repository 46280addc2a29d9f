/**
 * Files in the web chat, both ways: the page uploads a file (streamed into the upload store, which
 * every process shares) and sends its id with the message; the worker that answers downloads it
 * through the adapter like any platform's file. The bot's `send_file` puts the file into the same
 * store under an id made of its upload key (a repeat finds the first) and posts a message that
 * carries it; the page shows pictures inline and offers every file for download.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { fileTypeFromBuffer } from "file-type";
import {
  type AttachmentRef,
  ChannelError,
  type DownloadedFile,
  type MessageRef,
  type OutgoingFile,
} from "../types.js";
import { WebInputError } from "./errors.js";
import type { WebFile } from "./model.js";
import { type WebChatStore, type WebUploadStore, WebUploadTooLargeError } from "./store-types.js";

/** Pictures the page shows inline (anything else is offered for download only). */
export const INLINE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The type of a file from its first bytes: a known signature, else text or binary. */
async function typeOfHead(head: Buffer): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  if (found) return found.mime;
  if (head.includes(0)) return "application/octet-stream";
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, Math.max(0, head.length - 4)));
    return "text/plain";
  } catch {
    return "application/octet-stream";
  }
}

/** A file name as people see it: one line, at most 200 characters, never empty. */
function cleanName(name: string): string {
  const one = name
    .replace(/[\p{Cc}\s]+/gu, " ")
    .replace(/[/\\]/g, "_")
    .trim();
  return (one || "file").slice(0, 200);
}

/** The web chat's side of files; `maxBytes` is the largest file it takes or posts. */
export class WebFiles {
  constructor(
    private readonly uploads: WebUploadStore,
    private readonly store: WebChatStore,
    readonly maxBytes: number,
  ) {}

  /** The page uploads a file: stored, not yet on any message. */
  async receive(conversationId: string, name: string, body: AsyncIterable<Uint8Array>): Promise<WebFile> {
    if (!(await this.store.get(conversationId)))
      throw new WebInputError(404, `There is no conversation ${conversationId}.`);
    const id = `u${randomBytes(12).toString("base64url")}`;
    let stored: { size: number; head: Buffer };
    try {
      stored = await this.uploads.put(conversationId, id, body, this.maxBytes);
    } catch (e) {
      if (e instanceof WebUploadTooLargeError)
        throw new WebInputError(413, `The file is larger than the ${this.mb()} the web chat takes.`);
      throw e;
    }
    if (stored.size === 0) throw new WebInputError(400, "The file is empty.");
    return { id, name: cleanName(name), size: stored.size, type: await typeOfHead(stored.head) };
  }

  /** The files a message names (from a page's send): each must be in the store. */
  async check(conversationId: string, files: readonly WebFile[]): Promise<WebFile[]> {
    const out: WebFile[] = [];
    for (const f of files) {
      const found = await this.uploads.get(conversationId, f.id);
      if (!found)
        throw new WebInputError(400, `The file ${f.name} was not uploaded (or is gone); attach it again.`);
      const head = await readHead(found.body);
      out.push({ id: f.id, name: cleanName(f.name), size: found.size, type: await typeOfHead(head) });
    }
    return out;
  }

  /** An attachment's bytes (`ref.id` is `<conversation>/<file id>`). */
  async download(ref: AttachmentRef): Promise<DownloadedFile> {
    const [conversationId = "", id = ""] = ref.id.split("/");
    const found = await this.uploads.get(conversationId, id);
    if (!found)
      throw new ChannelError("not_found", `the web chat has no file ${ref.name ?? id} any more`, "web");
    return { body: found.body, sizeBytes: found.size };
  }

  /** The bot's message carrying a file uploaded with `key`, if there is one. */
  async findUploaded(conversationId: string, key: string): Promise<MessageRef | undefined> {
    const messages = (await this.store.messages(conversationId)) ?? [];
    return messages.find((m) => m.files?.some((f) => f.key === key))?.ref;
  }

  /** Stores `file` for a bot message (under its key when given); returns its `WebFile`. */
  async stage(conversationId: string, file: OutgoingFile, key: string | undefined): Promise<WebFile> {
    if (file.sizeBytes > this.maxBytes)
      throw new ChannelError("too_long", `the web chat takes files of at most ${this.mb()}`, "web");
    const id = key ? `k${key}` : `b${randomBytes(12).toString("base64url")}`;
    const stored = await this.uploads.put(
      conversationId,
      id,
      createReadStream(file.path) as AsyncIterable<Uint8Array>,
      this.maxBytes,
    );
    return {
      id,
      name: cleanName(file.name),
      size: stored.size,
      type: file.mimeType ?? (await typeOfHead(stored.head)),
      ...(key ? { key } : {}),
    };
  }

  private mb(): string {
    return `${Math.round((this.maxBytes / 1024 / 1024) * 10) / 10} MB`;
  }
}

/** The first 4,100 bytes of `body` (the rest is not read). */
async function readHead(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const it = body[Symbol.asyncIterator]();
  try {
    while (size < 4100) {
      const { value, done } = await it.next();
      if (done) break;
      chunks.push(Buffer.from(value));
      size += value.byteLength;
    }
  } finally {
    await it.return?.();
  }
  return Buffer.concat(chunks).subarray(0, 4100);
}
