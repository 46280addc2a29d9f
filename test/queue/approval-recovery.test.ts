/**
 * What the chat shows when a worker dies around an approval request or a notice, on a test clock:
 * two workers, one thread, the real approval extension on the worker's thread host, the real
 * renderer on a recording chat (or the real Slack / Discord adapter over its wire fake), the render
 * journal in memory. A worker "dies" at a chosen instant (none of its calls to the state, the
 * store, the journal, the approval store or the chat comes back); the next worker takes the thread.
 * Whatever the instant, the request shows once and ends saying how it ended, it is settled in the
 * approval store, a notice shows once, and nothing stays owed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createDiscordHarness } from "../adapters/harness/discord.js";
import { CHANNEL, createSlackHarness, USERS } from "../adapters/harness/slack.js";
import { GENERAL_ID, GUILD_ID } from "../fakes/discord/server.js";
import { TEAM_ID } from "../fakes/slack/world.js";
import { lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import {
  cleanupClusters,
  cluster,
  onCleanup,
  REQUEST,
  requestCall,
  STOPPED,
  toolFirst,
  type Wire,
} from "./support/approval-cluster.js";
import type { Death } from "./support/mortal.js";

afterEach(cleanupClusters);

/**
 * A kills at `death` (or, for "waiting", once the request shows with its reactions; for a death
 * object with `decide`, an admin approves once it shows), B recovers.
 */
async function killedAt(
  death: Death | "waiting",
  o: { findPosted?: boolean; idempotentPosts?: boolean; decide?: boolean; wire?: Wire } = {},
) {
  const c = cluster(o);
  const a = c.worker("A", toolFirst(), typeof death === "object" ? death : undefined);
  // B answers whatever the session holds (a dangling call is closed as interrupted; without it the
  // question is answered directly), so it never asks again.
  const b = c.worker("B", new ScriptedStream((call) => `ack ${lastUserText(call)}`));
  await c.deliver("one");
  const reacted = a.mortal.completed((method, args) => method === "react" && args[1] === "♾️");
  void a.core.process(c.t, { rerun: false });
  if (death === "waiting" || o.decide) await c.settle(reacted);
  if (o.decide) {
    const [pending] = await c.approvals.pendingIn(c.t);
    await c.approvals.decide(pending?.id ?? "", {
      outcome: "approved",
      by: { id: "UADMIN", name: "bob" },
      at: c.clock.now(),
    });
  }
  if (death === "waiting") a.mortal.kill();
  else await a.mortal.died;
  await c.runUntil(b.core.process(c.t, { rerun: true }));
  expect(c.ran).toEqual([]);
  expect(c.shown().at(-1)).toBe("ack one");
  expect(await c.approvals.pendingIn(c.t)).toEqual([]);
  expect(await c.journal.owed(c.t)).toEqual([]);
  expect(c.errors).toEqual([]);
  return c;
}

/** The edits the request message got. */
const requestEdits = (c: ReturnType<typeof cluster>) => {
  const ref = c.chat.calls.find((x) => x.op === "post" && x.ok && x.text?.startsWith(REQUEST))?.ref ?? "";
  return c.chat.edits(ref);
};

