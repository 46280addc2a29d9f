/**
 * Where to cut a branch for compaction: keep roughly the most recent `keepRecentTokens`, and
 * never separate a tool call from its result.
 */
import type { SessionEntry } from "../types.js";
import { estimateTokens, IMAGE_TOKENS } from "./tokens.js";

/** True for an entry the model sees as a user message: a turn can start there. */
function startsTurn(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return (
    role === "user" ||
    role === "custom" ||
    role === "bashExecution" ||
    role === "branchSummary" ||
    role === "compactionSummary"
  );
}

/** True for an entry that contributes a message to the model's context. */
function isMessageEntry(entry: SessionEntry): boolean {
  return entry.type === "message" || entry.type === "custom_message" || entry.type === "branch_summary";
}

/** Estimated tokens an entry adds to the context (0 for entries the model never sees). */
export function estimateEntryTokens(entry: SessionEntry): number {
  switch (entry.type) {
    case "message":
      return estimateTokens(entry.message);
    case "custom_message": {
      const c = entry.content;
      const text = typeof c === "string" ? c : c.map((b) => (b.type === "text" ? b.text : "")).join("");
      const images = typeof c === "string" ? 0 : c.filter((b) => b.type === "image").length;
      return Math.ceil(text.length / 4) + images * IMAGE_TOKENS;
    }
    case "branch_summary":
      return Math.ceil(entry.summary.length / 4);
    default:
      return 0;
  }
}

/**
 * Indices in [startIndex, endIndex) where the kept part may begin: a message entry that is not a
 * tool result, at a point where every earlier tool call in the range already has its result. A
 * call whose result never came (a crashed run) stops blocking cuts at the next assistant message.
 */
export function findValidCutPoints(
  entries: readonly SessionEntry[],
  startIndex: number,
  endIndex: number,
): number[] {
  const points: number[] = [];
  const pending = new Set<string>();
  for (let i = startIndex; i < endIndex; i++) {
    const entry = entries[i];
    if (!entry || !isMessageEntry(entry)) continue;
    const message = entry.type === "message" ? entry.message : undefined;
    if (message?.role === "toolResult") {
      pending.delete(message.toolCallId);
      continue;
    }
    if (message?.role === "assistant") pending.clear();
    if (pending.size === 0) points.push(i);
    if (message?.role === "assistant")
      for (const block of message.content) if (block.type === "toolCall") pending.add(block.id);
  }
  return points;
}

/** Index of the entry that starts the turn containing `index` (a user-role message), or -1. */
export function findTurnStartIndex(
  entries: readonly SessionEntry[],
  index: number,
  startIndex: number,
): number {
  for (let i = index; i >= startIndex; i--) {
    const entry = entries[i];
    if (entry && startsTurn(entry)) return i;
  }
  return -1;
}

export interface CutPoint {
  /** Index of the first entry kept verbatim; `startIndex` when nothing can be cut. */
  firstKeptEntryIndex: number;
  /** When the cut falls inside a turn: index of the user message that started it; else -1. */
  turnStartIndex: number;
  /** True when the kept part begins mid-turn, so the turn's beginning needs its own summary. */
  isSplitTurn: boolean;
}

/**
 * Finds the cut in entries [startIndex, endIndex) that keeps at least `keepRecentTokens` of the
 * newest messages (all of them when the range holds fewer).
 *
 * Walks back from the newest entry summing estimated tokens until the sum reaches
 * `keepRecentTokens`, then cuts at the latest valid cut point at or before that entry (see
 * `findValidCutPoints`), so a tool call and its result are always on the same side. Settings and
 * other non-message entries just before the cut stay with the kept part. When the cut is not at a
 * user-role message, the turn is split and `turnStartIndex` names where it began.
 */
export function findCutPoint(
  entries: readonly SessionEntry[],
  startIndex: number,
  endIndex: number,
  keepRecentTokens: number,
): CutPoint {
  const keepAll: CutPoint = { firstKeptEntryIndex: startIndex, turnStartIndex: -1, isSplitTurn: false };
  const points = findValidCutPoints(entries, startIndex, endIndex);
  let budgetIndex = -1;
  let sum = 0;
  for (let i = endIndex - 1; i >= startIndex; i--) {
    const entry = entries[i];
    if (!entry) continue;
    sum += estimateEntryTokens(entry);
    if (sum >= keepRecentTokens) {
      budgetIndex = i;
      break;
    }
  }
  if (budgetIndex < 0) return keepAll;
  let cut = -1;
  for (const p of points) {
    if (p > budgetIndex) break;
    cut = p;
  }
  if (cut <= startIndex) return keepAll;
  while (cut > startIndex) {
    const previous = entries[cut - 1];
    if (!previous || isMessageEntry(previous) || previous.type === "compaction") break;
    cut--;
  }
  const cutEntry = entries[cut];
  if (cutEntry && startsTurn(cutEntry))
    return { firstKeptEntryIndex: cut, turnStartIndex: -1, isSplitTurn: false };
  // The cut entry may be a setting change pulled in above; the turn question is about the first message kept.
  let firstMessage = cut;
  while (
    firstMessage < endIndex &&
    entries[firstMessage] &&
    !isMessageEntry(entries[firstMessage] as SessionEntry)
  )
    firstMessage++;
  const first = entries[firstMessage];
  if (first && startsTurn(first)) return { firstKeptEntryIndex: cut, turnStartIndex: -1, isSplitTurn: false };
  const turnStartIndex = findTurnStartIndex(entries, cut - 1, startIndex);
  return { firstKeptEntryIndex: cut, turnStartIndex, isSplitTurn: turnStartIndex !== -1 };
}
