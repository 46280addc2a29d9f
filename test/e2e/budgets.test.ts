/**
 * Budgets end to end, as people meet them: in a Telegram group (through the Telegram fake) a
 * thread's daily token cap warns once past `warnAt`, then a message over the cap asks the admins;
 * a non-admin's ✅ decides nothing, the admin's ✅ lets that one run answer, ❌ leaves the cap
 * message and keeps the message in the session; `/usage` shows where people stand; `/budget raise`
 * by an admin lifts the cap (refused to others). In the web chat its owner is asked the same way
 * and answers with `/approve <id>`. Each fake answer costs 15 tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { type Conversation, conversation, waitForBot } from "./support/drivers.js";
import { openWebConversation } from "./support/web-chat.js";
import { until, World } from "./support/world.js";

let world: World;
let app: Gateway;

const BUDGETS = [
  "budgets:",
  "  warnAt: 0.5",
  "  thread: { day: { tokens: 40 } }",
  "  approvalTimeoutMs: 60000",
].join("\n");

beforeAll(async () => {
  world = await World.create({ redis: false, extraYaml: BUDGETS });
  app = await world.start("all", { channels: ["telegram"], web: true, keepRecentTokens: 1 });
});
afterAll(async () => {
  await world?.close();
});

/** Sends `text` and waits for the fake model's answer to it. */
async function ask(c: Conversation, text: string, first = false): Promise<void> {
  await (first ? c.start(text) : c.say(text));
  await waitForBot(c, (m) => m.text === `alpha answers: ${text}`, `the answer to "${text}"`);
}

/** Every user message text in the sessions of the thread whose history mentions `marker`. */
async function sessionTexts(marker: string): Promise<string> {
  return until(async () => {
    for (const t of await app.store.listThreads({ limit: 200 })) {
      const meta = await app.store.getThreadMeta(t.threadKey);
      if (!meta?.currentSessionId) continue;
      const all = JSON.stringify((await app.store.readAll(t.threadKey, meta.currentSessionId)).entries);
      if (all.includes(marker)) return all;
    }
    return undefined;
  }, "the thread's session");
}

const isAsk = (text: string) => text.includes("daily budget is used up") && text.includes("react ✅");

describe("budgets on Telegram", () => {
  it("warns once, asks the admins at the cap, and runs on the admin's ✅ only", async () => {
    const c = conversation(world, "telegram");
    await ask(c, "one", true);
    expect(c.botMessages().some((m) => m.text.includes("⚠️"))).toBe(false);
    await ask(c, "two");
    const warning = await waitForBot(c, (m) => m.text.startsWith("⚠️"), "the warning at 50 %");
    expect(warning.text).toContain("75 % of this thread's daily budget is used (30 tokens of 40 tokens)");
    expect(warning.text).toMatch(/resets at \w{3} \d{4}-\d\d-\d\d 00:00 UTC/);
    await ask(c, "three");
    expect(c.botMessages().filter((m) => m.text.startsWith("⚠️"))).toHaveLength(1);

    const calls = world.requests("openai-completions").length;
    await c.say("four");
    const request = await waitForBot(c, (m) => isAsk(m.text), "the request to the admins");
    await until(() => c.botReactions(request.id).includes("❌"), "the bot's reactions on the request");
    expect(request.text).toContain("45 tokens of 40 tokens");
    expect(world.requests("openai-completions").length).toBe(calls);
    await c.react(request.id, "✅", "other");
    await c.react(request.id, "✅", "admin");
    await waitForBot(c, (m) => m.text === "alpha answers: four", "the answer an admin allowed");
    await until(
      () =>
        c
          .botMessages()
          .find((m) => m.id === request.id)
          ?.text.includes("One more run allowed by"),
      "the request edited to show the decision",
    );
  });

  it("at the admin's ❌ shows the cap message and keeps the message in the session", async () => {
    const c = conversation(world, "telegram");
    await ask(c, "alpha", true);
    await ask(c, "beta");
    await ask(c, "gamma");
    await c.say("delta over the cap");
    const request = await waitForBot(c, (m) => isAsk(m.text), "the request to the admins");
    await until(() => c.botReactions(request.id).includes("❌"), "the bot's reactions on the request");
    await c.react(request.id, "❌", "admin");
    const refusal = await waitForBot(c, (m) => m.text.includes("Not run:"), "the cap message");
    expect(refusal.text).toContain("this thread's daily budget is used up (45 tokens of 40 tokens)");
    expect(refusal.text).toContain("An admin can raise it with /budget");
    expect(refusal.text).not.toContain("alpha answers: delta");
    expect(await sessionTexts("delta over the cap")).toContain("delta over the cap");
  });

  it("/usage shows the spending, /budget raise lifts the cap for admins only", async () => {
    const c = conversation(world, "telegram");
    await ask(c, "a", true);
    await ask(c, "b");
    await ask(c, "c");
    await c.command("usage");
    const usage = await waitForBot(c, (m) => m.text.startsWith("Spending:"), "the /usage answer");
    expect(usage.text).toContain("This thread's daily budget: 45 tokens of 40 tokens");
    expect(usage.text).toMatch(/Your calls this month by model: alpha\/one \$0\.00 \(\d+ calls\)/);

    c.commandByOther?.("budget", "raise thread day 200 tokens");
    await waitForBot(
      c,
      (m) => m.text.startsWith("Only admins of telegram can change budgets"),
      "the refusal",
    );
    await c.command("budget", "raise thread day 200 tokens");
    const raised = await waitForBot(
      c,
      (m) => m.text.startsWith("Set this thread's daily budget"),
      "the raise",
    );
    expect(raised.text).toContain("to 200 tokens until it resets");
    await ask(c, "after the raise");
    await c.command("budget");
    const caps = await waitForBot(c, (m) => m.text.startsWith("Budget caps here:"), "the /budget answer");
    expect(caps.text).toContain("60 tokens of 200 tokens");

    await c.command("budget", "raise thread day 5");
    await waitForBot(
      c,
      (m) => m.text.startsWith('"5" is no limit: say $5 for money or 500k tokens'),
      "bad amount",
    );
    await c.command("budget", "raise user @bob day $5");
    await waitForBot(c, (m) => m.text.startsWith("Name the user by their telegram user id"), "no @username");
    await c.command("budget", "raise channel day $5000000000");
    await waitForBot(
      c,
      (m) => m.text.startsWith("At most $1,000,000,000 can be set here"),
      "the largest limit",
    );
    await c.command("budget", "reset thread day");
    await waitForBot(c, (m) => m.text.startsWith("Reset this thread's daily budget"), "the reset");
    await c.command("budget");
    await until(
      () =>
        c
          .botMessages()
          .some((m) => m.text.startsWith("Budget caps here:") && m.text.includes("0 tokens of 200 tokens")),
      "the spending back at zero",
    );
  });
});

