/**
 * Confinement of the file tools to a thread's workspace directory. A path is accepted only when it
 * stays inside the workspace both as written (no `..` or absolute path leading out) and after
 * resolving symlinks (`realpath` of the path, or of its deepest existing ancestor for a file that
 * does not exist yet). A dangling symlink is refused, since where it points cannot be checked.
 *
 * This is a check at the moment of the call: a process that swaps a directory for a symlink
 * between the check and the use could escape. In a sandbox nothing can: every process a `bash` call
 * starts is gone before the next tool call of the thread runs, and other threads' commands cannot
 * see this workspace. Without a sandbox, do not share a workspace with untrusted processes. The
 * final component is opened with `O_NOFOLLOW` and checked again after opening (`safe-fs.ts`).
 */

import { createHash } from "node:crypto";
import { chown, lchown, lstat, mkdir, readdir, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { SwitchboardError } from "../../agent/errors.js";

/** A path the tools refuse; its message says why and what to use instead. */
export class WorkspacePathError extends SwitchboardError {
  constructor(message: string) {
    super("workspace.path_refused", message);
  }
}

function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

function outside(input: string, why: string): WorkspacePathError {
  return new WorkspacePathError(
    `Path "${input}" ${why}. Only paths inside the workspace are allowed; use a path relative to the workspace root.`,
  );
}

function errorCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * The absolute, symlink-free path `input` names inside the workspace `root` (relative paths start
 * at the root). `alias` is where commands see the workspace (`/workspace` in the sandbox): an
 * absolute path under it means the same place. Throws `WorkspacePathError` for a path that leaves
 * the workspace in any way.
 */
export async function resolveInWorkspace(root: string, input: string, alias?: string): Promise<string> {
  if (input.includes("\0")) throw outside(input.replaceAll("\0", "\\0"), "contains a NUL character");
  if (alias && (input === alias || input.startsWith(`${alias}/`))) {
    const inside = input.slice(alias.length).replace(/^\/+/, "");
    return resolveInWorkspace(root, inside === "" ? "." : inside);
  }
  const rootReal = await realpath(root);
  const candidate = isAbsolute(input) ? resolve(input) : resolve(rootReal, input);
  if (!isWithin(rootReal, candidate) && !isWithin(resolve(root), candidate)) {
    throw outside(input, "is outside the workspace");
  }
  const missing: string[] = [];
  let existing = candidate;
  for (;;) {
    try {
      const real = await realpath(existing);
      if (!isWithin(rootReal, real)) throw outside(input, "leads outside the workspace through a symlink");
      return missing.length > 0 ? join(real, ...missing.reverse()) : real;
    } catch (e) {
      if (e instanceof WorkspacePathError) throw e;
      if (errorCode(e) !== "ENOENT" && errorCode(e) !== "ENOTDIR") throw e;
      const link = await lstat(existing).catch(() => undefined);
      if (link?.isSymbolicLink()) throw outside(input, "is a symlink whose target does not exist");
      const parent = dirname(existing);
      if (parent === existing) throw outside(input, "cannot be resolved");
      missing.push(basename(existing));
      existing = parent;
    }
  }
}

/** A path relative to the workspace root, for messages (`.` for the root itself). */
export function displayPath(root: string, absolute: string): string {
  return relative(root, absolute) || ".";
}

/** A directory name for a thread key: readable, filesystem-safe, and unique per key. */
export function workspaceDirName(threadKey: string): string {
  const readable = threadKey.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
  const hash = createHash("sha256").update(threadKey).digest("hex").slice(0, 8);
  return `${readable}-${hash}`;
}

/**
 * The workspace of `threadKey` under `root`, created when missing; returns its real path. With
 * `owner` (the account sandboxed commands run as, when it is not the gateway's), the workspace is
 * given to it so that commands can write there: the directory, and everything in it the first time
 * it is found belonging to someone else (a workspace from before the sandbox).
 */
export async function ensureWorkspace(
  root: string,
  threadKey: string,
  owner?: { uid: number; gid: number },
): Promise<string> {
  const dir = join(root, workspaceDirName(threadKey));
  await mkdir(dir, { recursive: true });
  const real = await realpath(dir);
  if (owner) {
    const st = await lstat(real);
    if (st.uid !== owner.uid || st.gid !== owner.gid) {
      for (const entry of await readdir(real, { recursive: true })) {
        // lchown: a symlink is given away itself, never what it points to.
        await lchown(join(real, entry), owner.uid, owner.gid).catch(() => {});
      }
      await chown(real, owner.uid, owner.gid);
    }
  }
  return real;
}
