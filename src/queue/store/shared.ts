/**
 * Logic both stores share: checking and renaming a batch, the usage and settings it carries, and
 * the first entries of a new session.
 */
import { pathToLeaf, resolveSettings } from "../../agent/session/context.js";
import {
  createSessionHeader,
  EntryChain,
  headerThreadKey,
  newEntryId,
  newSessionId,
} from "../../agent/session/entries.js";
import { isSessionEntry, parseSessionJsonl, type WarnLogger } from "../../agent/session/jsonl.js";
import {
  CURRENT_SESSION_VERSION,
  type MessageEntry,
  type SessionEntry,
  type SessionHeader,
} from "../../agent/session/types.js";
import { InvalidEntryError, InvalidImportError } from "./errors.js";
import type { CreateSessionOptions, NewSessionOptions, UsageTotals } from "./types.js";

/** Throws `InvalidEntryError` unless every element is a well-formed entry. */
export function assertEntries(entries: readonly unknown[]): asserts entries is SessionEntry[] {
  entries.forEach((e, i) => {
    if (!isSessionEntry(e))
      throw new InvalidEntryError(
        `Entry ${i} of the batch is not a valid session entry (needs type, an id without whitespace, parentId string|null, timestamp string, and its type's fields).`,
      );
  });
}

/**
 * Gives a fresh id to every entry whose id is taken (stored, or earlier in the batch) and points
 * the batch's `parentId`s at the new ids. Returns the input itself when nothing was renamed.
 */
export function renameTakenIds(entries: SessionEntry[], isTaken: (id: string) => boolean): SessionEntry[] {
  const renamed = new Map<string, string>();
  const inBatch = new Set<string>();
  let changed = false;
  const out = entries.map((entry) => {
    let next = entry;
    // The parent is resolved before this entry's own rename, so an entry never becomes its own parent.
    const parent = entry.parentId === null ? undefined : renamed.get(entry.parentId);
    if (parent !== undefined) {
      next = { ...next, parentId: parent };
      changed = true;
    }
    if (isTaken(entry.id) || inBatch.has(entry.id)) {
      const id = newEntryId({ has: (x) => isTaken(x) || inBatch.has(x) || renamed.has(x) });
      renamed.set(entry.id, id);
      next = { ...next, id };
      changed = true;
    }
    inBatch.add(next.id);
    return next;
  });
  return changed ? out : entries;
}

export function emptyTotals(): UsageTotals {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
}

function finite(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) ? n : 0;
}

/** Usage of the assistant messages in `entries` (tokens rounded to integers). */
export function usageOf(entries: readonly SessionEntry[]): UsageTotals {
  const t = emptyTotals();
  for (const e of entries) {
    if (e.type !== "message" || e.message.role !== "assistant") continue;
    const u = e.message.usage;
    if (!u) continue;
    t.input += Math.round(finite(u.input));
    t.output += Math.round(finite(u.output));
    t.cacheRead += Math.round(finite(u.cacheRead));
    t.cacheWrite += Math.round(finite(u.cacheWrite));
    t.cost += finite(u.cost?.total);
  }
  return t;
}

/** The last model (`provider/modelId`) and thinking level set by entries of the batch. */
export function settingsOf(entries: readonly SessionEntry[]): { model?: string; thinkingLevel?: string } {
  const out: { model?: string; thinkingLevel?: string } = {};
  for (const e of entries) {
    if (e.type === "model_change") out.model = `${e.provider}/${e.modelId}`;
    else if (e.type === "thinking_level_change") out.thinkingLevel = e.thinkingLevel;
  }
  return out;
}

/**
 * The model (`provider/modelId`) and thinking level at the last entry of a session written whole
 * (created or imported), resolved over its path as pi does; a setting nothing on the path sets is
 * left out, so the thread's own stays.
 */
export function leafSettingsOf(entries: readonly SessionEntry[]): { model?: string; thinkingLevel?: string } {
  const path = pathToLeaf(entries);
  const settings = resolveSettings(path);
  const out: { model?: string; thinkingLevel?: string } = {};
  if (settings.model) out.model = `${settings.model.provider}/${settings.model.modelId}`;
  if (path.some((e) => e.type === "thinking_level_change")) out.thinkingLevel = settings.thinkingLevel;
  return out;
}

/** Splits `provider/modelId` at the first slash (model ids may contain slashes, providers do not). */
function parseModelRef(ref: string): { provider: string; modelId: string } {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1)
    throw new InvalidEntryError(`Model "${ref}" is not of the form "provider/modelId".`);
  return { provider: ref.slice(0, slash), modelId: ref.slice(slash + 1) };
}

/**
 * The branch ending at `leafId`, from the latest compaction's first kept entry on (root→leaf),
 * given an id → entry lookup of the whole session.
 */
export function walkBranch(byId: (id: string) => SessionEntry | undefined, leafId: string): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let stop: string | undefined;
  let current = byId(leafId);
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    path.push(current);
    if (stop !== undefined && current.id === stop) break;
    if (stop === undefined && current.type === "compaction") stop = current.firstKeptEntryId;
    current = current.parentId === null ? undefined : byId(current.parentId);
  }
  return path.reverse();
}

