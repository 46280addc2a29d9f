/**
 * `send_file`: the agent hands a file of the thread's workspace to the people in the chat (a
 * patch, a chart, a report). The path is confined to the workspace as for the file tools (symlinks
 * leading out refused); only a regular file goes, within the channel's file limit. The post itself
 * is the host's (`ExtensionHost.sendFile`): journaled like every other post, so a worker killed
 * mid-upload neither loses nor doubles it.
 */
import { lstat } from "node:fs/promises";
import { basename } from "node:path";
import { Type } from "@sinclair/typebox";
import type { ToolDefinition } from "../types.js";
import type { FileOwner } from "./safe-fs.js";
import { ensureWorkspace, resolveInWorkspace } from "./workspace.js";

const sendFileParameters = Type.Object({
  path: Type.String({ description: "The file to send, relative to the workspace (or under /workspace)." }),
  caption: Type.Optional(
    Type.String({ maxLength: 3000, description: "A short text shown with the file (markdown)." }),
  ),
});

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The tool, for threads whose workspaces are under `root` (`alias`: where commands see it). */
export function createSendFileTool(root: string, owner?: FileOwner, alias?: string): ToolDefinition {
  return {
    name: "send_file",
    label: "Send file",
    description:
      "Posts a file from the workspace into this chat thread, where people can open or download it " +
      "(pictures show as pictures). Use it to hand over what you made: a patch, a chart, a report. " +
      "Files people attach arrive under attachments/<message>/ in the workspace.",
    parameters: sendFileParameters,
    async execute(_id, params, _signal, _onUpdate, ctx) {
      const { path, caption } = params as { path: string; caption?: string };
      const host = ctx.host;
      const max = host.maxFileBytes?.() ?? 0;
      if (!host.sendFile || max <= 0)
        throw new Error(
          "This channel takes no files from the agent (channels.<platform>.files), so nothing was sent.",
        );
      const workspace = await ensureWorkspace(root, ctx.thread.threadKey, owner);
      const abs = await resolveInWorkspace(workspace, path, alias);
      const st = await lstat(abs).catch(() => undefined);
      if (!st) throw new Error(`File "${path}" does not exist in the workspace.`);
      if (!st.isFile()) throw new Error(`"${path}" is not a regular file; send_file sends files only.`);
      if (st.nlink > 1)
        throw new Error(
          `"${path}" has other hard links; copy it first (cp --remove-destination) and send the copy.`,
        );
      if (st.size === 0) throw new Error(`"${path}" is empty; there is nothing to send.`);
      if (st.size > max)
        throw new Error(
          `"${path}" is ${size(st.size)}; this channel takes files of at most ${size(max)}, so nothing was sent.`,
        );
      const sent = await host.sendFile(
        { path: abs, name: basename(abs) },
        caption?.trim() ? { caption: caption.trim() } : {},
      );
      return {
        content: [
          {
            type: "text",
            text: `Sent ${basename(abs)} (${sent.mimeType}, ${size(sent.sizeBytes)}) to the chat.`,
          },
        ],
        details: { ref: sent.ref, sizeBytes: sent.sizeBytes, mimeType: sent.mimeType },
      };
    },
  };
}
