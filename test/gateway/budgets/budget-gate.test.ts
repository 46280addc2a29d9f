/**
 * The budget gate on a manual clock, with the embedded ledger and approval store: a call under the
 * caps is made and settled to its actual cost; a call at a cap is not made and fails as data with
 * the cap message; a call held back by other calls' reservations waits for them (or for a dead
 * worker's lease to run out) instead of being refused; the warning comes once per cap and period;
 * a new day in the ledger's zone starts at zero; an admin's ✅ lets the rest of one run pass.
 */
import { describe, expect, it } from "vitest";
import { AssistantMessageEventStream } from "../../../src/agent/llm/event-stream.js";
import type { AssistantMessage, Context, Model } from "../../../src/agent/llm/types.js";
import { createAssistantMessage } from "../../../src/agent/llm/usage.js";
import type { StreamFn } from "../../../src/agent/types.js";
import { type BudgetCaller, BudgetGate } from "../../../src/gateway/app/budgets/gate.js";
import { silentProcessLogger } from "../../../src/gateway/log.js";
import { MemoryApprovalStore } from "../../../src/queue/approvals/memory-store.js";
import { MemoryBudgetLedger } from "../../../src/queue/budgets/memory-ledger.js";
import type { BudgetPolicy } from "../../../src/queue/budgets/policy.js";
import { ManualClock } from "../../support/manual-clock.js";

const MODEL: Model = {
  id: "one",
  name: "One",
  api: "openai-completions",
  provider: "alpha",
  reasoning: false,
  input: ["text"],
  // $1 per million input tokens, $2 per million output tokens.
  cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100_000,
  maxTokens: 1000,
};
const CONTEXT: Context = { messages: [{ role: "user", content: "hello", timestamp: 0 }] };

/** A model that answers every call with `tokens` tokens costing `usd`, counting its calls. */
function fakeModel(tokens = 100, usd = 0.01) {
  const calls: number[] = [];
  const fn: StreamFn = () => {
    calls.push(calls.length);
    const stream = new AssistantMessageEventStream();
    const message: AssistantMessage = {
      ...createAssistantMessage(MODEL),
      content: [{ type: "text", text: "ok" }],
      usage: {
        input: tokens,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: tokens,
        cost: { input: usd, output: 0, cacheRead: 0, cacheWrite: 0, total: usd },
      },
    };
    stream.push({ type: "done", reason: "stop", message });
    stream.end();
    return stream;
  };
  return { fn, calls };
}

interface Setup {
  policy: BudgetPolicy;
  /** Settles that fail before the ledger takes one (a Redis failover). */
  failingSettles?: number;
  admins?: boolean;
  timeZone?: string;
  start?: number;
}

function setUp(s: Setup) {
  const clock = new ManualClock(s.start ?? Date.UTC(2026, 11, 3, 10, 0));
  const timeZone = s.timeZone ?? "UTC";
  const ledger = new MemoryBudgetLedger({ timeZone });
  let failing = s.failingSettles ?? 0;
  const settle = ledger.settle.bind(ledger);
  ledger.settle = async (r) => {
    if (failing-- > 0) throw new Error("Connection is closed.");
    return settle(r);
  };
  const approvals = new MemoryApprovalStore();
  const posts: string[] = [];
  const edits = new Map<string, string>();
  const refused: string[] = [];
  const gate = new BudgetGate({
    ledger,
    policy: s.policy,
    timeZone,
    warnAt: 0.8,
    reservationTtlMs: 60_000,
    approvalTimeoutMs: s.admins ? 30_000 : 0,
    approvals,
    hasAdmins: () => s.admins ?? false,
    clock,
    metrics: {
      budgetRefused: (cap) => refused.push(`${cap.scope}:${cap.period}`),
      budgetReserved: () => {},
      budgetSettled: () => {},
      budgetOverride: () => {},
    },
    logger: silentProcessLogger(),
  });
  const caller: BudgetCaller = {
    threadKey: "telegram:-100:0:0",
    channelKey: "telegram:-100",
    userKey: "telegram:42",
    platform: "telegram",
    user: { id: "42", name: "alice" },
    chat: {
      post: async (text) => {
        posts.push(text);
        return `m${posts.length}`;
      },
      react: async () => {},
      postRequest: async (_id, text) => {
        posts.push(text);
        const ref = `m${posts.length}`;
        return { ref, finish: async (t) => void edits.set(ref, t) };
      },
    },
  };
  return { clock, ledger, approvals, gate, caller, posts, edits, refused };
}

