/**
 * Writing a download into the workspace without holding it in memory and without being redirected:
 * the bytes stream into a new temporary file in the target folder (created exclusively, never
 * following a symlink), counted as they come; past `maxBytes` the download stops and the file is
 * removed. The finished file is then renamed into place (a rename replaces a symlink at the final
 * name instead of following it) and given to the sandbox's account.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { SwitchboardError } from "../../agent/errors.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A download that turned out larger than it may be (the platform's stated size was wrong or absent). */
export class FileTooLargeError extends SwitchboardError {
  constructor(
    readonly limitBytes: number,
    readonly seenBytes: number,
  ) {
    super("attachments.too_large", `The file is larger than ${limitBytes} bytes (read ${seenBytes}).`);
  }
}

/** Who written files belong to (the sandbox's account), when it is not the gateway's. */
export interface FileOwner {
  uid: number;
  gid: number;
}

/**
 * Streams `body` into `dir/name` (the folder must exist and be checked by the caller), at most
 * `maxBytes`; returns the number of bytes written. Rejects with `FileTooLargeError` past the limit,
 * or with whatever the body or the disk threw; nothing is left behind then.
 */
export async function saveStream(
  body: AsyncIterable<Uint8Array>,
  dir: string,
  name: string,
  maxBytes: number,
  owner?: FileOwner,
): Promise<number> {
  const temp = join(dir, `.partial-${randomBytes(6).toString("hex")}`);
  let handle: FileHandle | undefined;
  let bytes = 0;
  try {
    handle = await open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o644);
    const iterator = body[Symbol.asyncIterator]();
    try {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) break;
        bytes += value.byteLength;
        if (bytes > maxBytes) throw new FileTooLargeError(maxBytes, bytes);
        let offset = 0;
        while (offset < value.byteLength) {
          const { bytesWritten } = await handle.write(value, offset, value.byteLength - offset);
          offset += bytesWritten;
        }
      }
    } finally {
      // Ends the request when the loop stopped early (a limit, a disk error).
      await iterator.return?.();
    }
    if (owner) await handle.chown(owner.uid, owner.gid);
    await handle.close();
    handle = undefined;
    await rename(temp, join(dir, name));
    return bytes;
  } catch (e) {
    await handle?.close().catch(() => {});
    await rm(temp, { force: true }).catch(() => {});
    throw e;
  }
}
