/**
 * The web chat's files in Redis (`WebUploadStore`), so any gateway serves and any worker fetches
 * them: one string per file, `<prefix>{web:<conversation>}:file:<id>`, hash-tagged with its
 * conversation and kept 30 days. An upload is streamed in with `APPEND` to a temporary key of the
 * same slot (never whole in memory) and renamed into place once whole (`RENAMENX`: a file that
 * exists stays as it is); a read streams it out with `GETRANGE` in 256 KB pieces.
 */
import { randomBytes } from "node:crypto";
import { threadKeyOf } from "../../adapters/web/ids.js";
import { type WebUploadStore, WebUploadTooLargeError } from "../../adapters/web/store-types.js";
import { WebChatKeys } from "../../redis-keys.js";
import type { RedisClient } from "../redis/client.js";

/** How long a file is kept after its upload. */
const FILE_TTL_MS = 30 * 24 * 3600_000;
/** How long a half-written upload may sit before Redis drops it. */
const PARTIAL_TTL_MS = 10 * 60_000;
const PIECE = 256 * 1024;
const HEAD = 4100;

export class RedisWebUploadStore implements WebUploadStore {
  private readonly keys: WebChatKeys;

  /** `prefix`: the key prefix (default `DEFAULT_KEY_PREFIX`). */
  constructor(
    private readonly redis: RedisClient,
    prefix?: string,
  ) {
    this.keys = new WebChatKeys(prefix);
  }

  private key(conversationId: string, id: string): string {
    return this.keys.file(threadKeyOf(conversationId), id);
  }

  async put(conversationId: string, id: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    const key = this.key(conversationId, id);
    const existing = await this.redis.strlen(key);
    if (existing > 0) return { size: existing, head: await this.redis.getrangeBuffer(key, 0, HEAD - 1) };
    const temp = `${key}:partial:${randomBytes(6).toString("hex")}`;
    const head: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (size > maxBytes) throw new WebUploadTooLargeError(maxBytes);
        const kept = head.reduce((n, b) => n + b.length, 0);
        if (kept < HEAD) head.push(Buffer.from(chunk.subarray(0, HEAD - kept)));
        await this.redis.append(temp, Buffer.from(chunk));
        if (size === chunk.byteLength) await this.redis.pexpire(temp, PARTIAL_TTL_MS);
      }
      if (size > 0) {
        await this.redis.renamenx(temp, key);
        await this.redis.pexpire(key, FILE_TTL_MS);
      }
    } finally {
      await this.redis.del(temp).catch(() => 0);
    }
    return { size, head: Buffer.concat(head) };
  }

  async get(conversationId: string, id: string) {
    const key = this.key(conversationId, id);
    const size = await this.redis.strlen(key);
    if (size === 0) return undefined;
    const redis = this.redis;
    async function* pieces(): AsyncIterable<Uint8Array> {
      for (let at = 0; at < size; at += PIECE)
        yield await redis.getrangeBuffer(key, at, Math.min(size, at + PIECE) - 1);
    }
    return { size, body: pieces() };
  }
}