/** Usage totals as Redis hash / JSON numbers, tolerant of missing fields. */
export function totalsFrom(record: Record<string, unknown>): UsageTotals {
  const num = (v: unknown) => {
    const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : 0;
    return Number.isFinite(n) ? n : 0;
  };
  return {
    input: num(record.input),
    output: num(record.output),
    cacheRead: num(record.cacheRead),
    cacheWrite: num(record.cacheWrite),
    cost: num(record.cost),
  };
}

/**
 * A new session of `threadKey` as both stores begin it: its header (continuing `parentSession` when
 * given) and its first entries, the model and thinking level when given.
 */
export function newSessionStart(
  threadKey: string,
  options: CreateSessionOptions,
): { header: SessionHeader; entries: SessionEntry[] } {
  const headerOptions = options.parentSession === undefined ? {} : { parentSession: options.parentSession };
  return { header: createSessionHeader(threadKey, headerOptions), entries: initialEntries(options) };
}

/**
 * What `newSession` creates a session with: the thread's current model and thinking level (from
 * its metadata; empty or absent: none), under the caller's fence.
 */
export function carriedOverSettings(
  current: { model?: string | null | undefined; thinkingLevel?: string | null | undefined } | undefined,
  options: NewSessionOptions,
): CreateSessionOptions {
  const create: CreateSessionOptions = {};
  if (current?.model) create.model = current.model;
  if (current?.thinkingLevel) create.thinkingLevel = current.thinkingLevel;
  if (options.fence) create.fence = options.fence;
  return create;
}

/** The first entries of a new session: its model and thinking level, when given. */
function initialEntries(options: { model?: string; thinkingLevel?: string }): SessionEntry[] {
  const chain = new EntryChain(null);
  if (options.model) chain.add({ type: "model_change", ...parseModelRef(options.model) });
  if (options.thinkingLevel)
    chain.add({ type: "thinking_level_change", thinkingLevel: options.thinkingLevel });
  return chain.entries;
}

export interface PreparedImport {
  threadKey: string;
  header: SessionHeader;
  entries: SessionEntry[];
}

/**
 * Parses an import for `threadKey` (default: the file's own thread key, `threadKey` or pi's `cwd`).
 * The header is kept exactly as the file has it, so the export gives the same line back; the
 * thread a session belongs to is recorded by the store beside it, never written into the header.
 * Exceptions, where pi would change the file too: a session id that cannot be a file name gets a
 * fresh one, and a version 2 file is migrated to version 3 as pi migrates it (`hookMessage`
 * messages become `custom`). Throws `InvalidImportError` when the text has no session header or
 * is a version 1 file (no entry ids).
 */
export function prepareImport(
  text: string,
  threadKey: string | undefined,
  logger: WarnLogger,
): PreparedImport {
  const newline = text.indexOf("\n");
  const firstLine = newline < 0 ? text : text.slice(0, newline);
  const declared = declaredVersion(firstLine);
  if (declared !== undefined && declared < 2)
    throw new InvalidImportError(
      `The file is a version ${declared} pi session (entries without ids). Open it once in pi, which migrates it to version 3, and import that file.`,
    );
  const parsed = parseSessionJsonl(text, { logger, source: "import" });
  if (!parsed)
    throw new InvalidImportError(
      'The text is not a session file: no line is a session header ({"type":"session","id":…}).',
    );
  const target = threadKey ?? headerThreadKey(parsed.header);
  if (!target)
    throw new InvalidImportError("The session header names no thread key (cwd); pass one to importJsonl.");
  let header = parsed.header;
  let entries = parsed.entries;
  if (header.version !== CURRENT_SESSION_VERSION) {
    header = { ...header, version: CURRENT_SESSION_VERSION };
    entries = entries.map(migrateV2Entry);
  }
  if (!isSafeSessionId(header.id)) header = { ...header, id: newSessionId() };
  return { threadKey: target, header, entries };
}

function declaredVersion(headerLine: string): number | undefined {
  try {
    const v: unknown = JSON.parse(headerLine);
    if (typeof v === "object" && v !== null && (v as { type?: unknown }).type === "session") {
      const version = (v as { version?: unknown }).version;
      return typeof version === "number" ? version : 1;
    }
  } catch {
    // Not a header line: parseSessionJsonl decides.
  }
  return undefined;
}

/** pi's v2 → v3 step: the `hookMessage` role was renamed `custom`. */
function migrateV2Entry(entry: SessionEntry): SessionEntry {
  if (entry.type !== "message") return entry;
  const message = entry.message as unknown as { role: string };
  if (message.role !== "hookMessage") return entry;
  return { ...entry, message: { ...message, role: "custom" } as unknown as MessageEntry["message"] };
}

/** Session ids usable as file names (UUIDs and the like): letters, digits, `_`, `-`, `.` not first. */
export function isSafeSessionId(id: string): boolean {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(id);
}
