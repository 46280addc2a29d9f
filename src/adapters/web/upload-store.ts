/**
 * Two `WebUploadStore`s (the seam is in store-types.ts): in memory for one process and the tests,
 * and one folder per conversation under `<dataDir>/web/files` for the embedded mode. A file is
 * streamed to a temporary name and renamed into place once whole, so a reader never sees half of
 * one and a crash leaves no file behind.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { isConversationId } from "./ids.js";
import { type WebUploadStore, WebUploadTooLargeError } from "./store-types.js";

/** The first bytes kept for sniffing a file's type (what `file-type` reads). */
const HEAD = 4100;

/** Reads `body` whole, at most `maxBytes` (else `WebUploadTooLargeError`), keeping its head apart. */
async function* counted(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  seen: { size: number; head: Buffer[] },
): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    seen.size += chunk.byteLength;
    if (seen.size > maxBytes) throw new WebUploadTooLargeError(maxBytes);
    const kept = seen.head.reduce((n, b) => n + b.length, 0);
    if (kept < HEAD) seen.head.push(Buffer.from(chunk.subarray(0, HEAD - kept)));
    yield chunk;
  }
}

/** Files in this process's memory. */
export class MemoryWebUploadStore implements WebUploadStore {
  private readonly files = new Map<string, Buffer>();

  async put(conversationId: string, id: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    const key = `${conversationId}/${id}`;
    const existing = this.files.get(key);
    if (existing) return { size: existing.length, head: existing.subarray(0, HEAD) };
    const seen = { size: 0, head: [] as Buffer[] };
    const chunks: Buffer[] = [];
    for await (const chunk of counted(body, maxBytes, seen)) chunks.push(Buffer.from(chunk));
    const data = Buffer.concat(chunks);
    this.files.set(key, data);
    return { size: data.length, head: data.subarray(0, HEAD) };
  }

  /** A file's bytes now (tests read what a person would download). */
  bytesOf(conversationId: string, id: string): Buffer | undefined {
    return this.files.get(`${conversationId}/${id}`);
  }

  async get(conversationId: string, id: string) {
    const data = this.files.get(`${conversationId}/${id}`);
    if (!data) return undefined;
    return {
      size: data.length,
      body: (async function* () {
        yield data;
      })(),
    };
  }
}

/** Files under `dir/<conversation>/<id>`. */
export class DirWebUploadStore implements WebUploadStore {
  constructor(private readonly dir: string) {}

  private pathOf(conversationId: string, id: string): string {
    if (!isConversationId(conversationId) || !/^[A-Za-z0-9_-]{1,64}$/.test(id))
      throw new Error(`web chat: "${conversationId}/${id}" is not a file id`);
    return join(this.dir, conversationId, id);
  }

  async put(conversationId: string, id: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    const path = this.pathOf(conversationId, id);
    const existing = await stat(path).catch(() => undefined);
    if (existing) {
      const handle = await open(path, "r");
      try {
        const head = Buffer.alloc(HEAD);
        const { bytesRead } = await handle.read(head, 0, HEAD, 0);
        return { size: existing.size, head: head.subarray(0, bytesRead) };
      } finally {
        await handle.close();
      }
    }
    await mkdir(join(this.dir, conversationId), { recursive: true });
    const temp = `${path}.partial-${randomBytes(6).toString("hex")}`;
    const seen = { size: 0, head: [] as Buffer[] };
    const handle = await open(temp, "wx", 0o600);
    try {
      for await (const chunk of counted(body, maxBytes, seen)) await handle.write(chunk);
      await handle.close();
      await rename(temp, path);
    } catch (e) {
      await handle.close().catch(() => {});
      await rm(temp, { force: true });
      throw e;
    }
    return { size: seen.size, head: Buffer.concat(seen.head) };
  }

  async get(conversationId: string, id: string) {
    const path = this.pathOf(conversationId, id);
    const st = await stat(path).catch(() => undefined);
    if (!st?.isFile()) return undefined;
    return { size: st.size, body: createReadStream(path) as AsyncIterable<Uint8Array> };
  }
}
