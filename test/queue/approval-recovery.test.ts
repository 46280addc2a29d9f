/**
 * What the chat shows when a worker dies around an approval request or a notice, on a test clock:
 * two workers, one thread, the real approval extension on the worker's thread host, the real
 * renderer on a recording chat (or the real Slack / Discord adapter over its wire fake), the render
 * journal in memory. A worker "dies" at a chosen instant (none of its calls to the state, the
 * store, the journal, the approval store or the chat comes back); the next worker takes the thread.
 * Whatever the instant, the request shows once and ends saying how it ended, it is settled in the
 * approval store, a notice shows once, and nothing stays owed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import { finishOwedRender } from "../../src/adapters/render/owed.js";
import { MemoryRateLimiter } from "../../src/adapters/render/rate-limiter.js";
import { RunRenderer } from "../../src/adapters/render/run-renderer.js";
import type { ChannelAdapter, Platform } from "../../src/adapters/types.js";
import { Agent } from "../../src/agent/agent.js";
import { silentLogger } from "../../src/agent/logger.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import { createApprovalExtension } from "../../src/extensions/approval/extension.js";
import type { ApprovalStore } from "../../src/extensions/approval/types.js";
import { ExtensionRunner } from "../../src/extensions/runner.js";
import type { ExtensionTool } from "../../src/extensions/types.js";
import { ThreadHost } from "../../src/gateway/app/thread-host.js";
import type { Logger } from "../../src/gateway/log.js";
import { MemoryApprovalStore } from "../../src/queue/approvals/memory-store.js";
import { LocalControlBus } from "../../src/queue/control-bus.js";
import { MemoryThreadState } from "../../src/queue/embedded/memory-thread-state.js";
import { MemoryRenderJournal, type RenderJournal } from "../../src/queue/state/render-journal.js";
import { FileSessionStore } from "../../src/queue/store/file-store.js";
import type { AgentFactory, Runtime } from "../../src/queue/types.js";
import { plainInboundFormatter } from "../../src/queue/worker/item-messages.js";
import { WorkerCore } from "../../src/queue/worker/worker-core.js";
import { createDiscordHarness } from "../adapters/harness/discord.js";
import { CHANNEL, createSlackHarness, USERS } from "../adapters/harness/slack.js";
import { RecordingAdapter } from "../adapters/support/recording-adapter.js";
import { GENERAL_ID, GUILD_ID } from "../fakes/discord/server.js";
import { TEAM_ID } from "../fakes/slack/world.js";
import { ManualClock } from "../support/manual-clock.js";
import { lastUserText, ScriptedStream } from "../support/scripted-stream.js";
import { inbound, resolveTestModel } from "./support/harness.js";
import { type Death, Mortal } from "./support/mortal.js";

const TTL = 900;
const T = "web:approval";
const REQUEST = "🔐 Approval needed: `danger`";
const STOPPED = "⏹️ Cancelled: the worker waiting for this decision stopped, so the call was not run.";

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A tool that needs approval and records what it ran. */
function dangerTool(ran: string[]): ExtensionTool {
  return {
    name: "danger",
    label: "danger",
    description: "does something dangerous",
    parameters: Type.Object({ command: Type.String() }),
    approval: "always",
    async execute(_id, params) {
      ran.push((params as { command: string }).command);
      return { content: [{ type: "text", text: "ran" }], details: {} };
    },
  };
}

/** Calls `danger` for a user message, then answers `ack <question>`. */
const toolFirst = () =>
  new ScriptedStream((call) => {
    const last = call.context.messages.at(-1);
    if (last?.role === "user") return { toolCalls: [{ name: "danger", args: { command: "rm x" } }] };
    return `ack ${lastUserText(call)}`;
  });

/** The request's post (text) or an edit of it. */
const requestCall = (method: string, args: unknown[]) =>
  (method === "post" && String(args[1]).startsWith(REQUEST)) ||
  (method === "edit" && String(args[1]).startsWith(REQUEST));

/** A real platform adapter over a wire fake, instead of the recording chat. */
interface Wire {
  adapter: ChannelAdapter;
  clock: ManualClock;
  threadKey: string;
  platform: Platform;
  /** The bot's messages in the thread as a user sees them, oldest first. */
  shown(): string[];
}