/** One gated call to its end. */
async function call(fn: StreamFn, signal?: AbortSignal): Promise<AssistantMessage> {
  return (await fn(MODEL, CONTEXT, signal ? { signal } : {})).result();
}

const tokensCap = (tokens: number): BudgetPolicy => ({ limits: { user: { day: { tokens } } }, members: [] });

/** Moves time a poll (250 ms) at a time, each once the gate waits again, until `pending` ends. */
async function pollUntilSettled(clock: ManualClock, pending: Promise<unknown>): Promise<void> {
  const done = pending.then(() => "done" as const);
  while ((await Promise.race([clock.sleeping(250).then(() => "polling" as const), done])) === "polling")
    await clock.advance(250);
}

/** The admin ada approves the thread's one pending request. */
async function approveAsAda(approvals: MemoryApprovalStore, threadKey: string, at: number): Promise<void> {
  const [request] = await approvals.pendingIn(threadKey);
  if (!request) throw new Error("no request");
  await approvals.decide(request.id, { outcome: "approved", by: { id: "7", name: "ada" }, at });
}

/** The user's day as the ledger reports it (the 1000-token cap of `tokensCap(1000)`). */
async function userDay(ledger: MemoryBudgetLedger, now: number) {
  const [u] = await ledger.usage([{ scope: "user", key: "telegram:42", period: "day", tokens: 1000 }], now);
  return u;
}

/** Another call's reservation filling the user's 1000-token day (`tokensCap(1000)`); its caps. */
async function fillWithReservation(ledger: MemoryBudgetLedger, now: number, callId: string, ttlMs: number) {
  const caps = [{ scope: "user" as const, key: "telegram:42", period: "day" as const, tokens: 1000 }];
  await ledger.reserve({ callId, caps, amount: { usd: 0, tokens: 1000 }, now, ttlMs });
  return caps;
}

