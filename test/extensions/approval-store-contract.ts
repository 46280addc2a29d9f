/**
 * The `ApprovalStore` contract, run against every implementation. `make()` returns a store and,
 * where the implementation is shared across processes, `other()` a second store on its own
 * connection (another gateway process); for the memory store both are the same object.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest, ApprovalStore } from "../../src/extensions/approval/types.js";
import { isApprovalId } from "../../src/extensions/approval/types.js";

export interface StorePair {
  store: ApprovalStore;
  other: ApprovalStore;
  close(): Promise<void>;
}

const T0 = 1_700_000_000_000;
let seq = 0;

function request(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  seq++;
  return {
    threadKey: `slack:T1:C1:${seq}.0`,
    platform: "slack",
    toolName: "bash",
    args: { command: "rm -rf build", flags: [] },
    fingerprint: `bash:fp${seq}`,
    requestedBy: { id: "U1", name: "alice" },
    createdAt: T0,
    expiresAt: T0 + 600_000,
    ...overrides,
  };
}

const bob = { id: "U2", name: "bob" };

export function approvalStoreContract(name: string, make: () => Promise<StorePair>): void {
  describe(`ApprovalStore contract: ${name}`, () => {
    let pair: StorePair | undefined;
    const open = async () => {
      pair = await make();
      return pair;
    };
    afterEach(async () => {
      await pair?.close();
      pair = undefined;
    });

    it("stores a pending request under a short typable id, found by id and by message", async () => {
      const { store, other } = await open();
      const created = await store.create(request());
      expect(isApprovalId(created.id)).toBe(true);
      expect(created.status).toBe("pending");
      await store.attachMessage(created.id, "slack:C1:1712.5");
      const byId = await other.get(created.id);
      expect(byId).toMatchObject({
        status: "pending",
        toolName: "bash",
        args: { command: "rm -rf build", flags: [] },
      });
      expect((await other.findByMessage("slack:C1:1712.5"))?.id).toBe(created.id);
      expect(await other.findByMessage("slack:C1:other")).toBeUndefined();
      expect(await other.get("zzzzzz")).toBeUndefined();
    });

    it("the first decision wins and later ones change nothing", async () => {
      const { store, other } = await open();
      const { id } = await store.create(request());
      const first = await other.decide(id, { outcome: "denied", by: bob, at: T0 + 1000 });
      expect(first).toMatchObject({
        applied: true,
        record: { status: "denied", decidedBy: bob, decidedAt: T0 + 1000 },
      });
      const second = await store.decide(id, { outcome: "approved", by: { id: "U3" }, at: T0 + 2000 });
      expect(second).toMatchObject({ applied: false, record: { status: "denied", decidedBy: bob } });
      expect(await store.decide("zzzzzz", { outcome: "approved", at: T0 })).toEqual({
        applied: false,
        record: undefined,
      });
    });

    it("a human decision after the expiry settles the request as expired", async () => {
      const { store } = await open();
      const { id } = await store.create(request());
      const late = await store.decide(id, { outcome: "approved", by: bob, at: T0 + 600_001 });
      expect(late.applied).toBe(false);
      expect(late.record?.status).toBe("expired");
      expect(late.record?.decidedBy).toBeUndefined();
    });

    it("approved_always remembers the exact call for the thread only", async () => {
      const { store, other } = await open();
      const req = request();
      const { id } = await store.create(req);
      expect(await store.isRemembered(req.threadKey, req.fingerprint)).toBe(false);
      await other.decide(id, { outcome: "approved_always", by: bob, at: T0 + 5 });
      expect(await store.isRemembered(req.threadKey, req.fingerprint)).toBe(true);
      expect(await store.isRemembered("slack:T1:C1:elsewhere", req.fingerprint)).toBe(false);
      expect(await store.isRemembered(req.threadKey, "bash:other")).toBe(false);
    });

    it("a waiter gets a decision made later through another store (another process)", async () => {
      const { store, other } = await open();
      const { id } = await store.create(request());
      const waiting = store.waitForDecision(id);
      await other.decide(id, { outcome: "approved", by: bob, at: T0 + 10 });
      await expect(waiting).resolves.toMatchObject({ id, status: "approved", decidedBy: bob });
    });

    it("a waiter gets a decision made before it started waiting", async () => {
      const { store, other } = await open();
      const { id } = await store.create(request());
      await other.decide(id, { outcome: "denied", by: bob, at: T0 + 10 });
      await expect(store.waitForDecision(id)).resolves.toMatchObject({ status: "denied" });
    });

    it("waiting rejects on abort and for an unknown id", async () => {
      const { store } = await open();
      const { id } = await store.create(request());
      const controller = new AbortController();
      const waiting = store.waitForDecision(id, controller.signal);
      controller.abort(new Error("run stopped"));
      await expect(waiting).rejects.toThrow("run stopped");
      await expect(store.waitForDecision("zzzzzz")).rejects.toThrow(/Unknown approval/);
      expect((await store.get(id))?.status).toBe("pending");
    });

    it("lists a thread's pending requests, oldest first, without settled ones", async () => {
      const { store } = await open();
      const threadKey = `slack:T1:C1:list${seq}`;
      const a = await store.create(request({ threadKey, createdAt: T0 }));
      const b = await store.create(request({ threadKey, createdAt: T0 + 1 }));
      const c = await store.create(request({ threadKey, createdAt: T0 + 2 }));
      await store.create(request());
      await store.decide(b.id, { outcome: "cancelled", at: T0 + 3 });
      expect((await store.pendingIn(threadKey)).map((r) => r.id)).toEqual([a.id, c.id]);
    });
  });
}