function cluster(o: { findPosted?: boolean; idempotentPosts?: boolean; wire?: Wire } = {}) {
  const clock = o.wire?.clock ?? new ManualClock(Date.UTC(2024, 4, 1, 14, 0, 0));
  const t = o.wire?.threadKey ?? T;
  const state = new MemoryThreadState({ clock });
  const dir = mkdtempSync(join(tmpdir(), "sb-approval-"));
  dirs.push(dir);
  const store = new FileSessionStore({
    dataDir: dir,
    fenceCheck: (threadKey, fence) => state.holds(threadKey, fence.token),
  });
  const journal = new MemoryRenderJournal({ holds: (t, token) => state.holds(t, token) });
  const chat = new RecordingAdapter(clock, o.idempotentPosts ? { idempotentPosts: true } : {}, {
    findPosted: o.findPosted === true,
  });
  const approvals = new MemoryApprovalStore();
  const limiter = new MemoryRateLimiter(clock);
  const errors: string[] = [];
  const ran: string[] = [];
  const worker = (name: string, stream: ScriptedStream, death?: Death) => {
    const mortal = new Mortal(death);
    const adapter = mortal.wrap<ChannelAdapter>(o.wire?.adapter ?? chat);
    const runner = new ExtensionRunner({ logger: silentLogger });
    const loaded = runner.load([
      {
        name: "approval",
        factory: createApprovalExtension({
          store: mortal.wrap<ApprovalStore>(approvals),
          isAdmin: (_p, id) => id === "UADMIN",
          clock,
        }),
      },
    ]);
    const factory: AgentFactory = async (ctx) => {
      await loaded;
      const host = new ThreadHost(
        {
          runtime: {} as Runtime,
          store,
          adapterOf: () => adapter,
          defaultModel: () => undefined,
          logger: silentLogger as unknown as Logger,
        },
        {
          threadKey: ctx.threadKey,
          platform: o.wire?.platform ?? "web",
          user: () => ({ id: "U1", name: "alice" }),
          ...(ctx.appendEntry ? { appendEntry: ctx.appendEntry } : {}),
          ...(ctx.renderLog ? { renderLog: ctx.renderLog } : {}),
        },
      );
      const thread = runner.bind(host);
      const agent = new Agent({
        initialState: {
          model: resolveTestModel("scripted/scripted-1") as NonNullable<ReturnType<typeof resolveTestModel>>,
          thinkingLevel: "off",
          messages: ctx.messages,
          tools: thread.tools([dangerTool(ran)]),
        },
        streamFn: stream.streamFn,
        convertToLlm,
        ...thread.agentHooks(),
      });
      thread.attach(agent);
      return { agent, onSessionEvent: (event) => thread.emitSession(event) };
    };
    const core = new WorkerCore({
      state: mortal.wrap(state),
      store: mortal.wrap(store),
      journal: mortal.wrap<RenderJournal>(journal),
      finishOwed: (threadKey, snapshot, log, saved, posted) =>
        finishOwedRender(
          { adapter, threadKey, clock, limiter, logger: silentLogger },
          snapshot,
          log,
          saved,
          posted,
        ),
      factory,
      sinks: (threadKey, _runId, log) =>
        new RunRenderer({ adapter, threadKey, clock, limiter, editIntervalMs: 500, ...(log ? { log } : {}) }),
      format: plainInboundFormatter,
      resolveModel: resolveTestModel,
      fenceKey: (t) => `lease:${t}`,
      leaseTtlMs: TTL,
      collectDebounceMs: 100,
      controlPollMs: 250,
      compaction: undefined,
      clock,
      onError: (e, context) => {
        if (!mortal.dead) errors.push(`${name} ${context}: ${e instanceof Error ? e.message : String(e)}`);
      },
      bus: new LocalControlBus(),
      rewake: async () => {},
    });
    return { core, mortal };
  };
  const deliver = (text: string) =>
    state.append(
      t,
      { mode: "steer", kind: "message", message: inbound(t, text) },
      { cap: 20, dropPolicy: "new" },
    );
  /** Moves the clock in steps until `done` settles, letting real file I/O land between steps. */
  const runUntil = async (done: Promise<unknown>) => {
    let over = false;
    void done.finally(() => {
      over = true;
    });
    for (let i = 0; i < 2000 && !over; i++) {
      await clock.advance(50);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(over).toBe(true);
    await done;
  };
  /** Lets A's calls land (real file I/O) until `until` resolves, on a still clock. */
  const settle = async (until: Promise<unknown>) => {
    let over = false;
    void until.then(() => {
      over = true;
    });
    for (let i = 0; i < 2000 && !over; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(over).toBe(true);
  };
  /** The request messages the chat shows. */
  const shown = () => o.wire?.shown() ?? chat.messages();
  const requests = () => shown().filter((m) => m.startsWith(REQUEST));
  return {
    t,
    state,
    clock,
    chat,
    journal,
    approvals,
    errors,
    ran,
    worker,
    deliver,
    runUntil,
    settle,
    shown,
    requests,
  };
}

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
    closers.push(() => slack.close());
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
    closers.push(() => discord.close());
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
