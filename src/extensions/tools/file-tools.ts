/**
 * The file tools, confined to the thread's workspace: `read` (line window, size caps), `write`
 * (creates parent directories), `edit` (one exact, unique replacement), `ls`. They only ever open
 * regular files and list directories: a FIFO, socket or device is refused before anything opens it,
 * so no call can block (see `safe-fs.ts`). They stop when the run is stopped. Refused paths and other
 * failures are thrown with messages for the model, which the engine turns into error results.
 */
import { chown, mkdir, opendir } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import type { ExtensionTool } from "../types.js";
import type { WorkspaceQuota } from "./quota.js";
import {
  type FileOwner,
  looksBinary,
  lstatOrMissing,
  readRegularFile,
  specialKind,
  throwIfStopped,
  writeRegularFile,
} from "./safe-fs.js";
import { displayPath, resolveInWorkspace } from "./workspace.js";

export interface FileToolOptions {
  /** Largest file `read` and `edit` open. Default 5 MB. */
  maxFileBytes?: number;
  /** Most text `read` returns in one call. Default 50 000 bytes. */
  maxReadBytes?: number;
  /** Most lines `read` returns when no limit is given. Default 2000. */
  defaultReadLines?: number;
  /** Largest content `write` accepts. Default 5 MB. */
  maxWriteBytes?: number;
  /** Most entries `ls` lists. Default 500. */
  maxListEntries?: number;
  /** Where commands see the workspace (`/workspace` in the sandbox); absolute paths under it are accepted. */
  workspaceAlias?: string;
  /** Who new files and directories belong to (the sandbox's account, when it is not the gateway's). */
  owner?: FileOwner;
  /** The workspace quota `write` and `edit` keep to. */
  quota?: WorkspaceQuota;
}

type Workspace = () => Promise<string>;

/**
 * Where a file tool's `relative` path leads in the workspace: the workspace root, the resolved path
 * (refused when it leads out) and the path as shown to the model. Throws when the call is stopped.
 */
async function locate(
  workspace: Workspace,
  relative: string,
  options: FileToolOptions,
  signal: AbortSignal | undefined,
): Promise<{ root: string; path: string; shown: string }> {
  throwIfStopped(signal);
  const root = await workspace();
  const path = await resolveInWorkspace(root, relative, options.workspaceAlias);
  return { root, path, shown: displayPath(root, path) };
}

function text(t: string) {
  return [{ type: "text" as const, text: t }];
}

/** Creates the missing parents of `path`, giving each new directory to `owner`. */
async function makeParents(path: string, owner: FileOwner | undefined): Promise<void> {
  const parent = dirname(path);
  const first = await mkdir(parent, { recursive: true });
  if (first === undefined || !owner) return;
  let dir = first;
  await chown(dir, owner.uid, owner.gid);
  const rest = relative(first, parent);
  for (const part of rest === "" ? [] : rest.split(sep)) {
    dir = join(dir, part);
    await chown(dir, owner.uid, owner.gid);
  }
}

export const readParameters = Type.Object({
  path: Type.String({ description: "File path, relative to the workspace" }),
  offset: Type.Optional(Type.Integer({ description: "First line to read (1-based)", minimum: 1 })),
  limit: Type.Optional(Type.Integer({ description: "Number of lines to read", minimum: 1 })),
});

export function createReadTool(
  workspace: Workspace,
  options: FileToolOptions = {},
): ExtensionTool<typeof readParameters> {
  const maxFile = options.maxFileBytes ?? 5_000_000;
  const maxRead = options.maxReadBytes ?? 50_000;
  const defaultLines = options.defaultReadLines ?? 2000;
  return {
    name: "read",
    label: "read",
    description: `Read a text file in the workspace. Returns up to ${defaultLines} lines or ${maxRead} bytes; use offset and limit for more.`,
    parameters: readParameters,
    async execute(_id, params: Static<typeof readParameters>, signal) {
      const { path, shown } = await locate(workspace, params.path, options, signal);
      const data = await readRegularFile(path, shown, maxFile, signal);
      if (looksBinary(data)) throw new Error(`File "${shown}" looks binary; read only opens text files.`);
      const lines = data.toString("utf8").split("\n");
      if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
      const start = (params.offset ?? 1) - 1;
      if (start >= lines.length && lines.length > 0) {
        throw new Error(`Offset ${params.offset} is past the end of "${shown}" (${lines.length} lines).`);
      }
      const wanted = lines.slice(start, start + (params.limit ?? defaultLines));
      const out: string[] = [];
      let bytes = 0;
      for (const line of wanted) {
        const size = Buffer.byteLength(line, "utf8") + 1;
        if (bytes + size > maxRead && out.length > 0) break;
        out.push(line);
        bytes += size;
      }
      const last = start + out.length;
      let body = out.join("\n");
      if (last < lines.length) {
        body += `\n\n[Lines ${start + 1}-${last} of ${lines.length}. Use offset=${last + 1} to read on.]`;
      }
      return {
        content: text(body),
        details: { path: shown, lines: lines.length, from: start + 1, to: last },
      };
    },
  };
}

export const writeParameters = Type.Object({
  path: Type.String({ description: "File path, relative to the workspace" }),
  content: Type.String({ description: "The whole new content of the file" }),
});

