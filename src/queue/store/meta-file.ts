/**
 * A thread's `meta.json` for the file store: its shape, parsing that tolerates damage, and the
 * atomic write (temporary file, fsync, rename) that makes a crash leave the old or the new file.
 */
import { randomBytes } from "node:crypto";
import { open, rename } from "node:fs/promises";
import { join } from "node:path";
import { emptyTotals, isSafeSessionId, totalsFrom } from "./shared.js";
import type { UsageTotals } from "./types.js";

/** What meta.json holds. */
export interface MetaFile {
  version: 1;
  threadKey: string;
  sessions: string[];
  currentSessionId?: string;
  /** Leaves moved by `setLeaf`; a session without an override has its last entry as leaf. */
  leafOverrides: Record<string, string | null>;
  model?: string;
  thinkingLevel?: string;
  usage: UsageTotals;
  updatedAt: number;
}

/** Reads a parsed meta.json, keeping only well-formed fields; throws when there is no sessions list. */
export function parseMetaFile(threadKey: string, v: unknown): MetaFile {
  if (typeof v !== "object" || v === null || !Array.isArray((v as MetaFile).sessions))
    throw new Error("meta.json has no sessions list");
  const raw = v as Partial<MetaFile>;
  const meta: MetaFile = {
    version: 1,
    threadKey,
    sessions: (raw.sessions ?? []).filter((s): s is string => typeof s === "string" && isSafeSessionId(s)),
    leafOverrides:
      typeof raw.leafOverrides === "object" && raw.leafOverrides !== null ? raw.leafOverrides : {},
    usage: totalsFrom((raw.usage ?? {}) as Record<string, unknown>),
    updatedAt: typeof raw.updatedAt === "number" ? raw.updatedAt : 0,
  };
  if (typeof raw.currentSessionId === "string") meta.currentSessionId = raw.currentSessionId;
  if (typeof raw.model === "string") meta.model = raw.model;
  if (typeof raw.thinkingLevel === "string") meta.thinkingLevel = raw.thinkingLevel;
  return meta;
}

/** A thread's meta with no sessions yet. */
export function emptyMetaFile(threadKey: string, now: number): MetaFile {
  return { version: 1, threadKey, sessions: [], leafOverrides: {}, usage: emptyTotals(), updatedAt: now };
}

/** Replaces `${dir}/meta.json` atomically. */
export async function writeMetaFile(dir: string, meta: MetaFile): Promise<void> {
  const path = join(dir, "meta.json");
  const tmp = join(dir, `.meta.json.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await open(tmp, "w");
  try {
    await handle.writeFile(`${JSON.stringify(meta)}\n`, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
}
