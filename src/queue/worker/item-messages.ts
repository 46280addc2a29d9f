/**
 * From inbox items to the user messages an agent sees, and the session entry ids that record which
 * items a session already holds.
 *
 * Every user message made from inbox items is stored with the entry id `q<first>-<last>-<at>`
 * (first and last seq of its items, the last item's queue time in base 36). After a crash the new
 * holder compares the inflight items with these ids: an item the session holds is never delivered
 * twice, and one it does not hold is delivered again.
 */
import type { InboundMessage } from "../../adapters/types.js";
import type { TextContent, UserMessage } from "../../agent/llm/types.js";
import type { SessionEntry } from "../../agent/session/types.js";
import type { InboundFormatter, InboxItem } from "../types.js";

/** The default formatter: the texts (joined by blank lines for a merged group), attachments named. */
export const plainInboundFormatter: InboundFormatter = (messages: InboundMessage[]): UserMessage => {
  const parts = messages.map((m) => {
    const files = m.attachments.map((a) => `[attachment: ${a.name ?? a.kind}]`).join(" ");
    return files ? `${m.text}\n${files}`.trim() : m.text;
  });
  const content: TextContent[] = [{ type: "text", text: parts.join("\n\n") }];
  return { role: "user", content, timestamp: messages.at(-1)?.timestamp ?? Date.now() };
};

/** A group of items that becomes one user message. */
export interface ItemGroup {
  items: InboxItem[];
  message: UserMessage;
  entryId: string;
}

/** The entry id marking a message made of `items` (in seq order, at least one). */
export function markerId(items: readonly InboxItem[]): string {
  const first = items[0];
  const last = items[items.length - 1];
  if (!first || !last) throw new Error("markerId needs at least one inbox item.");
  return `q${first.seq}-${last.seq}-${last.at.toString(36)}`;
}

interface Marker {
  first: number;
  last: number;
  at: number;
}

function parseMarker(id: string): Marker | undefined {
  const m = /^q(\d+)-(\d+)-([0-9a-z]+)$/.exec(id);
  if (!m) return undefined;
  return { first: Number(m[1]), last: Number(m[2]), at: Number.parseInt(m[3] ?? "0", 36) };
}

/**
 * The seqs among `items` that `entries` hold. An item is held when a marker's seq range covers it
 * and the marker is at least as recent as the item (so a seq counter that was reset cannot match
 * an old entry).
 */
export function heldSeqs(entries: readonly SessionEntry[], items: readonly InboxItem[]): number[] {
  const markers: Marker[] = [];
  for (const e of entries) {
    const m = parseMarker(e.id);
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
  return groups.map((g) => ({
    items: g,
    message: format(g.map((i) => i.message as InboundMessage)),
    entryId: markerId(g),
  }));
}