export function createWriteTool(
  workspace: Workspace,
  options: FileToolOptions = {},
): ExtensionTool<typeof writeParameters> {
  const maxWrite = options.maxWriteBytes ?? 5_000_000;
  return {
    name: "write",
    label: "write",
    description: "Create or overwrite a file in the workspace (parent directories are created).",
    parameters: writeParameters,
    async execute(_id, params: Static<typeof writeParameters>, signal) {
      const { root, path, shown } = await locate(workspace, params.path, options, signal);
      const data = Buffer.from(params.content, "utf8");
      if (data.length > maxWrite)
        throw new Error(`Content is ${data.length} bytes, more than the ${maxWrite} bytes write accepts.`);
      const existing = await lstatOrMissing(path);
      await options.quota?.checkWrite(root, data.length, existing?.isFile() ? existing.size : 0, shown);
      await makeParents(path, options.owner);
      // Re-check after creating directories: nothing on the way may have become a way out.
      const checked = await resolveInWorkspace(root, params.path, options.workspaceAlias);
      await writeRegularFile(checked, shown, data, {
        ...(signal ? { signal } : {}),
        ...(options.owner ? { owner: options.owner } : {}),
      });
      return {
        content: text(`Wrote ${data.length} bytes to ${shown}.`),
        details: { path: shown, bytes: data.length },
      };
    },
  };
}

export const editParameters = Type.Object({
  path: Type.String({ description: "File path, relative to the workspace" }),
  oldText: Type.String({ description: "Exact text to replace; must occur exactly once", minLength: 1 }),
  newText: Type.String({ description: "Replacement text" }),
});

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    count++;
  return count;
}

export function createEditTool(
  workspace: Workspace,
  options: FileToolOptions = {},
): ExtensionTool<typeof editParameters> {
  const maxFile = options.maxFileBytes ?? 5_000_000;
  return {
    name: "edit",
    label: "edit",
    description: "Replace one exact occurrence of oldText with newText in a workspace file.",
    parameters: editParameters,
    async execute(_id, params: Static<typeof editParameters>, signal) {
      const { root, path, shown } = await locate(workspace, params.path, options, signal);
      const content = (await readRegularFile(path, shown, maxFile, signal)).toString("utf8");
      const count = countOccurrences(content, params.oldText);
      if (count === 0) {
        throw new Error(
          `oldText was not found in "${shown}". Read the file and copy the exact text, including whitespace.`,
        );
      }
      if (count > 1) {
        throw new Error(
          `oldText occurs ${count} times in "${shown}"; include more surrounding text so it is unique.`,
        );
      }
      const at = content.indexOf(params.oldText);
      const updated = Buffer.from(
        content.slice(0, at) + params.newText + content.slice(at + params.oldText.length),
        "utf8",
      );
      await options.quota?.checkWrite(root, updated.length, Buffer.byteLength(content, "utf8"), shown);
      await writeRegularFile(path, shown, updated, signal ? { signal } : {});
      const line = content.slice(0, at).split("\n").length;
      return { content: text(`Edited ${shown} at line ${line}.`), details: { path: shown, line } };
    },
  };
}

export const lsParameters = Type.Object({
  path: Type.Optional(
    Type.String({ description: "Directory, relative to the workspace (default: the root)" }),
  ),
});

export function createLsTool(
  workspace: Workspace,
  options: FileToolOptions = {},
): ExtensionTool<typeof lsParameters> {
  const maxEntries = options.maxListEntries ?? 500;
  // Entries read before giving up on a huge directory (sorted among themselves).
  const maxScanned = Math.max(maxEntries * 10, 5000);
  return {
    name: "ls",
    label: "ls",
    description:
      "List a directory of the workspace (directories end with /, symlinks with @, other special files with |).",
    parameters: lsParameters,
    async execute(_id, params: Static<typeof lsParameters>, signal) {
      const { path, shown } = await locate(workspace, params.path ?? ".", options, signal);
      const st = await lstatOrMissing(path);
      if (!st) throw new Error(`Directory "${shown}" does not exist.`);
      if (st.isFile()) throw new Error(`"${shown}" is a file, not a directory; use read.`);
      if (!st.isDirectory()) {
        throw new Error(`"${shown}" is ${specialKind(st) ?? "not a directory"}; ls lists directories.`);
      }
      const names: string[] = [];
      let complete = true;
      const dir = await opendir(path, { bufferSize: 256 });
      try {
        for await (const e of dir) {
          throwIfStopped(signal);
          if (names.length >= maxScanned) {
            complete = false;
            break;
          }
          const mark = e.isDirectory() ? "/" : e.isSymbolicLink() ? "@" : e.isFile() ? "" : "|";
          names.push(e.name + mark);
        }
      } finally {
        // Breaking out of the loop closes the directory already; closing twice throws.
        await dir.close().catch(() => {});
      }
      names.sort((a, b) => a.localeCompare(b));
      const listed = names.slice(0, maxEntries);
      let body = listed.length > 0 ? listed.join("\n") : "(empty directory)";
      if (!complete) body += `\n\n[More than ${maxScanned} entries; only the first ones read are shown]`;
      else if (names.length > listed.length)
        body += `\n\n[${names.length - listed.length} more entries not shown]`;
      return { content: text(body), details: { path: shown, count: names.length, complete } };
    },
  };
}