describe("what budgets count", () => {
  it("counts a sub-agent's calls and compaction's summary against the thread, and shows in /metrics", async () => {
    const c = conversation(world, "telegram");
    world.llm.enqueue("openai-completions", [
      {
        toolCalls: [{ id: "call_b1", name: "spawn_sub_agent", args: { task: "count" } }],
        usage: { input: 1, output: 1 },
      },
      { text: "3", usage: { input: 1, output: 1 } },
      { text: "The sub-agent counted 3.", usage: { input: 1, output: 1 } },
    ]);
    await c.start("count with a sub-agent");
    await waitForBot(c, (m) => m.text === "The sub-agent counted 3.", "the answer after the sub-agent");
    world.llm.enqueue("openai-completions", { text: "## Goal\nCount.", usage: { input: 2, output: 2 } });
    await c.command("compact");
    await waitForBot(c, (m) => m.text.includes("Compacted the conversation"), "the compaction notice");
    await until(async () => {
      await c.command("usage");
      return c
        .botMessages()
        .some((m) => m.text.includes("This thread's daily budget: 10 tokens of 40 tokens"));
    }, "the three calls of the run and the summary counted against the thread");

    // The refusals of the tests before are counted by the cap that refused them.
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchboard_budget_refusals_total\{[^}]*scope="thread"[^}]*period="day"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(/switchboard_budget_deployment_spent_usd\{[^}]*period="month"[^}]*\} \d/);
  });
});

describe("budgets in the web chat", () => {
  it("asks its owner at the cap, and `/approve <id>` lets the message run", async () => {
    const web = await openWebConversation(app);
    for (const text of ["one", "two", "three"]) {
      await web.say(text);
      await until(
        async () => (await web.botTexts()).includes(`alpha answers: ${text}`),
        `the answer to ${text}`,
      );
    }
    await web.say("four");
    const request = await until(
      async () => (await web.botTexts()).find((t) => isAsk(t)),
      "the request in the web chat",
    );
    expect(request).toContain("45 tokens of 40 tokens");
    const id = /`\/approve ([a-z2-9]{6})`/.exec(request)?.[1];
    if (!id) throw new Error(`no request id in ${request}`);
    await web.say(`/approve ${id}`);
    await until(
      async () => (await web.botTexts()).includes("alpha answers: four"),
      "the answer /approve allowed",
    );
  });
});
