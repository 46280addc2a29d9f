/**
 * Session files as text: writing a header and entries as JSONL, and reading one back while
 * surviving damage (a garbage line, a truncated last line, a lost entry in the middle).
 */
import type { StructuredLogger } from "../logger.js";
import { isValidEntryId } from "./entries.js";
import type { SessionEntry, SessionHeader } from "./types.js";

/** Where warnings about damaged lines go; pino loggers fit, `console` does after wrapping. */
export type WarnLogger = Pick<StructuredLogger, "warn">;

export const consoleWarnLogger: WarnLogger = {
  warn: (obj, msg) => console.warn(msg, obj),
};

/** A session as text: the header line, one line per entry, and a final newline. */
export function serializeSession(header: SessionHeader, entries: readonly SessionEntry[]): string {
  let out = `${JSON.stringify(header)}\n`;
  for (const entry of entries) out += `${JSON.stringify(entry)}\n`;
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True for a well-formed `session` header line. */
export function isSessionHeader(v: unknown): v is SessionHeader {
  return isObject(v) && v.type === "session" && typeof v.id === "string" && v.id.length > 0;
}

/**
 * True for a well-formed entry: a string `type` other than `session`, a valid `id`, a `parentId`
 * that is a string or null, a string `timestamp`, and the fields its known type needs. Entries of
 * types this version does not know are accepted (and never reach the model), so newer files load.
 */
export function isSessionEntry(v: unknown): v is SessionEntry {
  if (!isObject(v)) return false;
  if (typeof v.type !== "string" || v.type === "session") return false;
  if (!isValidEntryId(v.id)) return false;
  if (v.parentId !== null && typeof v.parentId !== "string") return false;
  if (typeof v.timestamp !== "string") return false;
  switch (v.type) {
    case "message":
      return isObject(v.message) && typeof v.message.role === "string";
    case "compaction":
      return typeof v.summary === "string" && typeof v.firstKeptEntryId === "string";
    case "model_change":
      return typeof v.provider === "string" && typeof v.modelId === "string";
    case "thinking_level_change":
      return typeof v.thinkingLevel === "string";
    case "custom":
    case "custom_message":
      return typeof v.customType === "string";
    case "branch_summary":
      return typeof v.summary === "string";
    case "label":
      return typeof v.targetId === "string";
    default:
      return true;
  }
}

export interface ParsedSession {
  header: SessionHeader;
  entries: SessionEntry[];
  /** Lines skipped as unreadable (1-based line numbers). */
  skippedLines: number[];
}

export interface ParseOptions {
  logger?: WarnLogger;
  /** Names the source in warnings (a file path, "import"). */
  source?: string;
  /** Used when no line is a header (its line was damaged); entries then load without one. */
  fallbackHeader?: SessionHeader;
}

/**
 * Parses session JSONL. The header is the first line that is one; any line before it, and any
 * line that is not valid JSON or not a well-formed entry, is skipped with a warning, and the
 * lines after it still load. Then `repairEntries` makes the tree consistent. Returns undefined
 * when no header is found and no `fallbackHeader` is given (not a session file).
 */
export function parseSessionJsonl(text: string, options: ParseOptions = {}): ParsedSession | undefined {
  const logger = options.logger ?? consoleWarnLogger;
  const source = options.source ?? "session";
  let header: SessionHeader | undefined;
  const raw: SessionEntry[] = [];
  const skippedLines: number[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "") continue;
    let value: unknown;
    let parseError: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      parseError = err;
    }
    if (!header && isSessionHeader(value)) {
      header = value;
      continue;
    }
    if ((header || options.fallbackHeader) && isSessionEntry(value)) {
      raw.push(value);
      continue;
    }
    skippedLines.push(i + 1);
    const last = i === lines.length - 1 || (i === lines.length - 2 && lines[lines.length - 1] === "");
    logger.warn(
      { source, line: i + 1, preview: line.slice(0, 80), ...(parseError ? { err: parseError } : {}) },
      last ? "Skipping a truncated last line of a session" : "Skipping an unreadable line of a session",
    );
  }
  if (!header && options.fallbackHeader) {
    logger.warn({ source }, "Session has no readable header line; using a substitute");
    header = options.fallbackHeader;
  }
  if (!header) return undefined;
  return { header, entries: repairEntries(raw, logger, source), skippedLines };
}

/**
 * Makes a list of entries a consistent tree in file order: a later duplicate of an id is dropped,
 * and an entry whose parent is not earlier in the list (its parent's line was lost) is attached
 * to the entry just before it, which is where a lost line sat in an append-only file. Entries
 * that need no change are returned as they are; changed ones are copies.
 */
export function repairEntries(
  entries: readonly SessionEntry[],
  logger: WarnLogger,
  source: string,
): SessionEntry[] {
  const seen = new Set<string>();
  const out: SessionEntry[] = [];
  for (const entry of entries) {
    if (seen.has(entry.id)) {
      logger.warn({ source, id: entry.id }, "Skipping a session entry whose id appeared earlier");
      continue;
    }
    let fixed = entry;
    if (entry.parentId !== null && !seen.has(entry.parentId)) {
      const previous = out[out.length - 1]?.id ?? null;
      logger.warn(
        { source, id: entry.id, missingParentId: entry.parentId, newParentId: previous },
        "A session entry's parent is missing; attaching it to the entry before it",
      );
      fixed = { ...entry, parentId: previous };
    }
    seen.add(fixed.id);
    out.push(fixed);
  }
  return out;
}

/**
 * Checks text against what pi's SessionManager expects of a version 3 file: a header first with
 * `version: 3`, `id`, `timestamp` and `cwd`; then entries with unique ids, each `parentId` null or
 * an earlier id. Returns the problems found (empty when valid).
 */
export function checkPiV3(text: string): string[] {
  const problems: string[] = [];
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) return ["empty file"];
  const ids = new Set<string>();
  lines.forEach((line, i) => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      problems.push(`line ${i + 1}: not JSON`);
      return;
    }
    if (i === 0) {
      if (!isSessionHeader(v)) problems.push("line 1: not a session header");
      else {
        if (v.version !== 3) problems.push(`line 1: version ${String(v.version)}, expected 3`);
        if (typeof v.timestamp !== "string") problems.push("line 1: no timestamp");
        if (typeof v.cwd !== "string") problems.push("line 1: no cwd");
      }
      return;
    }
    if (!isSessionEntry(v)) {
      problems.push(`line ${i + 1}: not a session entry`);
      return;
    }
    if (ids.has(v.id)) problems.push(`line ${i + 1}: duplicate id ${v.id}`);
    if (v.parentId !== null && !ids.has(v.parentId))
      problems.push(`line ${i + 1}: parentId ${v.parentId} is not an earlier id`);
    ids.add(v.id);
  });
  return problems;
}
