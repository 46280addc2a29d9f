/**
 * From inbox items to the user messages an agent sees, and the marks that record which items a
 * session already holds.
 *
 * Every user message made from inbox items is stored with an `inbox` field, `{first, last, at}`
 * (first and last seq of its items, the last item's queue time), and an entry id derived from it
 * (8 hex characters, pi's shape). After a crash the new holder compares the inflight items with
 * these marks: an item the session holds is never delivered twice, and one it does not hold is
 * delivered again. Sessions written before carry the mark in the id itself (`q<first>-<last>-<at
 * in base 36>`); those are still read.
 */

import { createHash } from "node:crypto";
import type { InboundMessage } from "../../adapters/types.js";
import type { ImageContent, TextContent, UserMessage } from "../../agent/llm/types.js";
import type { InboxMark, SessionEntry } from "../../agent/session/types.js";
import { attachmentContent } from "../attachments/content.js";
import type { InboundFormatter, InboxItem } from "../types.js";

/**
 * The default formatter: the texts (joined by blank lines for a merged group), each followed by
 * lines naming its files; the pictures the model sees come after the text.
 */
export const plainInboundFormatter: InboundFormatter = (messages: InboundMessage[]): UserMessage => {
  const images: ImageContent[] = [];
  const parts = messages.map((m) => {
    const files = attachmentContent(m);
    images.push(...files.images);
    return files.lines.length > 0 ? `${m.text}\n${files.lines.join("\n")}`.trim() : m.text;
  });
  const content: (TextContent | ImageContent)[] = [{ type: "text", text: parts.join("\n\n") }, ...images];
  return { role: "user", content, timestamp: messages.at(-1)?.timestamp ?? Date.now() };
};

/** A group of items that becomes one user message. */
export interface ItemGroup {
  items: InboxItem[];
  message: UserMessage;
  /** Stored in the message entry's `inbox` field. */
  mark: InboxMark;
  entryId: string;
}

/** The mark of a message made of `items` (in seq order, at least one). */
function inboxMark(items: readonly InboxItem[]): InboxMark {
  const first = items[0];
  const last = items[items.length - 1];
  if (!first || !last) throw new Error("inboxMark needs at least one inbox item.");
  return { first: first.seq, last: last.seq, at: last.at };
}

/**
 * The entry id of the message with `mark`: 8 hex characters like every other entry id, the same
 * for the same items (the store gives a fresh one on the rare clash; the mark stays in `inbox`).
 */
function markedEntryId(mark: InboxMark): string {
  return createHash("sha256").update(`q${mark.first}-${mark.last}-${mark.at}`).digest("hex").slice(0, 8);
}

function parseLegacyMark(id: string): InboxMark | undefined {
  const m = /^q(\d+)-(\d+)-([0-9a-z]+)$/.exec(id);
  if (!m) return undefined;
  return { first: Number(m[1]), last: Number(m[2]), at: Number.parseInt(m[3] ?? "0", 36) };
}

function isMark(v: unknown): v is InboxMark {
  if (typeof v !== "object" || v === null) return false;
  const m = v as InboxMark;
  return Number.isInteger(m.first) && Number.isInteger(m.last) && typeof m.at === "number";
}

function markOf(entry: SessionEntry): InboxMark | undefined {
  if (entry.type === "message" && isMark(entry.inbox)) return entry.inbox;
  return parseLegacyMark(entry.id);
}

/**
 * The seqs among `items` that `entries` hold. An item is held when a marker's seq range covers it
 * and the marker is at least as recent as the item (so a seq counter that was reset cannot match
 * an old entry).
 */
export function heldSeqs(entries: readonly SessionEntry[], items: readonly InboxItem[]): number[] {
  const markers: InboxMark[] = [];
  for (const e of entries) {
    const m = markOf(e);
    if (m) markers.push(m);
  }
  return items
    .filter((i) => markers.some((m) => m.first <= i.seq && i.seq <= m.last && m.at >= i.at))
    .map((i) => i.seq);
}

/**
 * Groups taken items into user messages: a `collect` run merges into one message; every other
 * message item is its own. `newSession` items are not messages and are skipped.
 */
export function groupItems(items: readonly InboxItem[], format: InboundFormatter): ItemGroup[] {
  const groups: InboxItem[][] = [];
  for (const item of items) {
    if (item.kind !== "message" || !item.message) continue;
    const prev = groups[groups.length - 1];
    const prevLast = prev?.[prev.length - 1];
    if (prev && item.mode === "collect" && prevLast?.mode === "collect") prev.push(item);
    else groups.push([item]);
  }
  return groups.map((g) => {
    const mark = inboxMark(g);
    return {
      items: g,
      message: format(g.map((i) => i.message as InboundMessage)),
      mark,
      entryId: markedEntryId(mark),
    };
  });
}
