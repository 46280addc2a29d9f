/**
 * Inbox items as stored (one JSON object per list element) and the small views the runtime makes of
 * them: the dropped-message description and the notice text.
 */
import type { DroppedMessage, InboxItem } from "./types.js";

/** A message that steers the run in progress (`steer` or `interrupt`): what the steer rule takes. */
export function steersRun(item: InboxItem): boolean {
  return item.kind === "message" && (item.mode === "steer" || item.mode === "interrupt");
}

/** Parses one stored item; undefined for anything damaged. */

export function parseItem(raw: string): InboxItem | undefined {
  try {
    const v = JSON.parse(raw) as Partial<InboxItem> | null;
    if (!v || typeof v !== "object" || typeof v.seq !== "number") return undefined;
    return {
      seq: v.seq,
      at: typeof v.at === "number" ? v.at : 0,
      mode: v.mode ?? "steer",
      kind: v.kind === "newSession" || v.kind === "compact" ? v.kind : "message",
      message: v.message,
      ...(typeof v.instructions === "string" ? { instructions: v.instructions } : {}),
    };
  } catch {
    return undefined;
  }
}

export function parseItems(raws: readonly string[]): InboxItem[] {
  return raws.map(parseItem).filter((i): i is InboxItem => i !== undefined);
}

/** The description of a message that was dropped or discarded. */
export function describeDropped(item: InboxItem): DroppedMessage {
  const m = item.message;
  const text = (m?.text ?? "").replace(/\s+/g, " ").trim();
  return {
    eventId: m?.eventId ?? `seq:${item.seq}`,
    userName: m?.user.name ?? m?.user.id ?? "someone",
    preview: text.length > 80 ? `${text.slice(0, 79)}…` : text,
  };
}

/** Only the chat messages among `items`, described. */
export function describeMessages(items: readonly InboxItem[]): DroppedMessage[] {
  return items.filter((i) => i.kind === "message").map(describeDropped);
}

function list(dropped: readonly DroppedMessage[]): string {
  const shown = dropped.slice(0, 3).map((d) => `"${d.preview}" from ${d.userName}`);
  const more = dropped.length > 3 ? ` and ${dropped.length - 3} more` : "";
  return shown.join(", ") + more;
}

/** Notice for messages removed because the inbox was full. */
export function droppedNotice(dropped: readonly DroppedMessage[], cap: number): string {
  const n = dropped.length;
  return `Too many queued messages (limit ${cap}): dropped ${n === 1 ? "the oldest one" : `the ${n} oldest`}: ${list(dropped)}.`;
}

/** Notice for a message refused because the inbox was full. */
export function refusedNotice(dropped: DroppedMessage, cap: number): string {
  return `Too many queued messages (limit ${cap}): dropped ${list([dropped])}. Send it again when the agent has caught up.`;
}

/** Notice after `stop`, `/new` or an interrupt discarded queued messages (empty string when none). */
export function discardedNotice(discarded: readonly DroppedMessage[], why: string): string {
  if (discarded.length === 0) return "";
  const n = discarded.length;
  return `${why}: discarded ${n === 1 ? "1 queued message" : `${n} queued messages`}: ${list(discarded)}.`;
}
