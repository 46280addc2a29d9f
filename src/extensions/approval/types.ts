/**
 * Pending approvals: the records an approval request leaves behind and the store contract that
 * carries a decision from whichever process receives it (a reaction or `/approve` at any gateway)
 * to the worker waiting for it. Implementations: `RedisApprovalStore` and `MemoryApprovalStore`
 * in src/queue/approvals/, both run by one contract suite.
 */
import { randomInt } from "node:crypto";
import type { ThreadUser } from "../types.js";

/** How a request ended. `approved_always` also remembers the exact call for the thread. */
export type ApprovalOutcome = "approved" | "approved_always" | "denied" | "expired" | "cancelled";

export type ApprovalStatus = "pending" | ApprovalOutcome;

/** What the requester knows when it asks. Times are ms since the epoch (the injected clock's). */
export interface ApprovalRequest {
  threadKey: string;
  platform: string;
  toolName: string;
  args: Record<string, unknown>;
  /** Identifies the exact call (tool + arguments) for `approved_always`. */
  fingerprint: string;
  /** Who triggered the run that made the call. */
  requestedBy?: ThreadUser;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovalRecord extends ApprovalRequest {
  /** Short id people can type: `/approve <id>`. */
  id: string;
  status: ApprovalStatus;
  /** The request message in the thread, once posted. */
  messageRef?: string;
  decidedBy?: ThreadUser;
  decidedAt?: number;
}

export interface Decision {
  outcome: ApprovalOutcome;
  /** Absent for decisions of the system (expiry). */
  by?: ThreadUser;
  /** When the decision was made (the injected clock's time). */
  at: number;
}

/**
 * `applied`: this decision settled the request. Otherwise `record` shows what had settled it
 * before (or `expired` when a human decision arrived after `expiresAt`); `record` is undefined
 * only for an unknown id.
 */
export interface DecideResult {
  applied: boolean;
  record: ApprovalRecord | undefined;
}

/**
 * Storage of pending approvals, shared by every process of a deployment.
 *
 * - `create` stores a pending request under a fresh short id.
 * - `decide` settles a request atomically: the first decision wins, later ones change nothing. A
 *   human decision (`approved`, `approved_always`, `denied`) after `expiresAt` settles it as
 *   `expired` instead. `approved_always` adds the request's fingerprint to the thread's remembered
 *   calls in the same step. Every settlement notifies waiters in all processes.
 * - `waitForDecision` resolves with the settled record, including when the decision was made
 *   before the call (it re-reads the stored state after subscribing); it never times out by itself
 *   and rejects when `signal` aborts or the id is unknown.
 */
export interface ApprovalStore {
  create(request: ApprovalRequest): Promise<ApprovalRecord>;
  attachMessage(id: string, messageRef: string): Promise<void>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  /** The request whose message is `messageRef` (reactions arrive with the message reference). */
  findByMessage(messageRef: string): Promise<ApprovalRecord | undefined>;
  decide(id: string, decision: Decision): Promise<DecideResult>;
  waitForDecision(id: string, signal?: AbortSignal): Promise<ApprovalRecord>;
  /** Pending requests of a thread (to cancel them on `/stop`). */
  pendingIn(threadKey: string): Promise<ApprovalRecord[]>;
  /** Whether `approved_always` was given for this exact call in the thread. */
  isRemembered(threadKey: string, fingerprint: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Alphabet of approval ids: lower case without look-alikes (0/o, 1/l/i). */
const ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** A fresh random 6-character approval id (about 887 million values; stores retry on a collision). */
export function newApprovalId(): string {
  let id = "";
  for (let i = 0; i < 6; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)] ?? "a";
  return id;
}

/** Whether `text` looks like an approval id (what `/approve <id>` accepts). */
export function isApprovalId(text: string): boolean {
  return /^[a-z2-9]{6}$/.test(text);
}

/** True for the outcomes that let the call run. */
export function isApproval(outcome: ApprovalStatus): boolean {
  return outcome === "approved" || outcome === "approved_always";
}
