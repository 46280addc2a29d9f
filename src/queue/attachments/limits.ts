/**
 * How much a channel takes from the files people post, and how large a file the agent may send
 * back: the channel's policy (`channels.<platform>.files`), held under the platform's own limits.
 */
import type { FileLimits } from "../../adapters/types.js";

/** A channel's file policy, in bytes and counts. */
export interface FilePolicy {
  /** False: files people post are not fetched (the thread is told), and `send_file` is refused. */
  enabled: boolean;
  /** Largest file taken (and sent back). */
  maxFileBytes: number;
  /** Most bytes taken from one message, all its files together. */
  maxMessageBytes: number;
  /** Most files taken from one message. */
  maxFiles: number;
}

const MB = 1024 * 1024;

/** The defaults when the config says nothing (docs/channels.md, "Files"). */
export const DEFAULT_FILE_POLICY: Readonly<FilePolicy> = {
  enabled: true,
  maxFileBytes: 20 * MB,
  maxMessageBytes: 50 * MB,
  maxFiles: 10,
};

/** What a channel takes and sends: `policy` within the platform's `limits` (absent: no files at all). */
export interface EffectiveFileLimits extends FilePolicy {
  /** Largest file `send_file` may post. */
  maxUploadBytes: number;
}

/** `policy` held under the platform's own `limits`. */
export function effectiveLimits(policy: FilePolicy, limits: FileLimits | undefined): EffectiveFileLimits {
  if (!limits) return { ...policy, enabled: false, maxUploadBytes: 0 };
  return {
    ...policy,
    maxFileBytes: Math.min(policy.maxFileBytes, limits.maxDownloadBytes),
    maxUploadBytes: Math.min(policy.maxFileBytes, limits.maxUploadBytes),
  };
}

/** `bytes` for people: `512 bytes`, `12 KB`, `3.4 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < MB) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / MB;
  return `${mb < 10 ? mb.toFixed(1).replace(/\.0$/, "") : Math.round(mb)} MB`;
}
