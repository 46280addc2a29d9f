/**
 * Which files the summarised history touched, from the `read`, `write` and `edit` tool calls,
 * so the summary can list them and later compactions carry the lists forward.
 */
import type { AgentMessage } from "../../types.js";
import type { CompactionDetails } from "../types.js";

export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

export function createFileOps(): FileOperations {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

/** Adds the paths of the `read`/`write`/`edit` tool calls in an assistant message (argument `path`). */
export function collectFileOps(message: AgentMessage, ops: FileOperations): void {
  if (message.role !== "assistant") return;
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    const path = block.arguments.path;
    if (typeof path !== "string" || path === "") continue;
    if (block.name === "read") ops.read.add(path);
    else if (block.name === "write") ops.written.add(path);
    else if (block.name === "edit") ops.edited.add(path);
  }
}

/** Carries the lists of an earlier compaction forward (only lists that look like ours). */
export function addPreviousDetails(details: unknown, ops: FileOperations): void {
  if (typeof details !== "object" || details === null) return;
  const d = details as Partial<Record<keyof CompactionDetails, unknown>>;
  if (Array.isArray(d.readFiles)) for (const f of d.readFiles) if (typeof f === "string") ops.read.add(f);
  if (Array.isArray(d.modifiedFiles))
    for (const f of d.modifiedFiles) if (typeof f === "string") ops.edited.add(f);
}

/** Sorted lists: files only read, and files written or edited. */
export function fileLists(ops: FileOperations): { readFiles: string[]; modifiedFiles: string[] } {
  const modified = new Set([...ops.written, ...ops.edited]);
  return {
    readFiles: [...ops.read].filter((f) => !modified.has(f)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}

/** The lists as tagged blocks appended to a summary (empty string when there are none). */
export function formatFileLists(readFiles: readonly string[], modifiedFiles: readonly string[]): string {
  const blocks: string[] = [];
  if (readFiles.length > 0) blocks.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
  if (modifiedFiles.length > 0)
    blocks.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
  return blocks.length === 0 ? "" : `\n\n${blocks.join("\n\n")}`;
}
