/**
 * What the chat shows when a worker dies around a notice it posts (`/new`), on a test clock: the
 * notice is a render-journal record of its own, so whatever the instant it shows once and nothing
 * stays owed (docs/runtime.md, "The render journal").
 */
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import { cleanupClusters, cluster } from "./support/approval-cluster.js";
import type { Death } from "./support/mortal.js";

afterEach(cleanupClusters);

describe("recovery of a notice (test clock)", () => {
  const NOTICE = "Started a new session";
  const noticeCall = (method: string, args: unknown[]) =>
    method === "post" && String(args[1]).startsWith(NOTICE);

  /** `/new` on A, which dies at `death` around its notice; B takes the thread. */
  async function noticeKilled(death: Death, o: { findPosted?: boolean; idempotentPosts?: boolean } = {}) {
    const c = cluster(o);
    const answer = () => new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const a = c.worker("A", answer(), death);
    const b = c.worker("B", answer());
    await c.state.append(c.t, { mode: "followUp", kind: "newSession" }, { cap: 20, dropPolicy: "new" });
    void a.core.process(c.t, { rerun: false });
    await a.mortal.died;
    await c.runUntil(b.core.process(c.t, { rerun: true }));
    expect(c.shown().filter((m) => m.startsWith(NOTICE))).toHaveLength(1);
    expect(await c.journal.owed(c.t)).toEqual([]);
    expect(c.errors).toEqual([]);
    return c;
  }

  it("killed before the notice's post: the next worker posts it once", async () => {
    await noticeKilled({ at: noticeCall });
  });

  it("killed after the notice reached the chat, before its id came back (found by key): shown once", async () => {
    await noticeKilled({ at: noticeCall, after: true }, { findPosted: true });
  });

  it("the same where a repeated post returns the first (Discord nonce): shown once", async () => {
    await noticeKilled({ at: noticeCall, after: true }, { idempotentPosts: true });
  });

  it("killed after its id was recorded, before the record was cleared: shown once, not posted again", async () => {
    const c = await noticeKilled({ at: (method) => method === "drop" });
    expect(c.chat.calls.filter((x) => x.op === "post" && x.ok && x.text?.startsWith(NOTICE))).toHaveLength(1);
  });
});