describe("recovery of an approval request (test clock)", () => {
  it("killed before the request's post: the next worker shows it once, cancelled", async () => {
    const c = await killedAt({ at: requestCall });
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
  });

  it("killed after the request reached the chat, before its id came back (Slack finds it by key): one request, edited to cancelled", async () => {
    const c = await killedAt({ at: requestCall, after: true }, { findPosted: true });
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
  });

  it("the same on a platform whose repeated post returns the first (Discord nonce): one request, edited to cancelled", async () => {
    const c = await killedAt({ at: requestCall, after: true }, { idempotentPosts: true });
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
  });

  it("killed after the request's id was recorded: one request, edited to cancelled once", async () => {
    const c = await killedAt({ at: (method: string) => method === "attachMessage", after: true });
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
    expect(requestEdits(c)).toHaveLength(1);
  });

  it("killed while waiting for the reaction: one request, edited to cancelled once, settled in the store", async () => {
    const c = await killedAt("waiting");
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
    expect(requestEdits(c)).toHaveLength(1);
  });

  it("killed after an admin approved, before the request's edit: the next worker shows the decision", async () => {
    const c = await killedAt(
      { at: (method: string, args: unknown[]) => method === "edit" && String(args[1]).startsWith(REQUEST) },
      { decide: true },
    );
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain("✅ Approved by bob");
  });

  it("the next worker dies too, after settling the request, before its edit: a third edits it, once", async () => {
    const c = cluster();
    const a = c.worker("A", toolFirst());
    const answer = () => new ScriptedStream((call) => `ack ${lastUserText(call)}`);
    const b = c.worker("B", answer(), {
      at: (method, args) => method === "edit" && String(args[1]).startsWith(REQUEST),
    });
    const third = c.worker("C", answer());
    await c.deliver("one");
    const reacted = a.mortal.completed((method, args) => method === "react" && args[1] === "♾️");
    void a.core.process(c.t, { rerun: false });
    await c.settle(reacted);
    a.mortal.kill();
    void b.core.process(c.t, { rerun: true });
    const bDied = b.mortal.died;
    await c.runUntil(bDied);
    // B settled it in the store (no reaction or /approve acts on it now); the chat still asks.
    expect(await c.approvals.pendingIn(c.t)).toEqual([]);
    expect(c.requests()[0]).not.toContain(STOPPED);
    await c.runUntil(third.core.process(c.t, { rerun: true }));
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
    expect(requestEdits(c)).toHaveLength(1);
    expect(c.shown().at(-1)).toBe("ack one");
    expect(await c.journal.owed(c.t)).toEqual([]);
    expect(c.errors).toEqual([]);
  });
});

describe("recovery of an approval request through the Slack wire fake", () => {
  it("killed after Slack made the request, before its answer came back: it shows once and ends cancelled", async () => {
    const slack = await createSlackHarness({ mode: "http", start: false });
    onCleanup(() => slack.close());
    const root = slack.fake.seed({ channel: CHANNEL, user: USERS.alice ?? "", text: "please clean up" });
    const threadKey = `slack:${TEAM_ID}:${CHANNEL}:${root.ts}`;
    const wire: Wire = {
      adapter: slack.adapter,
      clock: slack.clock,
      threadKey,
      platform: "slack",
      shown: () => slack.thread(threadKey).flatMap((m) => (m.fromBot ? [m.text] : [])),
    };
    const c = await killedAt({ at: requestCall, after: true }, { wire });
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
    // Found by its metadata, then edited: one chat.postMessage of the request, one chat.update.
    const calls = slack.fake.api.calls.filter((x) => String(x.params.text ?? "").startsWith(REQUEST));
    expect(calls.map((x) => x.method)).toEqual(["chat.postMessage", "chat.update"]);
  });
});

describe("recovery of an approval request through the Discord wire fake", () => {
  it("killed after Discord made the request, before its answer came back: the nonce returns it, it shows once and ends cancelled", async () => {
    const discord = await createDiscordHarness({ start: false });
    onCleanup(() => discord.close());
    const threadKey = `discord:${GUILD_ID}:${GENERAL_ID}:0`;
    const wire: Wire = {
      adapter: discord.adapter,
      clock: discord.clock,
      threadKey,
      platform: "discord",
      shown: () => discord.thread(threadKey).flatMap((m) => (m.fromBot ? [m.text] : [])),
    };
    const c = await killedAt({ at: requestCall, after: true }, { wire });
    expect(c.requests()).toHaveLength(1);
    expect(c.requests()[0]).toContain(STOPPED);
    // The repeat carried the first post's nonce and got the first message back, then one edit.
    const request = discord.fake.rest.calls.filter((x) =>
      String((x.body as { content?: unknown } | undefined)?.content ?? "").startsWith(REQUEST),
    );
    expect(request.map((x) => `${x.method} ${x.status}`)).toEqual(["POST 200", "POST 200", "PATCH 200"]);
    const nonces = request.flatMap((x) =>
      x.method === "POST" ? [(x.body as { nonce?: unknown }).nonce] : [],
    );
    expect(new Set(nonces).size).toBe(1);
  });
});