describe("BudgetGate", () => {
  it("makes a call under the caps and settles it to what it cost", async () => {
    const { gate, caller, ledger, clock } = setUp({ policy: tokensCap(1000) });
    const model = fakeModel(100, 0.01);
    const m = await call(gate.wrap(model.fn, () => caller));
    expect(m.stopReason).toBe("stop");
    await clock.advance(0);
    const u = await userDay(ledger, clock.now());
    expect(u?.spent).toEqual({ usd: 0.01, tokens: 100 });
    expect(u?.reserved).toEqual({ usd: 0, tokens: 0 });
  });

  it("does not make a call at a cap: it fails with the cap's name, spending, reset and who can raise it", async () => {
    const { gate, caller, clock, refused } = setUp({ policy: tokensCap(150) });
    const model = fakeModel(100);
    const wrapped = gate.wrap(model.fn, () => caller);
    await call(wrapped);
    await clock.advance(0);
    await call(wrapped); // 100 < 150: admitted, takes the spending to 200
    await clock.advance(0);
    const m = await call(wrapped);
    expect(model.calls).toHaveLength(2);
    expect(m.stopReason).toBe("error");
    expect(m.errorMessage).toBe(
      "💸 Not run: your daily budget is used up (200 tokens of 150 tokens). It resets at Fri 2026-12-04 00:00 UTC (in 14 h). " +
        "An operator can raise budgets.user.day in the config. Your message is kept in the conversation.",
    );
    expect(refused).toEqual(["user:day"]);
  });

  it("waits out other calls' reservations instead of refusing while the spending is under the cap", async () => {
    const { gate, caller, ledger, clock } = setUp({ policy: tokensCap(1000) });
    // Another worker's call reserved its worst case: the cap is full of reservations, spent is 0.
    const caps = await fillWithReservation(ledger, clock.now(), "other", 60_000);
    const model = fakeModel(100);
    const pending = call(gate.wrap(model.fn, () => caller));
    await clock.sleeping(250);
    expect(model.calls).toHaveLength(0);
    await ledger.settle({ callId: "other", caps, actual: { usd: 0, tokens: 50 }, now: clock.now() });
    await clock.advance(250);
    expect((await pending).stopReason).toBe("stop");
    expect(model.calls).toHaveLength(1);
  });

  it("lets a call in once a dead worker's reservation runs out of its lease", async () => {
    const { gate, caller, ledger, clock } = setUp({ policy: tokensCap(1000) });
    const caps = await fillWithReservation(ledger, clock.now(), "dead", 30_000);
    const model = fakeModel(100);
    const start = clock.now();
    const pending = call(gate.wrap(model.fn, () => caller));
    await pollUntilSettled(clock, pending);
    expect((await pending).stopReason).toBe("stop");
    expect(clock.now() - start).toBeGreaterThanOrEqual(30_000);
    expect(clock.now() - start).toBeLessThanOrEqual(30_250);
    const [u] = await ledger.usage(caps, clock.now());
    expect(u?.reserved.tokens).toBe(0);
  });

  it("waits out the lease of a reservation made after it began waiting (its worker died)", async () => {
    const { gate, caller, ledger, clock } = setUp({ policy: tokensCap(1000) });
    const caps = await fillWithReservation(ledger, clock.now(), "live", 60_000);
    const model = fakeModel(100);
    const start = clock.now();
    const pending = call(gate.wrap(model.fn, () => caller));
    await clock.sleeping(250);
    await clock.advance(5_000);
    // The live call ends; another worker's call reserves and its worker dies: its lease ends at
    // start + 5 s + 60 s, after the first lease of waiting.
    await ledger.settle({ callId: "live", caps, actual: { usd: 0, tokens: 100 }, now: clock.now() });
    await ledger.reserve({
      callId: "dead",
      caps,
      amount: { usd: 0, tokens: 900 },
      now: clock.now(),
      ttlMs: 60_000,
    });
    await pollUntilSettled(clock, pending);
    expect((await pending).stopReason).toBe("stop");
    expect(clock.now() - start).toBeGreaterThanOrEqual(65_000);
    expect(model.calls).toHaveLength(1);
  });

  it("warns once per cap and period past 80 %, and again in the next period", async () => {
    const { gate, caller, clock, posts } = setUp({ policy: tokensCap(1000) });
    const wrapped = gate.wrap(fakeModel(300).fn, () => caller);
    for (let i = 0; i < 3; i++) {
      await call(wrapped);
      await clock.advance(0);
    }
    expect(posts).toEqual([
      "⚠️ 90 % of your daily budget is used (900 tokens of 1k tokens). It resets at Fri 2026-12-04 00:00 UTC (in 14 h).",
    ]);
    await clock.advance(24 * 3600_000);
    for (let i = 0; i < 3; i++) {
      await call(wrapped);
      await clock.advance(0);
    }
    expect(posts).toHaveLength(2);
  });

  it("starts a new day at midnight in the ledger's zone, not UTC's", async () => {
    // 22:30 UTC on 3 Dec is 23:30 in Berlin.
    const { gate, caller, clock } = setUp({
      policy: tokensCap(100),
      timeZone: "Europe/Berlin",
      start: Date.UTC(2026, 11, 3, 22, 30),
    });
    const wrapped = gate.wrap(fakeModel(100).fn, () => caller);
    await call(wrapped);
    await clock.advance(0);
    expect((await call(wrapped)).errorMessage).toContain("resets at Fri 2026-12-04 00:00 CET (in 30 min)");
    await clock.advance(30 * 60_000);
    expect((await call(wrapped)).stopReason).toBe("stop");
  });

  it("asks the admins at a cap: ✅ lets the rest of that run pass, the next run asks again", async () => {
    const { gate, caller, clock, approvals, posts, edits } = setUp({ policy: tokensCap(100), admins: true });
    const model = fakeModel(100);
    const wrapped = gate.wrap(model.fn, () => caller);
    await call(wrapped);
    await clock.advance(0);
    const run = new AbortController();
    const pending = call(wrapped, run.signal);
    await clock.sleeping(30_000);
    expect(posts.at(-1)).toContain(
      "Their daily budget is used up (asked by alice): 100 tokens of 100 tokens",
    );
    await approveAsAda(approvals, caller.threadKey, clock.now());
    expect((await pending).stopReason).toBe("stop");
    expect(edits.get("m1")).toContain("✅ One more run allowed by ada.");
    // The same run goes on past the cap without asking again…
    expect((await call(wrapped, run.signal)).stopReason).toBe("stop");
    expect(await approvals.pendingIn(caller.threadKey)).toHaveLength(0);
    // …and a new run asks again; no answer within the wait refuses it.
    const next = call(wrapped, new AbortController().signal);
    await clock.sleeping(30_000);
    await clock.advance(30_000);
    const m = await next;
    expect(m.errorMessage).toContain("Not run: your daily budget is used up");
    expect(edits.get("m2")).toContain("No admin answered in time");
    expect(model.calls).toHaveLength(3);
  });

  it("lets an admin's ✅ cover the asker's calls of that run only, not other people's follow-ups", async () => {
    const { gate, caller, clock, approvals } = setUp({
      policy: { limits: { channel: { day: { tokens: 100 } } }, members: [] },
      admins: true,
    });
    const model = fakeModel(100);
    let who = caller;
    const wrapped = gate.wrap(model.fn, () => who);
    await call(wrapped);
    await clock.advance(0);
    const run = new AbortController();
    const allowed = call(wrapped, run.signal);
    await clock.sleeping(30_000);
    await approveAsAda(approvals, caller.threadKey, clock.now());
    expect((await allowed).stopReason).toBe("stop");
    // Bob's follow-up is taken by the same run: it is asked for anew, and refused without an answer.
    who = { ...caller, userKey: "telegram:43", user: { id: "43", name: "bob" } };
    const bobs = call(wrapped, run.signal);
    await clock.sleeping(30_000);
    expect(await approvals.pendingIn(caller.threadKey)).toHaveLength(1);
    await clock.advance(30_000);
    expect((await bobs).errorMessage).toContain("this channel's daily budget is used up");
  });

  it("does not ask the admins for a run that was stopped, and ends the call as stopped", async () => {
    const { gate, caller, clock, approvals, posts } = setUp({ policy: tokensCap(100), admins: true });
    const wrapped = gate.wrap(fakeModel(100).fn, () => caller);
    await call(wrapped);
    await clock.advance(0);
    const run = new AbortController();
    run.abort();
    const m = await call(wrapped, run.signal);
    expect(m.stopReason).toBe("aborted");
    expect(posts).toEqual([]);
    expect(await approvals.pendingIn(caller.threadKey)).toHaveLength(0);
  });

  it("counts a call that waited past midnight in the day it was let in", async () => {
    const { gate, caller, ledger, clock } = setUp({
      policy: tokensCap(1000),
      start: Date.UTC(2026, 11, 3, 23, 59, 59),
    });
    const caps = await fillWithReservation(ledger, clock.now(), "other", 60_000);
    const pending = call(gate.wrap(fakeModel(100).fn, () => caller));
    await clock.sleeping(250);
    await clock.advance(2_000);
    await ledger.settle({ callId: "other", caps, actual: { usd: 0, tokens: 10 }, now: clock.now() });
    await pollUntilSettled(clock, pending);
    await clock.advance(0);
    const rows = await ledger.exportUsage(Date.UTC(2026, 11, 3), Date.UTC(2026, 11, 5));
    const users = rows.filter((r) => r.scope === "user" && r.model === "alpha/one");
    expect(users.map((r) => [r.day, r.tokens])).toEqual([["2026-12-04", 100]]);
  });

  it("settles again after a failed settle, so no spend is lost to a passing outage", async () => {
    const { gate, caller, ledger, clock } = setUp({ policy: tokensCap(1000), failingSettles: 2 });
    await call(gate.wrap(fakeModel(100).fn, () => caller));
    await clock.advance(0);
    await clock.advance(1_000);
    await clock.advance(4_000);
    const u = await userDay(ledger, clock.now());
    expect(u?.spent.tokens).toBe(100);
  });
});
