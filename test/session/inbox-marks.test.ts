/**
 * The marks that tell crash recovery which inbox items a session holds: user entries made from
 * items carry an `inbox` field and an 8-hex id (pi's shape); sessions written before carry the
 * mark in a `q<first>-<last>-<at>` id, which is still read.
 */
import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/adapters/types.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import type { InboxItem } from "../../src/queue/types.js";
import { groupItems, heldSeqs, plainInboundFormatter } from "../../src/queue/worker/item-messages.js";
import { user } from "./fixtures.js";

function item(seq: number, at: number, mode: InboxItem["mode"] = "steer"): InboxItem {
  const message = { text: `m${seq}`, attachments: [], timestamp: at } as unknown as InboundMessage;
  return { seq, at, mode, kind: "message", message };
}

describe("inbox marks", () => {
  it("a group's entry id is 8 hex characters, the same for the same items, and its mark names them", () => {
    const [single, merged] = groupItems(
      [item(1, 1000), item(2, 2000, "collect"), item(3, 3000, "collect")],
      plainInboundFormatter,
    );
    expect(single).toMatchObject({ mark: { first: 1, last: 1, at: 1000 } });
    expect(merged).toMatchObject({ mark: { first: 2, last: 3, at: 3000 } });
    expect(single?.entryId).toMatch(/^[0-9a-f]{8}$/);
    expect(merged?.entryId).toMatch(/^[0-9a-f]{8}$/);
    expect(single?.entryId).not.toBe(merged?.entryId);
    expect(groupItems([item(1, 1000)], plainInboundFormatter)[0]?.entryId).toBe(single?.entryId);
  });

  it("recovery finds the items a session holds by the mark, whatever the entry's id became", () => {
    const chain = new EntryChain(null);
    // The store renamed the id on a clash: the mark still says which items it holds.
    chain.add({ type: "message", message: user("m1 m2"), inbox: { first: 1, last: 2, at: 2000 } });
    const entries = chain.entries.map((e) => ({ ...e, id: "0badc0de" }) as SessionEntry);
    expect(heldSeqs(entries, [item(1, 1000), item(2, 2000), item(3, 3000)])).toEqual([1, 2]);
    // A mark older than an item is another item that had the same seq (a reset counter).
    expect(heldSeqs(entries, [item(2, 5000)])).toEqual([]);
  });

  it("still reads the marks of sessions written before (q<first>-<last>-<at in base 36> ids)", () => {
    const legacy = {
      type: "message",
      id: `q4-5-${(5000).toString(36)}`,
      parentId: null,
      timestamp: "2025-01-01T00:00:00.000Z",
      message: user("old"),
    } as SessionEntry;
    expect(heldSeqs([legacy], [item(4, 4000), item(5, 5000), item(6, 6000)])).toEqual([4, 5]);
  });
});
