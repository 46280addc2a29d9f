/**
 * File access for the file tools that cannot block and cannot be redirected: a path is looked at
 * with `lstat` first and refused unless it is a regular file (a FIFO, socket or device never gets
 * opened), then opened with `O_NONBLOCK | O_NOFOLLOW | O_NOCTTY` and checked again with `fstat`
 * (the same file, still regular), so a swap between the check and the open is caught. Reads and
 * writes go in bounded chunks and stop when the run is stopped.
 *
 * Why it matters: an `open` of a FIFO without O_NONBLOCK waits for a writer forever, holding one of
 * the four threads of Node's pool; four such calls stall every file and DNS operation of the
 * process, and shutdown with it.
 */
import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";

const { O_RDONLY, O_WRONLY, O_CREAT, O_NONBLOCK, O_NOFOLLOW, O_NOCTTY } = constants;
const READ_FLAGS = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY;
const WRITE_FLAGS = O_WRONLY | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY;
const CHUNK = 64 * 1024;

/** What kind of thing `st` is, in words, when it is neither a regular file nor a directory. */
export function specialKind(st: Stats): string | undefined {
  if (st.isFile() || st.isDirectory()) return undefined;
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSymbolicLink()) return "a symlink";
  return "not a regular file";
}

function refuse(shown: string, kind: string): Error {
  return new Error(
    `"${shown}" is ${kind}; the file tools only open regular files and list directories. ` +
      "Use bash for anything else.",
  );
}

/** Throws the "stopped" error when `signal` has aborted. */
export function throwIfStopped(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new Error("Stopped: the run was stopped, so the file operation was not finished.");
}

/** `lstat`, or undefined when nothing is there. */
export async function lstatOrMissing(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw e;
  }
}

function openError(e: unknown, shown: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ELOOP") return refuse(shown, "a symlink");
  if (code === "ENXIO" || code === "ENODEV" || code === "EOPNOTSUPP")
    return refuse(shown, "not a regular file");
  return e as Error;
}

/** The handle must be the regular file `before` described (not swapped since the lstat). */
async function verifySame(handle: FileHandle, before: Stats | undefined, shown: string): Promise<Stats> {
  const after = await handle.stat();
  const kind = specialKind(after);
  if (kind || after.isDirectory()) {
    await handle.close();
    throw refuse(shown, kind ?? "a directory");
  }
  if (before && (after.ino !== before.ino || after.dev !== before.dev)) {
    await handle.close();
    throw new Error(`"${shown}" changed while it was being opened; try again.`);
  }
  return after;
}

/**
 * Reads the regular file at `path` whole, refusing anything else and anything over `maxBytes`.
 * `shown` is the path as messages name it.
 */
export async function readRegularFile(
  path: string,
  shown: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Buffer> {
  throwIfStopped(signal);
  const before = await lstatOrMissing(path);
  if (!before) throw new Error(`File "${shown}" does not exist.`);
  if (before.isDirectory()) throw new Error(`"${shown}" is a directory; use ls to list it.`);
  const kind = specialKind(before);
  if (kind) throw refuse(shown, kind);
  const tooBig = (size: number) =>
    new Error(
      `File "${shown}" is ${size} bytes, more than the ${maxBytes} bytes this tool opens; use bash (head, sed -n) for parts of it.`,
    );
  if (before.size > maxBytes) throw tooBig(before.size);
  let handle: FileHandle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (e) {
    throw openError(e, shown);
  }
  await verifySame(handle, before, shown);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      throwIfStopped(signal);
      const buf = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await handle.read(buf, 0, CHUNK, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooBig(total);
      chunks.push(buf.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/** Who files created by the tools belong to (the sandbox's account, when it is not the gateway's). */
export interface FileOwner {
  uid: number;
  gid: number;
}

/**
 * Replaces the content of the regular file at `path` with `data`, creating it (mode 0644, owned by
 * `owner` when given) when missing. Refuses anything that is not a regular file, and a file with
 * other hard links (it could be a file outside the workspace under another name).
 */
export async function writeRegularFile(
  path: string,
  shown: string,
  data: Buffer,
  options: { signal?: AbortSignal; owner?: FileOwner } = {},
): Promise<void> {
  throwIfStopped(options.signal);
  const before = await lstatOrMissing(path);
  if (before?.isDirectory()) throw new Error(`"${shown}" is a directory; write needs a file path.`);
  const kind = before && specialKind(before);
  if (kind) throw refuse(shown, kind);
  if (before && before.nlink > 1) {
    throw new Error(
      `"${shown}" has ${before.nlink - 1} other hard link(s); the file tools do not change such files. Copy it first (cp --remove-destination).`,
    );
  }
  let handle: FileHandle;
  try {
    handle = await open(path, WRITE_FLAGS, 0o644);
  } catch (e) {
    throw openError(e, shown);
  }
  const after = await verifySame(handle, before, shown);
  try {
    if (after.nlink > 1)
      throw new Error(`"${shown}" gained a hard link while it was being opened; try again.`);
    if (!before && options.owner) await handle.chown(options.owner.uid, options.owner.gid);
    await handle.truncate(0);
    let offset = 0;
    while (offset < data.length) {
      throwIfStopped(options.signal);
      const { bytesWritten } = await handle.write(
        data,
        offset,
        Math.min(CHUNK, data.length - offset),
        offset,
      );
      offset += bytesWritten;
    }
  } finally {
    await handle.close();
  }
}

/** The first bytes of `data` contain a NUL: treat as binary. */
export function looksBinary(data: Buffer): boolean {
  return data.subarray(0, 4096).includes(0);
}
