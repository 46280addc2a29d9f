/**
 * Pending approvals in one process (the embedded runtime): the same contract as the Redis store,
 * with decisions delivered to waiters directly.
 */
import {
  type ApprovalRecord,
  type ApprovalRequest,
  type ApprovalStore,
  type DecideResult,
  type Decision,
  newApprovalId,
} from "../../extensions/approval/types.js";

function copy(record: ApprovalRecord): ApprovalRecord {
  return structuredClone(record);
}

/** How long settled requests stay readable (late reactions, `/approve` of a settled id). */
const RETENTION_MS = 24 * 60 * 60 * 1000;

export class MemoryApprovalStore implements ApprovalStore {
  private readonly records = new Map<string, ApprovalRecord>();
  private readonly byMessage = new Map<string, string>();
  private readonly remembered = new Map<string, Set<string>>();
  private readonly waiters = new Map<string, Set<() => void>>();

  async create(request: ApprovalRequest): Promise<ApprovalRecord> {
    this.prune(request.createdAt);
    let id = newApprovalId();
    while (this.records.has(id)) id = newApprovalId();
    const record: ApprovalRecord = { ...structuredClone(request), id, status: "pending" };
    this.records.set(id, record);
    return copy(record);
  }

  async attachMessage(id: string, messageRef: string): Promise<void> {
    const record = this.records.get(id);
    if (!record) throw new Error(`Unknown approval "${id}": create it before attaching its message.`);
    record.messageRef = messageRef;
    this.byMessage.set(messageRef, id);
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    const record = this.records.get(id);
    return record ? copy(record) : undefined;
  }

  async findByMessage(messageRef: string): Promise<ApprovalRecord | undefined> {
    const id = this.byMessage.get(messageRef);
    return id ? this.get(id) : undefined;
  }

  async decide(id: string, decision: Decision): Promise<DecideResult> {
    const record = this.records.get(id);
    if (!record) return { applied: false, record: undefined };
    if (record.status !== "pending") return { applied: false, record: copy(record) };
    const human = decision.outcome !== "expired" && decision.outcome !== "cancelled";
    const late = human && decision.at > record.expiresAt;
    record.status = late ? "expired" : decision.outcome;
    record.decidedAt = decision.at;
    if (decision.by && !late) record.decidedBy = { ...decision.by };
    if (record.status === "approved_always") {
      const set = this.remembered.get(record.threadKey) ?? new Set();
      set.add(record.fingerprint);
      this.remembered.set(record.threadKey, set);
    }
    for (const wake of [...(this.waiters.get(id) ?? [])]) wake();
    return { applied: !late, record: copy(record) };
  }

  waitForDecision(id: string, signal?: AbortSignal): Promise<ApprovalRecord> {
    return new Promise((resolve, reject) => {
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set);
      const cleanup = () => {
        set.delete(check);
        if (set.size === 0) this.waiters.delete(id);
        signal?.removeEventListener("abort", onAbort);
      };
      const check = () => {
        const record = this.records.get(id);
        if (!record) {
          cleanup();
          reject(new Error(`Unknown approval "${id}".`));
        } else if (record.status !== "pending") {
          cleanup();
          resolve(copy(record));
        }
      };
      const onAbort = () => {
        cleanup();
        reject(signal?.reason ?? new Error("aborted"));
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(check);
      check();
    });
  }

  async pendingIn(threadKey: string): Promise<ApprovalRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.threadKey === threadKey && r.status === "pending")
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(copy);
  }

  async isRemembered(threadKey: string, fingerprint: string): Promise<boolean> {
    return this.remembered.get(threadKey)?.has(fingerprint) ?? false;
  }

  /** Forgets requests settled (or expired) more than a day before `now`. */
  private prune(now: number): void {
    for (const [id, r] of this.records) {
      if (Math.max(r.decidedAt ?? 0, r.expiresAt) + RETENTION_MS >= now) continue;
      this.records.delete(id);
      if (r.messageRef) this.byMessage.delete(r.messageRef);
    }
  }

  async close(): Promise<void> {
    this.waiters.clear();
  }
}
