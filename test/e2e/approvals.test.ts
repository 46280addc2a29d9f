/**
 * Approval by reaction end to end on Telegram, Slack and Discord: a bash call matching the approval
 * patterns posts a request; a non-admin's ✅ decides nothing; an admin's ✅ runs the call and ❌
 * gives the model a denial; the request message is edited to show the outcome. And the reaction may
 * reach another gateway process than the one whose worker posted the request and waits for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { conversation, type PlatformName, waitForBot, waitForRequest } from "./support/drivers.js";
import { until, World } from "./support/world.js";

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create();
  app = await world.start("all");
  world.slack.eventsUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await world?.close();
});

const isRequest = (text: string) => text.includes("Approval needed") && text.includes("rm -rf scratch");

/** Holds for `ms`: what a reaction that must change nothing is checked with. */
async function stays(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!cond()) throw new Error(`${what} changed`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The approval audit entries of the thread whose first message was `text`. */
async function auditEntries(text: string): Promise<Record<string, unknown>[]> {
  return until(async () => {
    for (const t of await app.store.listThreads({ limit: 100 })) {
      const meta = await app.store.getThreadMeta(t.threadKey);
      if (!meta?.currentSessionId) continue;
      const all = await app.store.readAll(t.threadKey, meta.currentSessionId);
      if (!JSON.stringify(all.entries).includes(text)) continue;
      const found = all.entries.flatMap((e) =>
        e.type === "custom" && e.customType === "approval" ? [e.data as Record<string, unknown>] : [],
      );
      return found.length > 0 ? found : undefined;
    }
    return undefined;
  }, "the approval audit entry");
}

const platforms: PlatformName[] = ["telegram", "slack", "discord"];

describe.each(platforms)("approval on %s", (platform) => {
  it("a non-admin's ✅ does nothing; the admin's ✅ runs the call and the request shows it", async () => {
    const c = conversation(world, platform);
    await c.start(`[rm] clean up please on ${platform}`);
    const request = await waitForRequest(c, (m) => isRequest(m.text));
    await c.react(request.id, "✅", "other");
    await stays(
      () => !c.botMessages().some((m) => m.text.includes("saw the tool result")),
      400,
      "the run after a non-admin's reaction",
    );
    await c.react(request.id, "✅", "admin");
    await waitForBot(
      c,
      (m) => m.text.includes("saw the tool result") && m.text.includes("removed"),
      "the answer after the tool ran",
    );
    const edited = c.botMessages().find((m) => m.id === request.id);
    expect(edited?.text).toMatch(/Approved by/);
    expect(edited?.text).toMatch(c.adminName);
    const audit = await auditEntries(`[rm] clean up please on ${platform}`);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: "approved", toolName: "bash" });
  });

  it("the admin's ❌ denies: the model gets the denial and the request shows it", async () => {
    const c = conversation(world, platform);
    await c.start("[rm] clean up again");
    const request = await waitForRequest(c, (m) => isRequest(m.text));
    await c.react(request.id, "❌", "admin");
    const answer = await waitForBot(
      c,
      (m) => m.text.includes("saw the tool result") && m.text.toLowerCase().includes("denied"),
      "the answer after the denial",
    );
    expect(answer.text).not.toContain("removed");
    await until(
      () =>
        c
          .botMessages()
          .find((m) => m.id === request.id)
          ?.text.match(/Denied by/),
      "the edited request",
    );
  });
});

describe("approval across gateway processes", () => {
  it("an admin's reaction reaching another gateway reaches the worker that waits", async () => {
    const other = await world.start("gateway", { channels: ["slack"] });
    const c = conversation(world, "slack");
    await c.start("[rm] clean up from the first gateway");
    const request = await waitForRequest(c, (m) => isRequest(m.text));
    world.slack.eventsUrl = `${other.url}/slack/events`;
    try {
      await c.react(request.id, "✅", "admin");
      await waitForBot(
        c,
        (m) => m.text.includes("saw the tool result") && m.text.includes("removed"),
        "the answer after approval",
      );
      const approvals = await other.metrics.render();
      expect(approvals.body).toMatch(/switchboard_approvals_total\{[^}]*outcome="approved"[^}]*\} 1/);
    } finally {
      world.slack.eventsUrl = `${app.url}/slack/events`;
    }
  });
});
