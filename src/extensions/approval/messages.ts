/**
 * The texts of the approval flow: the request posted in the thread, its edited forms after a
 * decision, the error result the model gets for a denial, and the audit entry.
 */
import type { ThreadUser } from "../types.js";
import type { ApprovalRecord, ApprovalStatus } from "./types.js";

/** Longest argument text shown in a request; longer ones show their head and tail. */
const MAX_ARGS_CHARS = 1500;
const HEAD_CHARS = 1000;
const TAIL_CHARS = 400;

/**
 * Code point ranges that change how the text around them reads without showing themselves: C0 and
 * C1 controls (but newline and tab), DEL, the soft hyphen, bidirectional embeddings, overrides,
 * isolates and marks, zero-width characters, line and paragraph separators, variation selectors,
 * interlinear annotations and tag characters.
 */
const INVISIBLE: readonly (readonly [number, number])[] = [
  [0x00, 0x08],
  [0x0b, 0x1f],
  [0x7f, 0x9f],
  [0xad, 0xad],
  [0x61c, 0x61c],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xfff9, 0xfffb],
  [0xe0000, 0xe007f],
];

function isInvisible(cp: number): boolean {
  return INVISIBLE.some(([from, to]) => cp >= from && cp <= to);
}

/**
 * `text` with every invisible or direction-changing character shown as `⟨U+202E⟩`, so an admin sees
 * what will run: a right-to-left override cannot make a command read as another.
 */
export function visibleText(text: string): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    out += isInvisible(cp) ? `⟨U+${cp.toString(16).toUpperCase().padStart(4, "0")}⟩` : ch;
  }
  return out;
}

function who(user: ThreadUser | undefined): string {
  return visibleText(user?.name ?? user?.id ?? "someone");
}

/** `14:05 UTC` */
function clockTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 16)} UTC`;
}

function formatDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes >= 1) return `${minutes} min`;
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}

/** The arguments as pretty JSON with invisible characters shown. */
function argsText(args: Record<string, unknown>): string {
  return visibleText(JSON.stringify(args, null, 2) ?? "{}");
}

/** `text` in a fenced block that cannot be broken out of. */
function fenced(text: string): string {
  // A zero-width space keeps a ``` inside the arguments from closing the fence.
  return `\`\`\`json\n${text.replaceAll("```", "`\u200b``")}\n\`\`\``;
}

/**
 * The arguments as shown in a request: whole up to 1,500 characters, else their head and tail
 * (the dangerous part of a command is as often at its end) with what was left out and how to see
 * the whole call.
 */
function argsBlock(record: ApprovalRecord): string {
  const text = argsText(record.args);
  if (text.length <= MAX_ARGS_CHARS) return fenced(text);
  const hidden = text.length - HEAD_CHARS - TAIL_CHARS;
  return fenced(
    `${text.slice(0, HEAD_CHARS)}\n… ${hidden} characters not shown (${text.length} in all; ` +
      `/approval ${record.id} shows the whole call) …\n${text.slice(-TAIL_CHARS)}`,
  );
}

function header(record: ApprovalRecord): string[] {
  return [
    `🔐 Approval needed: \`${visibleText(record.toolName)}\``,
    argsBlock(record),
    `Run triggered by ${who(record.requestedBy)}.`,
  ];
}

/** The whole call of a request (`/approval <id>`), invisible characters shown. */
export function wholeCallText(record: ApprovalRecord): string {
  const text = argsText(record.args);
  return [
    `Approval request ${record.id}: \`${visibleText(record.toolName)}\`, ${text.length} characters, ${record.status}.`,
    fenced(text),
  ].join("\n");
}

/** The request as first posted: what, who, until when, and how admins decide. */
export function requestText(record: ApprovalRecord): string {
  const ttl = formatDuration(record.expiresAt - record.createdAt);
  return [
    ...header(record),
    `Expires at ${clockTime(record.expiresAt)} (${ttl}); no decision by then is a denial.`,
    "Admins: react ✅ to approve, ❌ to deny, ♾️ to approve this exact call for the rest of the thread.",
    `If reactions do not reach the bot here, reply in this thread with /approve ${record.id} or /deny ${record.id}.`,
  ].join("\n");
}

/** One line saying how the request ended, who decided and when. */
function outcomeLine(record: ApprovalRecord): string {
  const at = clockTime(record.decidedAt ?? record.expiresAt);
  switch (record.status) {
    case "approved":
      return `✅ Approved by ${who(record.decidedBy)} at ${at}.`;
    case "approved_always":
      return `♾️ Approved by ${who(record.decidedBy)} at ${at}; this exact call runs without asking for the rest of the thread.`;
    case "denied":
      return `❌ Denied by ${who(record.decidedBy)} at ${at}.`;
    case "expired":
      return `⌛ Expired at ${at}: no admin decided within ${formatDuration(record.expiresAt - record.createdAt)}, so it was denied.`;
    case "cancelled":
      return `⏹️ Cancelled at ${at}${record.decidedBy ? ` by ${who(record.decidedBy)}` : ""}: the run was stopped.`;
    case "pending":
      return "Waiting for a decision.";
  }
}

/**
 * The request message when the worker that asked stopped before acting on a decision (recorded
 * before the post, shown by the next holder of the thread if this worker dies): the call was not
 * run, and the model was told so.
 */
export function stoppedText(record: ApprovalRecord): string {
  return [
    ...header(record),
    "⏹️ Cancelled: the worker waiting for this decision stopped, so the call was not run.",
  ].join("\n");
}

/** The request message after its decision. */
export function decidedText(record: ApprovalRecord): string {
  return [...header(record), outcomeLine(record)].join("\n");
}

/** The error result the model gets when the call was not approved. */
export function denialReason(record: ApprovalRecord): string {
  const tool = record.toolName;
  switch (record.status) {
    case "denied":
      return `An admin (${who(record.decidedBy)}) denied this ${tool} call, so it was not run. Do not retry it unless the user asks you to.`;
    case "expired":
      return `No admin approved this ${tool} call within ${formatDuration(record.expiresAt - record.createdAt)}, so it was denied and not run.`;
    case "cancelled":
      return `The approval request for this ${tool} call was cancelled because the run was stopped; it was not run.`;
    default:
      return `This ${tool} call was not approved, so it was not run.`;
  }
}

/** What every decision leaves in the session (a `custom` entry of type `approval`). */
export interface ApprovalAuditData {
  id: string;
  toolName: string;
  args: Record<string, unknown>;
  outcome: ApprovalStatus;
  requestedBy?: ThreadUser;
  decidedBy?: ThreadUser;
  decidedAt?: number;
  /** True when the call ran because ♾️ had approved it earlier in the thread. */
  remembered?: boolean;
}

export function auditData(record: ApprovalRecord, remembered = false): ApprovalAuditData {
  const data: ApprovalAuditData = {
    id: record.id,
    toolName: record.toolName,
    args: record.args,
    outcome: record.status,
  };
  if (record.requestedBy) data.requestedBy = record.requestedBy;
  if (record.decidedBy) data.decidedBy = record.decidedBy;
  if (record.decidedAt !== undefined) data.decidedAt = record.decidedAt;
  if (remembered) data.remembered = true;
  return data;
}
