/**
 * Two `WebUploadStore`s (the seam is in store-types.ts): in memory for one process and the tests,
 * and one folder per conversation under `<dataDir>/web/files` for the embedded mode. A file is
 * streamed to a temporary name and renamed into place once whole, so a reader never sees half of
 * one and a crash leaves no file behind. Files are kept 30 days after their upload, as Redis keeps
 * them (`sweep` removes older ones and interrupted uploads' leftovers).
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
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

/** How long an uploaded file is kept (the Redis store's key lifetime). */
export const WEB_FILE_TTL_MS = 30 * 24 * 3600_000;
/** A `.partial-` file older than this is a leftover of an upload that never finished. */
const PARTIAL_TTL_MS = 3600_000;

/** Files under `dir/<conversation>/<id>`, each kept `ttlMs` after its upload. */
export class DirWebUploadStore implements WebUploadStore {
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly dir: string,
    o: { ttlMs?: number; now?: () => number } = {},
  ) {
    this.ttlMs = o.ttlMs ?? WEB_FILE_TTL_MS;
    this.now = o.now ?? Date.now;
  }

  /**
   * Removes files uploaded more than the keeping time ago, leftovers of uploads interrupted over an
   * hour ago, and conversation folders left empty. Resolves with how many files went; never rejects
   * (a file that cannot be removed now is tried at the next sweep).
   */
  async sweep(): Promise<number> {
    let removed = 0;
    const conversations = await readdir(this.dir).catch(() => [] as string[]);
    for (const conversation of conversations) {
      const folder = join(this.dir, conversation);
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        const path = join(folder, name);
        const st = await stat(path).catch(() => undefined);
        if (!st?.isFile()) continue;
        const limit = name.includes(".partial-") ? PARTIAL_TTL_MS : this.ttlMs;
        if (this.now() - st.mtimeMs <= limit) continue;
        if (
          await rm(path, { force: true }).then(
            () => true,
            () => false,
          )
        )
          removed++;
      }
      // Only when empty (rmdir refuses otherwise): a folder still in use stays.
      await rmdir(folder).catch(() => undefined);
    }
    return removed;
  }

  /** Sweeps now and every `intervalMs` until the returned function is called. */
  sweepEvery(intervalMs: number, onError: (err: unknown) => void): () => void {
    const run = () => {
      this.sweep().catch(onError);
    };
    run();
    const timer = setInterval(run, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

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
    // Past its keeping time a file is gone, swept yet or not.
    if (!st?.isFile() || this.now() - st.mtimeMs > this.ttlMs) return undefined;
    return { size: st.size, body: createReadStream(path) as AsyncIterable<Uint8Array> };
  }
}
